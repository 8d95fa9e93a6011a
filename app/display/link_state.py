"""What a process knows of one link's displays, folded from the wire messages both roles see."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.display.subscription import Subscription

Message = dict[str, object]
RECENT_WINS = 25
STATUSES = ("ok", "degraded")
# A `status` message's in-play fields (docs/api.md, Displays); absent: unchanged.
IN_PLAY_KEYS = ("in_play", "reason", "since", "tables")
IN_PLAY: Message = {"in_play": True, "reason": None, "since": None, "tables": []}
WIN_STATES = ("pending", "final", "void")
# A must-hit-by level's fields on its meter (docs/api.md, Displays); absent: unchanged.
LEVEL_KEYS = ("must_hit_from", "must_hit_by", "commitment")


def encode(message: Mapping[str, object]) -> str:
    """The one serialisation of a message: compact, key order as built."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class LinkState:
    """What this process knows of one link, enough to build a snapshot."""

    link: str
    currency: str
    names: dict[str, str]  # meter id -> display name, in display order
    values: dict[str, str | None]
    seq: int
    status: str = "ok"
    detail: str = ""
    pending: dict[str, Message] = field(default_factory=dict)  # award_id -> win
    recent: deque[Message] = field(default_factory=lambda: deque(maxlen=RECENT_WINS))
    subscribers: set[Subscription] = field(default_factory=set)
    dirty: dict[str, str] = field(default_factory=dict)  # writer: meters not yet sent
    flush: asyncio.TimerHandle | None = None
    snapshot: str | None = None  # cached serialised snapshot for the current seq
    local_status: tuple[str, str] | None = None  # display role: our own feed is down
    heard_at: float | None = None  # display role: loop time of the last writer message
    in_play: Message = field(default_factory=lambda: dict(IN_PLAY))
    levels: dict[str, Message] = field(default_factory=dict)  # meter -> LEVEL_KEYS
    name: str = ""  # the link's display name (the floor file's links.name), "" if none

    def meter_list(self) -> list[Message]:
        return [
            {
                "meter": meter,
                "name": name,
                "value": self.values.get(meter),
                **self.levels.get(meter, {}),
            }
            for meter, name in self.names.items()
        ]

    def snapshot_message(self) -> Message:
        status, detail = self.local_status or (self.status, self.detail)
        return {
            "type": "snapshot",
            "seq": self.seq,
            "link": self.link,
            "name": self.name or self.link,
            "currency": self.currency,
            "meters": self.meter_list(),
            "status": status,
            "detail": detail,
            "pending": list(self.pending.values()),
            "recent_wins": list(self.recent),
            **self.in_play,
        }

    def apply(self, message: Mapping[str, object]) -> None:
        """Fold one message into the state (both roles use this, so they agree)."""
        kind = message["type"]
        if kind == "meters":
            for entry in entries(message.get("meters")):
                meter = str(entry["meter"])
                self.names.setdefault(meter, str(entry.get("name", meter)))
                value = entry.get("value")
                self.values[meter] = None if value is None else str(value)
                if "must_hit_by" in entry:
                    self.levels[meter] = {k: entry.get(k) for k in LEVEL_KEYS}
        elif kind == "win":
            win = {k: v for k, v in message.items() if k not in ("type", "seq", "link")}
            award = str(win.get("award_id"))
            if win.get("state") == "final":
                # An award is listed once (docs/design.md, Broadcast: final once): a second
                # final for it (a restarted writer, say) replaces the first.
                self.pending.pop(award, None)
                if any(str(w.get("award_id")) == award for w in self.recent):
                    kept = [w for w in self.recent if str(w.get("award_id")) != award]
                    self.recent = deque(kept, maxlen=RECENT_WINS)
                self.recent.appendleft(win)
            elif win.get("state") == "void":
                # docs/design.md, the watermark: "jackpot pending" ends; nobody won it.
                self.pending.pop(award, None)
            else:
                self.pending[award] = win
        elif kind == "status":
            self.status = str(message.get("status", "ok"))
            self.detail = str(message.get("detail", ""))
            if "in_play" in message:
                self.in_play = {k: message.get(k) for k in IN_PLAY_KEYS}
        elif kind == "snapshot":
            self.currency = str(message.get("currency", self.currency))
            self.name = str(message.get("name", self.name))
            self.names, self.values, self.levels = {}, {}, {}
            self.apply({"type": "meters", "meters": message.get("meters")})
            self.status = str(message.get("status", "ok"))
            self.detail = str(message.get("detail", ""))
            self.pending = {str(w["award_id"]): w for w in entries(message.get("pending"))}
            self.recent = deque(entries(message.get("recent_wins")), maxlen=RECENT_WINS)
            known = "in_play" in message
            self.in_play = {k: message.get(k) for k in IN_PLAY_KEYS} if known else dict(IN_PLAY)
        if "seq" in message:
            self.seq = int(str(message["seq"]))
        self.snapshot = None


def entries(value: object) -> list[Message]:
    return (
        [dict(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []
    )
