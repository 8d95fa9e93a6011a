"""Signs that answer back: what each screen says it shows, against what is committed.

A display page acknowledges what it draws with a `shown` message (docs/api.md
"Displays"); `Screens` keeps, per screen and bounded in number and size, its link, name,
address, the last ack's time, seq and values, and judges each screen against its link's
committed state (the broadcaster's read model): lag, variance, stale, a final win not
shown in time. Time is a parameter (epoch ms) everywhere here; the clock and the
broadcaster's stream are read by app/display/screen_watch.py. Nothing here is money
decided: acks are not journaled, and the history behind the sign report lives as long
as the process (docs/api.md "Signs").
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.state.timefmt import format_time
from jackpot.money import MoneyError, format_money, parse_money

STALE_MS = 15_000  # no ack for this long: the screen is frozen or cut off
VARIANCE_FOR_MS = 30_000  # out of variance this long: flagged
MAX_SCREENS = 1_000
MAX_METERS = 32
MAX_WINS = 16  # award ids a `shown` may list (the newest the page celebrated)
MAX_HISTORY = 2_000  # variance transitions kept per screen (the report's source)
MAX_WIN_RECORDS = 256
MAX_LINK_WINS = 64
MAX_SEQ_TIMES = 512
MIN_ACK_GAP_MS = 100  # acks closer than this are dropped: a page sends a few a second
SCREEN_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")

LinkState = Callable[[str], Mapping[str, Any] | None]  # Broadcaster.link_state


@dataclass(frozen=True, slots=True)
class Shown:
    """A well-formed `shown` message: the seq drawn, each meter's value, final wins."""

    seq: int
    values: dict[str, int]  # meter -> micro-units
    wins: tuple[str, ...]


def read_shown(message: object) -> Shown | None:
    """The `shown` of a decoded message, or None: anything else is not one."""
    if not isinstance(message, dict) or set(message) != {"type", "seq", "values", "wins"}:
        return None
    seq, values, wins = message["seq"], message["values"], message["wins"]
    if message["type"] != "shown" or type(seq) is not int or seq < 0:
        return None
    if not isinstance(values, list) or len(values) > MAX_METERS:
        return None
    if not isinstance(wins, list) or len(wins) > MAX_WINS:
        return None
    shown: dict[str, int] = {}
    for item in values:
        if not isinstance(item, dict) or set(item) != {"meter", "value"}:
            return None
        meter, value = item["meter"], item["value"]
        if not isinstance(meter, str) or not isinstance(value, str) or len(meter) > 64:
            return None
        try:
            shown[meter] = parse_money(value)
        except MoneyError:
            return None
    if not all(isinstance(w, str) and 0 < len(w) <= 128 for w in wins):
        return None
    return Shown(seq, shown, tuple(wins))


def screen_name(text: str | None) -> str:
    return _UNPRINTABLE.sub("", text or "")[:64]


@dataclass(slots=True)
class WinSeen:
    award: str
    final_at: int  # when the server sent it final
    shown_at: int | None = None


@dataclass(slots=True)
class Screen:
    id: str
    link: str
    name: str
    address: str
    connected_at: int
    connections: int = 0
    heard_at: int = 0  # the last ack, or the connection
    acked_at: int | None = None
    seq: int | None = None
    values: dict[str, int] = field(default_factory=dict)
    acks: int = 0
    dropped: int = 0  # acks too close together, or not well-formed
    variance: int | None = None  # the last judged, micro-units
    out_since: int | None = None  # out of variance since
    # (since, out of variance, worst variance while so): what the report reads.
    history: deque[tuple[int, bool, int]] = field(default_factory=lambda: deque(maxlen=MAX_HISTORY))
    wins: deque[WinSeen] = field(default_factory=lambda: deque(maxlen=MAX_WIN_RECORDS))


@dataclass(slots=True)
class LinkTrack:
    """What a link's stream said and when: each seq's first sight, final wins."""

    seqs: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=MAX_SEQ_TIMES))
    wins: deque[tuple[str, int]] = field(default_factory=lambda: deque(maxlen=MAX_LINK_WINS))


class Screens:
    """Every screen of this process (and, at a writer, those display processes report)."""

    def __init__(
        self,
        link_state: LinkState,
        *,
        sign_variance: int = parse_money("50.00"),
        win_shown_within_ms: int = 30_000,
        max_screens: int = MAX_SCREENS,
    ) -> None:
        self.link_state = link_state
        self.sign_variance = sign_variance
        self.win_shown_within_ms = win_shown_within_ms
        self.max_screens = max_screens
        self.screens: dict[str, Screen] = {}
        self.links: dict[str, LinkTrack] = {}
        self.remote: dict[str, dict[str, Any]] = {}  # id -> a display process's view row

    # -- what the websocket and the stream tell ----------------------------------------

    def connect(self, screen_id: str | None, link: str, name: str, address: str, now: int) -> str:
        """A page's websocket opened: its record (a new one for an id not given)."""
        if screen_id is None or not SCREEN_ID.fullmatch(screen_id):
            screen_id = f"anon-{now}-{len(self.screens)}"
        screen = self.screens.get(screen_id)
        if screen is None or screen.link != link:
            self._make_room()
            screen = self.screens[screen_id] = Screen(screen_id, link, name, address, now)
            screen.history.append((now, False, 0))
        screen.name, screen.address, screen.heard_at = name or screen.name, address, now
        screen.connected_at = now
        screen.connections += 1
        return screen_id

    def disconnect(self, screen_id: str) -> None:
        screen = self.screens.get(screen_id)
        if screen is not None:
            screen.connections = max(0, screen.connections - 1)

    def ack(self, screen_id: str, shown: Shown | None, now: int) -> bool:
        """A message from the page: a well-formed `shown` is taken (at most one per
        MIN_ACK_GAP_MS); False for anything else (the socket is closed)."""
        screen = self.screens.get(screen_id)
        if screen is None:
            return True
        if shown is None:
            screen.dropped += 1
            return False
        if screen.acked_at is not None and now - screen.acked_at < MIN_ACK_GAP_MS:
            screen.dropped += 1
            return True
        screen.acked_at = screen.heard_at = now
        screen.seq, screen.values = shown.seq, shown.values
        screen.acks += 1
        for win in screen.wins:
            if win.shown_at is None and win.award in shown.wins:
                win.shown_at = now
        self._judge(screen, now)
        return True

    def seen(self, link: str, seq: int, now: int, win: str | None = None) -> None:
        """The link's stream sent `seq` (a final `win` of that award) at `now`."""
        track = self.links.setdefault(link, LinkTrack())
        if not track.seqs or seq > track.seqs[-1][0]:
            track.seqs.append((seq, now))
        if win is not None:
            track.wins.append((win, now))
            for screen in self.screens.values():
                if screen.link == link and screen.connections:
                    screen.wins.append(WinSeen(win, now))

    def check(self, now: int) -> None:
        """Judge every screen now (the watch's ticker: once a second)."""
        for screen in self.screens.values():
            self._judge(screen, now)

    # -- judging ---------------------------------------------------------------------

    def _committed(self, link: str) -> tuple[int | None, dict[str, int]]:
        state = self.link_state(link)
        if state is None:
            return None, {}
        values: dict[str, int] = {}
        for m in state.get("meters") or []:
            if m.get("value") is not None:
                values[m["meter"]] = parse_money(str(m["value"]))
        seq = state.get("seq")
        return (seq if isinstance(seq, int) else None), values

    def _variance(self, screen: Screen) -> int | None:
        if screen.seq is None:
            return None
        _, committed = self._committed(screen.link)
        return max((abs(screen.values.get(m, 0) - v) for m, v in committed.items()), default=0)

    def _judge(self, screen: Screen, now: int) -> None:
        variance = screen.variance = self._variance(screen)
        out = variance is not None and variance > self.sign_variance
        since, was_out, worst = screen.history[-1]
        if out != was_out:
            screen.history.append((now, out, variance or 0))
            screen.out_since = now if out else None
        elif out and variance is not None and variance > worst:
            screen.history[-1] = (since, out, variance)

    def _make_room(self) -> None:
        while len(self.screens) >= self.max_screens:
            # The screen heard from longest ago goes, a disconnected one first.
            oldest = min(self.screens.values(), key=lambda s: (s.connections > 0, s.heard_at))
            del self.screens[oldest.id]

    # -- views -----------------------------------------------------------------------

    def late_win(self, screen: Screen, now: int) -> WinSeen | None:
        """The newest final win the screen had to show and did not show in time."""
        bound = self.win_shown_within_ms
        for win in reversed(screen.wins):
            shown_late = win.shown_at is not None and win.shown_at - win.final_at > bound
            missing = win.shown_at is None and now - win.final_at > bound
            if win.shown_at is not None and not shown_late:
                return None
            if shown_late or missing:
                return win
        return None

    def view(self, screen: Screen, now: int) -> dict[str, Any]:
        self._judge(screen, now)  # as of now, not of the last ack or tick
        link_seq, _ = self._committed(screen.link)
        behind = None if screen.seq is None or link_seq is None else max(0, link_seq - screen.seq)
        lag_ms = None
        if behind == 0:
            lag_ms = 0
        elif behind is not None and screen.seq is not None:
            # Since the server first sent a message the screen has not acknowledged.
            track = self.links.get(screen.link)
            first = next((t for s, t in (track.seqs if track else ()) if s > screen.seq), None)
            lag_ms = None if first is None else max(0, now - first)
        stale = now - screen.heard_at > STALE_MS
        out_since = screen.out_since
        out = out_since is not None and now - out_since > VARIANCE_FOR_MS
        late = self.late_win(screen, now)
        flags = [f for f, on in (("stale", stale), ("variance", out), ("win", late)) if on]
        return {
            "screen": screen.id, "link": screen.link, "name": screen.name,
            "address": screen.address, "connected": screen.connections > 0,
            "acked_at": None if screen.acked_at is None else format_time(screen.acked_at),
            "seq": screen.seq, "seq_behind": behind,
            "lag_ms": lag_ms,
            "values": [{"meter": m, "value": format_money(v)} for m, v in screen.values.items()],
            "variance": None if screen.variance is None else format_money(screen.variance),
            "out_of_variance_since": None if out_since is None else format_time(out_since),
            "stale": stale,
            "late_win": None if late is None else late.award,
            "flagged": bool(flags), "flags": flags, "acks": screen.acks,
            "dropped": screen.dropped,
        }  # fmt: skip

    def views(self, now: int) -> list[dict[str, Any]]:
        rows = [self.view(s, now) for s in self.screens.values()]
        rows += [r for r in self.remote.values() if r["screen"] not in self.screens]
        return sorted(rows, key=lambda r: (r["link"], r["name"], r["screen"]))

    def report(self, start: int, end: int, now: int) -> list[dict[str, Any]]:
        """Per screen over [start, end): time in and out of variance, the worst
        variance, and the final wins it had to show with their delays."""
        rows = []
        for screen in self.screens.values():
            inside = outside = worst = 0
            marks = list(screen.history)
            for i, (since, out, most) in enumerate(marks):
                until = marks[i + 1][0] if i + 1 < len(marks) else now
                span = max(0, min(until, end) - max(since, start))
                if out:
                    outside += span
                    worst = max(worst, most) if span else worst
                else:
                    inside += span
            wins = [_win_row(w) for w in screen.wins if start <= w.final_at < end]
            rows.append({
                "screen": screen.id, "link": screen.link, "name": screen.name,
                "in_variance_ms": inside, "out_of_variance_ms": outside,
                "worst_variance": format_money(worst), "wins": wins,
            })  # fmt: skip
        return sorted(rows, key=lambda r: (r["link"], r["name"], r["screen"]))


def _win_row(win: WinSeen) -> dict[str, Any]:
    shown = win.shown_at
    return {
        "award": win.award,
        "final_at": format_time(win.final_at),
        "shown_at": None if shown is None else format_time(shown),
        "delay_ms": None if shown is None else shown - win.final_at,
    }


def counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Screens, stale ones, and flagged ones by reason (metrics)."""
    total = stale = 0
    flagged = {"stale": 0, "variance": 0, "win": 0}
    for row in rows:
        total += 1
        stale += bool(row["stale"])
        for flag in row["flags"]:
            flagged[flag] += 1
    return {"screens": total, "stale": stale, **{f"flagged_{k}": v for k, v in flagged.items()}}
