"""Broadcast of meter values, wins and link status to display screens.

The writer task calls `meters`, `win` and `status` on its hot path: they are
synchronous, never await a client and never raise because a display or Redis is slow.
Every message gets the link's next `seq` here, in the writer, is serialised once, and
the same `str` goes to every local subscriber and (through the backend) to every other
process, so a display sees the same seq for the same message whichever process serves
it.

Roles: a Broadcaster whose backend has `role == "writer"` (`MemoryBackend`, or
`RedisBackend(url)`) originates messages; one whose backend has `role == "display"`
(`RedisBackend(url, role="display")`) only relays what the writer process published.

Wire format (every message has `type`, `seq` and `link`):

- `snapshot`: the whole link (`currency`, `meters`, `status`, `detail`, `pending`,
  `recent_wins` newest first); its `seq` is the current seq and the base for what
  follows. It is always the first message, and may come again mid-stream (after a
  display process lost and regained its feed): it then replaces everything.
- `meters`: every meter of the link with its latest value, at most one per
  `coalesce_ms`.
- `win`: `state` `pending` then `final` (with `amount`), `award_id`, `table`, `round`,
  `box`, `meter`, `hand`, `dealt_at`; or, after `pending`, `void` (no `amount`): a void
  of its box cancelled it, paid to nobody.
- `status`: `ok` or `degraded` with a `detail`.
- `ping`: every `ping_s`.

After the snapshot each message's seq is the previous one plus one, with one
exception: a `status` `degraded` whose seq equals the previous message's seq was
produced by the display server itself (it lost the jackpot controller's feed); it does
not consume a seq. A fresh `snapshot` follows when the feed is back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Backend",
    "Broadcaster",
    "Feed",
    "MemoryBackend",
    "Role",
    "SlowConsumer",
    "Subscription",
]

log = logging.getLogger("jackpot.broadcast")

Role = Literal["writer", "display"]
Message = dict[str, object]
RECENT_WINS = 25
STATUSES = ("ok", "degraded")
WIN_STATES = ("pending", "final", "void")


def encode(message: Mapping[str, object]) -> str:
    """The one serialisation of a message: compact, key order as built."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class SlowConsumer(Exception):
    """The subscriber fell `queue_size` messages behind and was dropped."""


class Subscription:
    """One display's bounded queue of serialised messages (an async iterator).

    A deque and one waiter future rather than an asyncio.Queue: the fan-out to
    thousands of displays is the broadcast's hot loop."""

    __slots__ = ("link", "slow", "closed", "_queue", "_size", "_waiter", "_on_close", "_on_slow")

    def __init__(self, link: str, size: int, on_close: Callable[[Subscription], None]) -> None:
        self.link = link
        self.slow = False
        self.closed = False
        self._queue: deque[str] = deque()
        self._size = size
        self._waiter: asyncio.Future[None] | None = None
        self._on_close = on_close
        self._on_slow: Callable[[], object] | None = None

    def on_slow(self, callback: Callable[[], object]) -> None:
        """Called once if the subscription is dropped for being slow (e.g. to cancel a
        send stuck on a full socket)."""
        self._on_slow = callback

    def push(self, text: str) -> bool:
        """Queue one message; False if the subscription is (now) closed."""
        if self.closed:
            return False
        if len(self._queue) >= self._size:
            self.slow = True
            self.close()
            if self._on_slow is not None:
                self._on_slow()
            return False
        self._queue.append(text)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.slow:
            self._queue.clear()  # stale now: the client will reconnect to a snapshot
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        self._on_close(self)

    def pending(self) -> int:
        return len(self._queue)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> str:
        while not self._queue:
            if self.closed:
                if self.slow:
                    raise SlowConsumer(f"more than {self._size} messages behind")
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()


class Feed(Protocol):
    """What a backend calls on its Broadcaster."""

    def link_ids(self) -> list[str]: ...

    def state_text(self, link: str) -> str | None: ...

    def receive(self, link: str, text: str) -> bool: ...

    def restore(self, link: str, text: str) -> None: ...

    def feed_lost(self, detail: str) -> None: ...


class Backend(Protocol):
    """Carries the writer's messages to the other processes (if any)."""

    role: Role

    async def start(self, feed: Feed) -> None: ...

    async def stop(self) -> None: ...

    def publish(self, link: str, text: str | None) -> None:
        """Writer role: ship one message (None: only the stored state changed).

        Must never block or raise: failures are counted and dropped."""
        ...

    def request_resync(self, link: str) -> None:
        """Display role: re-read the link's stored state when the feed looks stale."""
        ...


class MemoryBackend:
    """In-process broadcast: the writer's messages only go to this process's displays."""

    role: Role = "writer"

    async def start(self, feed: Feed) -> None:
        return None

    async def stop(self) -> None:
        return None

    def publish(self, link: str, text: str | None) -> None:
        return None

    def request_resync(self, link: str) -> None:
        return None


@dataclass(slots=True)
class _Link:
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

    def meter_list(self) -> list[Message]:
        return [
            {"meter": meter, "name": name, "value": self.values.get(meter)}
            for meter, name in self.names.items()
        ]

    def snapshot_message(self) -> Message:
        status, detail = self.local_status or (self.status, self.detail)
        return {
            "type": "snapshot",
            "seq": self.seq,
            "link": self.link,
            "currency": self.currency,
            "meters": self.meter_list(),
            "status": status,
            "detail": detail,
            "pending": list(self.pending.values()),
            "recent_wins": list(self.recent),
        }

    def apply(self, message: Mapping[str, object]) -> None:
        """Fold one message into the state (both roles use this, so they agree)."""
        kind = message["type"]
        if kind == "meters":
            for entry in _entries(message.get("meters")):
                meter = str(entry["meter"])
                self.names.setdefault(meter, str(entry.get("name", meter)))
                value = entry.get("value")
                self.values[meter] = None if value is None else str(value)
        elif kind == "win":
            win = {k: v for k, v in message.items() if k not in ("type", "seq", "link")}
            award = str(win.get("award_id"))
            if win.get("state") == "final":
                # An award is listed once (DESIGN.md, Broadcast: final once): a second
                # final for it (a restarted writer, say) replaces the first.
                self.pending.pop(award, None)
                if any(str(w.get("award_id")) == award for w in self.recent):
                    kept = [w for w in self.recent if str(w.get("award_id")) != award]
                    self.recent = deque(kept, maxlen=RECENT_WINS)
                self.recent.appendleft(win)
            elif win.get("state") == "void":
                # DESIGN.md, the watermark: "jackpot pending" ends; nobody won it.
                self.pending.pop(award, None)
            else:
                self.pending[award] = win
        elif kind == "status":
            self.status = str(message.get("status", "ok"))
            self.detail = str(message.get("detail", ""))
        elif kind == "snapshot":
            self.currency = str(message.get("currency", self.currency))
            self.names, self.values = {}, {}
            self.apply({"type": "meters", "meters": message.get("meters")})
            self.status = str(message.get("status", "ok"))
            self.detail = str(message.get("detail", ""))
            self.pending = {str(w["award_id"]): w for w in _entries(message.get("pending"))}
            self.recent = deque(_entries(message.get("recent_wins")), maxlen=RECENT_WINS)
        if "seq" in message:
            self.seq = int(str(message["seq"]))
        self.snapshot = None


def _entries(value: object) -> list[Message]:
    return (
        [dict(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []
    )


class Broadcaster:
    """Per-link state, seq numbering, coalescing and bounded local fan-out."""

    def __init__(
        self,
        backend: Backend,
        *,
        coalesce_ms: int = 100,
        queue_size: int = 256,
        ping_s: float = 5.0,
    ) -> None:
        self.backend = backend
        self.role: Role = backend.role
        self.coalesce_s = coalesce_ms / 1000
        self.queue_size = queue_size
        self.ping_s = ping_s
        self.stats: dict[str, int] = {
            "messages": 0,  # messages originated (writer) or relayed (display)
            "deliveries": 0,  # message copies queued to local subscribers
            "slow_consumers": 0,  # subscriptions dropped because their queue was full
            "resyncs": 0,  # display role: snapshots re-sent after the feed came back
        }
        self._links: dict[str, _Link] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ticker: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.backend.start(self)
        self._ticker = asyncio.create_task(self._tick(), name="broadcast-ticker")

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
            self._ticker = None
        for state in self._links.values():
            if state.flush is not None:
                state.flush.cancel()
                self._flush_meters(state)
            for sub in list(state.subscribers):
                sub.close()
            state.subscribers.clear()
        await self.backend.stop()

    def configure_link(self, link: str, currency: str, meters: Sequence[tuple[str, str]]) -> None:
        """Declare a link and its meters (id, display name), in display order."""
        state = self._links.get(link)
        names = dict(meters)
        if state is None:
            # A restarted writer must not reuse seqs a display process has already
            # seen: start from the wall clock in ms. Seq stays strictly increasing
            # across restarts as long as a link averages under 1,000 messages/s.
            # A display process knows no seq until it reads the stored state: 0 makes
            # the writer's first message a gap, which fetches that state.
            seq = _now_ms() if self.role == "writer" else 0
            self._links[link] = _Link(link, currency, names, dict.fromkeys(names), seq)
        else:
            state.currency, state.snapshot = currency, None
            state.names = names
            state.values = {meter: state.values.get(meter) for meter in names}
        if self.role == "writer":
            self.backend.publish(link, None)  # store the state for later display processes

    # -- writer side -----------------------------------------------------------------

    def meters(self, link: str, values: Mapping[str, str]) -> None:
        """New meter values (id -> decimal string); sent at most once per coalesce_ms."""
        state = self._writer_link(link)
        state.dirty.update(values)
        if state.flush is None:
            loop = self._loop or asyncio.get_running_loop()
            state.flush = loop.call_later(self.coalesce_s, self._flush_meters, state)

    def flush(self) -> None:
        """Send every link's waiting meter values now (at start: the first display to
        connect gets the values in its snapshot, not after the coalescing window)."""
        for state in self._links.values():
            self._flush_meters(state)

    def win(self, link: str, win: Mapping[str, object]) -> None:
        """A win, sent at once after any meters still waiting (so order is kept)."""
        state = self._writer_link(link)
        if win.get("state") not in WIN_STATES or "award_id" not in win:
            raise ValueError(f"a win needs a state of {WIN_STATES} and an award_id")
        self._flush_meters(state)
        self._originate(state, {"type": "win", "seq": 0, "link": link, **win})

    def status(self, link: str | None, status: str, detail: str = "") -> None:
        """The link's (None: every link's) status as the writer sees it."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        for state in [self._writer_link(link)] if link is not None else self._links.values():
            if (state.status, state.detail) == (status, detail):
                continue
            self._flush_meters(state)
            message = {"type": "status", "seq": 0, "link": state.link}
            self._originate(state, {**message, "status": status, "detail": detail})

    # -- display side ----------------------------------------------------------------

    def subscribe(self, link: str) -> Subscription:
        """A bounded stream of serialised messages, starting with a snapshot (KeyError:
        unknown link)."""
        state = self._links[link]
        sub = Subscription(link, self.queue_size, self._unsubscribe)
        sub.push(self._snapshot_text(state))
        state.subscribers.add(sub)
        return sub

    def link_state(self, link: str) -> dict[str, object] | None:
        state = self._links.get(link)
        if state is None:
            return None
        snapshot = state.snapshot_message()
        del snapshot["type"]
        return snapshot

    def subscriber_count(self, link: str | None = None) -> int:
        links = [self._links[link]] if link is not None else self._links.values()
        return sum(len(state.subscribers) for state in links)

    # -- Feed: what the backend calls ------------------------------------------------

    def link_ids(self) -> list[str]:
        return list(self._links)

    def state_text(self, link: str) -> str | None:
        state = self._links.get(link)
        return None if state is None else self._snapshot_text(state)

    def receive(self, link: str, text: str) -> bool:
        """Display role: one message from the writer. False: a gap, resync the link."""
        message = json.loads(text)
        state = self._links.get(link)
        if state is None:
            return False  # a link we have not seen: take its stored state first
        seq = int(message["seq"])
        if seq <= state.seq:
            return True  # already in our state (published while we were resyncing)
        if seq != state.seq + 1:
            return False
        state.heard_at = self._clock()
        state.apply(message)
        self.stats["messages"] += 1
        self._fan_out(state, text)
        if state.local_status is not None:  # the feed is back: clear our own degraded
            state.local_status = None
            self._fan_out(state, self._snapshot_text(state))
        return True

    def restore(self, link: str, text: str) -> None:
        """Display role: the link's stored state; local clients get it as a snapshot."""
        message = json.loads(text)
        state = self._links.get(link)
        if state is None:
            state = self._links[link] = _Link(link, "", {}, {}, 0)
        state.apply(message)
        state.local_status = None
        state.heard_at = self._clock()
        self.stats["resyncs"] += 1
        self._fan_out(state, self._snapshot_text(state))

    def feed_lost(self, detail: str) -> None:
        """Display role: the writer's feed is gone; tell local clients (seq unchanged)."""
        for state in self._links.values():
            self._degrade(state, detail)

    # -- internals -------------------------------------------------------------------

    def _writer_link(self, link: str) -> _Link:
        if self.role != "writer":
            raise RuntimeError("a display-role Broadcaster only relays the writer's messages")
        return self._links[link]

    def _flush_meters(self, state: _Link) -> None:
        if state.flush is not None:
            state.flush.cancel()
            state.flush = None
        changed = {m: v for m, v in state.dirty.items() if state.values.get(m) != v}
        state.dirty.clear()
        if changed:
            state.apply(
                {"type": "meters", "meters": [{"meter": m, "value": v} for m, v in changed.items()]}
            )
            self._originate(
                state,
                {"type": "meters", "seq": 0, "link": state.link, "meters": state.meter_list()},
            )

    def _originate(self, state: _Link, message: Message) -> None:
        message["seq"] = state.seq + 1
        state.apply(message)
        text = encode(message)
        self.stats["messages"] += 1
        self._fan_out(state, text)
        self.backend.publish(state.link, text)

    def _fan_out(self, state: _Link, text: str) -> None:
        # The same str object to every subscriber; a full queue drops that subscriber
        # (it reconnects to a fresh snapshot) instead of slowing everyone else.
        # (A dropped subscriber leaves the set while we loop: iterate over a copy.)
        subscribers = tuple(state.subscribers)
        dropped = [sub for sub in subscribers if not sub.push(text)]
        self.stats["deliveries"] += len(subscribers) - len(dropped)
        self.stats["slow_consumers"] += sum(1 for sub in dropped if sub.slow)

    def _snapshot_text(self, state: _Link) -> str:
        if state.snapshot is None:
            state.snapshot = encode(state.snapshot_message())
        return state.snapshot

    def _unsubscribe(self, sub: Subscription) -> None:
        state = self._links.get(sub.link)
        if state is not None:
            state.subscribers.discard(sub)

    def _degrade(self, state: _Link, detail: str) -> None:
        if state.local_status is not None:
            return
        state.local_status = ("degraded", detail)
        state.snapshot = None
        message = {"type": "status", "seq": state.seq, "link": state.link}
        self._fan_out(state, encode({**message, "status": "degraded", "detail": detail}))

    def _clock(self) -> float:
        return (self._loop or asyncio.get_running_loop()).time()

    async def _tick(self) -> None:
        # Writer: pings originate here, through the backend, so every process sends
        # the same gapless seqs. Display: a feed silent for 2.5 pings means the writer
        # (or its Redis link) is gone: say so locally and re-read the stored state.
        while True:
            await asyncio.sleep(self.ping_s)
            for state in list(self._links.values()):
                if self.role == "writer":
                    self._originate(state, {"type": "ping", "seq": 0, "link": state.link})
                    continue
                if state.heard_at is None:
                    state.heard_at = self._clock()
                elif self._clock() - state.heard_at > 2.5 * self.ping_s:
                    silent = round(self._clock() - state.heard_at)
                    self._degrade(state, f"no message from the jackpot controller for {silent} s")
                    self.backend.request_resync(state.link)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
