"""Redis pub/sub backend: the writer process publishes, display processes relay.

Channel `jackpot:link:<link>` carries every message; key `jackpot:state:<link>` the link's
latest snapshot. The writer SETs a batch's states before its PUBLISHes, in one MULTI sent
by a task of its own (the writer never waits for Redis), so a display process that
subscribes and then reads the state misses nothing. What a display process takes is
checked (`well_formed`) and, with JACKPOT_REDIS_SECRET, its HMAC verified before it
reaches a screen; each value carries the writer's lease epoch, its term, inside the HMAC
(app/display/leader_term.py). The whole protocol: docs/architecture.md "The Redis backend".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
from collections import deque

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.display.backend import Feed, Role
from app.display.leader_term import STORE_IF_NOT_OLDER, NewestTerm, stamped, unstamped
from app.display.link_state import STATUSES

log = logging.getLogger("jackpot.redis")

_FAILURES = (RedisError, OSError, TimeoutError)
_KINDS = frozenset({"snapshot", "meters", "win", "status", "ping"})
# A snapshot of a link with a hundred meters and 25 recent wins is under 64 KiB.
MAX_MESSAGE_BYTES = 1 << 20
_MAC_HEX = 64  # hex digits of an HMAC-SHA256
_HEX = re.compile(r"[0-9a-f]+")
STANDBY_POLL_S = 0.2  # a leading writer checks this often whether it stands by again


class RedisBackend:
    """Carries the writer's messages to every process over Redis pub/sub."""

    def __init__(
        self,
        url: str,
        *,
        role: Role = "writer",
        prefix: str = "jackpot",
        backlog: int = 10_000,
        timeout_s: float = 2.0,
        secret: str | None = None,
    ) -> None:
        self.url = url
        self._key = secret.encode() if secret else None
        self.role: Role = role
        self.channel_prefix = f"{prefix}:link:"
        self.state_prefix = f"{prefix}:state:"
        self.timeout_s = timeout_s
        self.stats: dict[str, int] = {
            "published": 0,  # messages Redis accepted
            "publish_dropped": 0,  # messages lost because Redis failed or lagged
            "feed_lost": 0,  # display role: Redis connection losses
            "rejected": 0,  # display role: malformed or unsigned messages and states skipped
            "stale_term": 0,  # of those, signed by a leader older than the newest seen
        }
        self.connected = False
        self._away = False  # display role: an outage is logged once, and so is its end
        self._backlog: deque[tuple[str, str | None, int]] = deque()  # link, text, term
        self._newest = NewestTerm()  # display role: of what was read
        self._stale_logged = -1  # the last stale term logged (one line per such term)
        self._backlog_max = backlog
        self._wake = asyncio.Event()
        self._resync: set[str] = set()
        self._sync_all = True  # writer: SET every link's state at the next good write
        self._feed: Feed | None = None
        self._redis: aioredis.Redis | None = None
        self._task: asyncio.Task[None] | None = None
        self._relay_task: asyncio.Task[None] | None = None  # writer role: while a standby

    async def start(self, feed: Feed) -> None:
        self._feed = feed
        if self._key is None:
            log.warning(
                "JACKPOT_REDIS_SECRET is not set: display messages over Redis are not signed,"
                " and anyone who can publish on that Redis can change what screens show"
            )
        # Bytes, not str: a value that is not UTF-8 must be one rejected message, not an
        # exception in the connection's reader.
        self._redis = aioredis.Redis.from_url(
            self.url,
            decode_responses=False,
            socket_timeout=self.timeout_s,
            socket_connect_timeout=self.timeout_s,
        )
        run = self._write_loop if self.role == "writer" else self._read_loop
        self._task = asyncio.create_task(run(), name=f"redis-broadcast-{self.role}")
        if self.role == "writer":
            self._relay_task = asyncio.create_task(self._standby_loop(), name="redis-standby")
        self._wake.set()

    async def stop(self) -> None:
        for task in (self._task, self._relay_task):
            # redis-py (8.1) can swallow a cancellation that lands in a pipeline's
            # execute: the loop then waits for a wake that never comes. Cancel again.
            while task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=0.1)
        self._task = self._relay_task = None
        if self._redis is not None:
            with contextlib.suppress(*_FAILURES):
                await self._redis.aclose()
            self._redis = None

    # -- writer role -----------------------------------------------------------------

    def publish(self, link: str, text: str | None) -> None:
        if self.role != "writer":
            return
        if len(self._backlog) >= self._backlog_max:
            # Redis is lagging far behind: forget the oldest; the SET of the state
            # that goes with the next batch still brings late displays up to date.
            _, old, _ = self._backlog.popleft()
            self.stats["publish_dropped"] += old is not None
            self._sync_all = True
        term = 0 if self._feed is None else self._feed.term()
        self._backlog.append((link, text, term))
        self._wake.set()

    async def _write_loop(self) -> None:
        retry_s = 0.2
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch = list(self._backlog)
            self._backlog.clear()
            assert self._feed is not None
            if not self._feed.originates():
                # A standby writer stores no state: it would write over the leader's.
                self._sync_all = True  # every state, once it leads
                continue
            term = self._feed.term()
            # What was queued under a term this writer has since stood down from is not its
            # to send now: the states it stores are read afresh under this term.
            stale = sum(1 for _, text, at in batch if at != term and text is not None)
            self.stats["publish_dropped"] += stale
            batch = [(link, text, at) for link, text, at in batch if at == term]
            try:
                async with asyncio.timeout(self.timeout_s):
                    await self._write(batch, term)
            except _FAILURES as exc:
                lost = sum(1 for _, text, _ in batch if text is not None)
                self.stats["publish_dropped"] += lost
                if self.connected or retry_s == 0.2:
                    log.warning("Redis publish failed, %d messages dropped: %r", lost, exc)
                self.connected, self._sync_all = False, True
                await asyncio.sleep(retry_s)
                retry_s = min(retry_s * 2, 5.0)
                self._wake.set()  # try again, at least to store the states
                continue
            self.connected, retry_s = True, 0.2

    async def _write(self, batch: list[tuple[str, str | None, int]], term: int) -> None:
        assert self._redis is not None and self._feed is not None
        links = set(self._feed.link_ids()) if self._sync_all else {link for link, _, _ in batch}
        pipe = self._redis.pipeline(transaction=True)
        for link in sorted(links):
            state = self._feed.state_text(link)
            if state is not None:
                key = self.state_prefix + link
                value = self.sign(key, stamped(term, state))
                pipe.eval(STORE_IF_NOT_OLDER, 1, key, term, value)
        texts = [(link, text) for link, text, _ in batch if text is not None]
        for link, text in texts:
            channel = self.channel_prefix + link
            pipe.publish(channel, self.sign(channel, stamped(term, text)))
        await pipe.execute()
        self._sync_all = False
        self.stats["published"] += len(texts)

    # -- display role ----------------------------------------------------------------

    def request_resync(self, link: str) -> None:
        self._resync.add(link)

    async def _standby_loop(self) -> None:
        """Writer role: relay the leader's stream to our screens while we stand by."""
        assert self._feed is not None
        while True:
            if self._feed.originates():
                await asyncio.sleep(STANDBY_POLL_S)
            else:
                await self._read_loop()  # returns once we lead

    def _relaying(self) -> bool:
        assert self._feed is not None
        return self.role == "display" or not self._feed.originates()

    async def _read_loop(self) -> None:
        retry_s = 0.2
        while self._relaying():
            try:
                await self._relay()
            except Exception as exc:  # noqa: BLE001 - the relay must outlive anything
                self.stats["feed_lost"] += 1
                if not isinstance(exc, _FAILURES):
                    log.exception("the Redis relay failed; starting it again")
                elif not self._away:  # one line an outage, lost or never reached
                    log.warning(
                        "cannot reach Redis: screens here show degraded and /health answers"
                        " 503 until it is back: %r",
                        exc,
                    )
                    self._away = True
                retry_s = 0.2 if self.connected else min(retry_s * 2, 5.0)
                self.connected = False
                assert self._feed is not None
                self._feed.feed_lost("this display server lost its connection to Redis")
            await asyncio.sleep(retry_s)

    async def _relay(self) -> None:
        assert self._redis is not None and self._feed is not None
        pubsub = self._redis.pubsub()
        try:
            await pubsub.psubscribe(self.channel_prefix + "*")
            # The subscription must be active before the states are read (see above).
            async with asyncio.timeout(self.timeout_s):
                while (await pubsub.get_message(timeout=self.timeout_s) or {}).get(
                    "type"
                ) != "psubscribe":
                    pass
            await self._restore(await self._stored_links())
            self.connected = True
            if self._away:
                log.warning("connected to Redis again: relaying the writer's stream")
            else:
                log.info("connected to Redis: relaying the writer's stream")
            self._away = False
            while True:
                if self._resync:
                    links, self._resync = self._resync, set()
                    await self._restore(links)
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if not self._relaying():
                    return  # a standby writer that now leads
                if message is None or message.get("type") != "pmessage":
                    continue
                channel = _text(message["channel"])
                if channel is None or not channel.startswith(self.channel_prefix):
                    self.stats["rejected"] += 1
                    continue
                link = channel[len(self.channel_prefix) :]
                text = self._open_stamped(channel, message["data"])
                if text is None or not well_formed(link, text):
                    self.stats["rejected"] += 1
                    continue
                if not self._feed.receive(link, text):
                    # A gap (Redis dropped some of the writer's messages) or a new link:
                    # the stored state covers this message, so take it, then go on.
                    await self._restore({link})
                    self._feed.receive(link, text)
        finally:
            with contextlib.suppress(*_FAILURES):
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _stored_links(self) -> set[str]:
        assert self._redis is not None and self._feed is not None
        links = set(self._feed.link_ids())
        async for key in self._redis.scan_iter(match=self.state_prefix + "*", count=500):
            name = _text(key)
            if name is not None:
                links.add(name[len(self.state_prefix) :])
        return links

    async def _restore(self, links: set[str]) -> None:
        assert self._redis is not None and self._feed is not None
        ordered = sorted(links)
        if not ordered:
            return
        values = await self._redis.mget([self.state_prefix + link for link in ordered])
        for link, value in zip(ordered, values, strict=True):
            if value is None:
                continue
            text = self._open_stamped(self.state_prefix + link, value)
            if text is None or not well_formed(link, text, kind="snapshot"):
                self.stats["rejected"] += 1
                continue
            self._feed.restore(link, text)

    # -- signature -------------------------------------------------------------------

    def _open_stamped(self, name: str, value: object) -> str | None:
        """The leader's text from a value under `name`; None if it does not open (`open`),
        carries no term, or its term is older than the newest this process has seen."""
        body = self.open(name, value)
        opened = None if body is None else unstamped(body)
        if opened is None:
            return None
        term, text = opened
        if not self._newest.admits(term):
            self.stats["stale_term"] += 1
            if self.stats["stale_term"] == 1 or term != self._stale_logged:
                log.warning(
                    "skipped %s of leader term %d, older than term %d: a deposed writer",
                    name,
                    term,
                    self._newest.term,
                )
                self._stale_logged = term
            return None
        return text

    def sign(self, name: str, text: str) -> str:
        """What goes to Redis under `name` (a channel or a key): the text, signed if we
        have a secret."""
        if self._key is None:
            return text
        return f"{self._mac(name, text)} {text}"

    def open(self, name: str, value: object) -> str | None:
        """The writer's text from what Redis holds under `name`; None if it is not UTF-8,
        too big, or (with a secret) not signed with it."""
        text = _text(value)
        if text is None or len(text) > MAX_MESSAGE_BYTES:
            return None
        signed = len(text) > _MAC_HEX and text[_MAC_HEX] == " " and _HEX.fullmatch(text[:_MAC_HEX])
        if self._key is None:
            return text[_MAC_HEX + 1 :] if signed else text  # nothing to check it with
        if not signed:
            return None
        mac, body = text[:_MAC_HEX], text[_MAC_HEX + 1 :]
        return body if hmac.compare_digest(mac, self._mac(name, body)) else None

    def _mac(self, name: str, text: str) -> str:
        assert self._key is not None
        return hmac.new(self._key, f"{name}\n{text}".encode(), hashlib.sha256).hexdigest()


def _text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return None
    return None


def well_formed(link: str, text: str, *, kind: str | None = None) -> bool:
    """True if `text` is one of the writer's messages (app/display/broadcaster.py, wire format) for
    `link`, with every field the display's state reads: anything else is skipped whole
    rather than half-applied."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(message, dict) or message.get("link") != link:
        return False
    seq, got = message.get("seq"), message.get("type")
    if type(seq) is not int or seq < 0 or got not in _KINDS or (kind and got != kind):
        return False
    if got in ("meters", "snapshot") and not _meters_ok(message.get("meters")):
        return False
    if got in ("status", "snapshot") and not (
        message.get("status") in STATUSES and isinstance(message.get("detail"), str)
    ):
        return False
    if got == "win":
        return isinstance(message.get("award_id"), str) and isinstance(message.get("state"), str)
    if got == "snapshot":
        return (
            isinstance(message.get("currency"), str)
            and _wins_ok(message.get("pending"))
            and _wins_ok(message.get("recent_wins"))
        )
    return True


def _meters_ok(meters: object) -> bool:
    return isinstance(meters, list) and all(
        isinstance(m, dict)
        and isinstance(m.get("meter"), str)
        and isinstance(m.get("name", ""), str)
        and (m.get("value") is None or isinstance(m.get("value"), str))
        for m in meters
    )


def _wins_ok(wins: object) -> bool:
    return isinstance(wins, list) and all(
        isinstance(w, dict) and isinstance(w.get("award_id"), str) for w in wins
    )
