"""Broadcast of meter values, wins and link status to display screens.

The writer calls `meters`, `win` and `status` on its hot path: synchronous, never awaiting
a client, never raising because a display or Redis is slow. Every message gets its link's
next `seq` here and is serialised once, so every process sends the same text for the same
seq. A Broadcaster over a writer-role backend originates messages; over a display-role
one it relays. Wire format: docs/api.md "Displays"; roles: docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from app.display.backend import Backend, Feed, MemoryBackend, Role
from app.display.frames import text_frame
from app.display.link_state import STATUSES, WIN_STATES, LinkState, Message, encode
from app.display.subscription import SlowConsumer, Subscription

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
        self._links: dict[str, LinkState] = {}
        # Writer role: whether this process leads (app/writer/leadership.py `may_announce`).
        # A standby writer originates nothing, pings included, and stores no state in
        # Redis: only the leader's messages reach the screens.
        self.leads: Callable[[], bool] = lambda: True
        # Writer role: the lease epoch it leads under (Leadership.epoch), on what it puts in Redis.
        self.lease_epoch: Callable[[], int] = lambda: 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ticker: asyncio.Task[None] | None = None
        # Told every message its screens are sent, as sent (app/display/screen_watch.py).
        self.observe: Callable[[str, str], None] | None = None

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

    def configure_link(
        self, link: str, currency: str, meters: Sequence[tuple[str, str]], name: str = ""
    ) -> None:
        """Declare a link (`name`: what screens show) and its meters (id, display name),
        in display order."""
        state = self._links.get(link)
        names = dict(meters)
        if state is None:
            # A restarted writer must not reuse seqs a display process has already
            # seen: start from the wall clock in ms. Seq stays strictly increasing
            # across restarts as long as a link averages under 1,000 messages/s.
            # A display process knows no seq until it reads the stored state: 0 makes
            # the writer's first message a gap, which fetches that state.
            seq = _now_ms() if self.role == "writer" else 0
            self._links[link] = LinkState(
                link, currency, names, dict.fromkeys(names), seq, name=name
            )
        else:
            state.currency, state.snapshot, state.name = currency, None, name
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

    def in_play(self, link: str, info: Mapping[str, object]) -> None:
        """What is out of play on the link (app/state/in_play_state.py `link_in_play`): a
        `status` message when it changes, with the link's status as it is."""
        state = self._writer_link(link)
        if state.in_play == dict(info):
            return
        self._flush_meters(state)
        message = {"type": "status", "seq": 0, "link": link, "status": state.status}
        self._originate(state, {**message, "detail": state.detail, **info})

    def levels(self, link: str, levels: Mapping[str, Mapping[str, object]]) -> None:
        """The link's must-hit-by levels (meter -> `must_hit_from`, `must_hit_by`,
        `commitment`: app/state/views.py): a `meters` message when they change, as
        at each draw; the trigger is never among them."""
        state = self._writer_link(link)
        wanted = {meter: dict(fields) for meter, fields in levels.items()}
        if state.levels == wanted:
            return
        self._flush_meters(state)
        state.levels = wanted
        message = {"type": "meters", "seq": 0, "link": link, "meters": state.meter_list()}
        self._originate(state, message)

    def retire(self, link: str) -> None:
        """The link left the floor (app/state/transfers.py): its screens are sent a
        `retired` message and closed, and it is served no more (404)."""
        state = self._links.get(link)
        if state is None:
            return
        if self.originates():
            self._originate(state, {"type": "retired", "seq": 0, "link": link})
        self._drop(state)

    def _drop(self, state: LinkState) -> None:
        del self._links[state.link]
        for sub in tuple(state.subscribers):
            sub.close()

    def lead(self, base_seq: int, values: Mapping[str, Mapping[str, str]]) -> None:
        """This writer process has just taken over (app/writer/leadership.py): every link
        starts again from a fresh snapshot with the current meter `values`, its seq at
        least `base_seq` (the database's clock in ms at the takeover, as a restarted
        writer starts from its clock): above every seq the deposed leader sent while it
        averaged under 1,000 messages a second a link, so a connected screen's seq still
        increases, and a display process sees a gap and takes the new stored state."""
        for state in self._links.values():
            if state.flush is not None:
                state.flush.cancel()
                state.flush = None
            state.dirty.clear()
            state.seq = max(base_seq, state.seq)
            state.pending.clear()  # the new leader announces those still pending
            state.status, state.detail = "ok", ""
            state.local_status = None  # degraded while relaying as a standby: not ours now
            state.values.update(values.get(state.link, {}))
            self._originate(state, {**state.snapshot_message(), "seq": 0})

    def originates(self) -> bool:
        """Whether what this process broadcasts goes out (Feed: the Redis backend)."""
        return self.role == "writer" and self.leads()

    def term(self) -> int:
        """The leader's term on what goes out (Feed: the Redis backend)."""
        return self.lease_epoch()

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
        """Display role, or a standby writer: one message from the leading writer. False:
        a gap, resync the link."""
        if self.originates():
            return True  # we lead now: what the relay still had in hand is the old leader's
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
        if message["type"] == "retired":  # the writer retired the link: no longer served
            self._drop(state)
            return True
        if state.local_status is not None:  # the feed is back: clear our own degraded
            state.local_status = None
            self._fan_out(state, self._snapshot_text(state))
        return True

    def restore(self, link: str, text: str) -> None:
        """Display role, or a standby writer: the link's stored state; local clients get it
        as a snapshot."""
        if self.originates():
            return  # we lead: the stored state is ours, or the old leader's
        message = json.loads(text)
        state = self._links.get(link)
        if state is None:
            state = self._links[link] = LinkState(link, "", {}, {}, 0)
        state.apply(message)
        state.local_status = None
        state.heard_at = self._clock()
        self.stats["resyncs"] += 1
        self._fan_out(state, self._snapshot_text(state))

    def feed_lost(self, detail: str) -> None:
        """Display role, or a standby writer: the leader's feed is gone; tell local
        clients (seq unchanged)."""
        if self.originates():
            return
        for state in self._links.values():
            self._degrade(state, detail)

    # -- internals -------------------------------------------------------------------

    def _writer_link(self, link: str) -> LinkState:
        if self.role != "writer":
            raise RuntimeError("a display-role Broadcaster only relays the writer's messages")
        return self._links[link]

    def _flush_meters(self, state: LinkState) -> None:
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

    def _originate(self, state: LinkState, message: Message) -> None:
        if not self.leads():
            return  # a standby writer: `lead` starts every link afresh
        message["seq"] = state.seq + 1
        state.apply(message)
        text = encode(message)
        self.stats["messages"] += 1
        self._fan_out(state, text)
        self.backend.publish(state.link, text)

    def _fan_out(self, state: LinkState, text: str) -> None:
        # The same str object to every subscriber; a full queue drops that subscriber
        # (it reconnects to a fresh snapshot) instead of slowing everyone else.
        # (A dropped subscriber leaves the set while we loop: iterate over a copy.)
        # The frame is the same bytes for every display: built once, written to each.
        subscribers = tuple(state.subscribers)
        if self.observe is not None:
            self.observe(state.link, text)
        frame = text_frame(text)
        dropped = [sub for sub in subscribers if not sub.push(text, frame)]
        self.stats["deliveries"] += len(subscribers) - len(dropped)
        self.stats["slow_consumers"] += sum(1 for sub in dropped if sub.slow)

    def _snapshot_text(self, state: LinkState) -> str:
        if state.snapshot is None:
            state.snapshot = encode(state.snapshot_message())
        return state.snapshot

    def _unsubscribe(self, sub: Subscription) -> None:
        state = self._links.get(sub.link)
        if state is not None:
            state.subscribers.discard(sub)

    def _degrade(self, state: LinkState, detail: str) -> None:
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
