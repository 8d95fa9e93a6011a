"""Redis pub/sub backend: the writer process publishes, display processes relay.

Keys (prefix `jackpot` by default):

- channel `jackpot:link:<link>`: every serialised message, exactly as sent locally;
- string `jackpot:state:<link>`: the link's latest snapshot (with its seq), so a display
  process that starts or reconnects later can take a snapshot.

Writer role (`RedisBackend(url)`): `publish` only appends to a bounded backlog and wakes
one background task, so the writer never waits for Redis. That task sends each batch as
one MULTI: the SET of every touched link's state *before* its PUBLISHes. Because of
that order a display that subscribes first and then reads the state misses nothing:
every message newer than the state it read is published after its subscription. When
Redis fails the batch is dropped and counted; once Redis answers again every link's
state is SET anew (display processes notice the seq gap and re-read it).

Display role (`RedisBackend(url, role="display")`): one pattern subscription per
process, fanned out by the Broadcaster to its local bounded queues (encode/broadcaster
style, but bounded). On (re)connect: subscribe, wait until the subscription is active,
then read every stored state and hand it over as a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.broadcast import Feed, Role

log = logging.getLogger(__name__)

_FAILURES = (RedisError, OSError, TimeoutError)


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
    ) -> None:
        self.url = url
        self.role: Role = role
        self.channel_prefix = f"{prefix}:link:"
        self.state_prefix = f"{prefix}:state:"
        self.timeout_s = timeout_s
        self.stats: dict[str, int] = {
            "published": 0,  # messages Redis accepted
            "publish_dropped": 0,  # messages lost because Redis failed or lagged
            "feed_lost": 0,  # display role: Redis connection losses
        }
        self.connected = False
        self._backlog: deque[tuple[str, str | None]] = deque()
        self._backlog_max = backlog
        self._wake = asyncio.Event()
        self._resync: set[str] = set()
        self._sync_all = True  # writer: SET every link's state at the next good write
        self._feed: Feed | None = None
        self._redis: aioredis.Redis | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, feed: Feed) -> None:
        self._feed = feed
        self._redis = aioredis.Redis.from_url(
            self.url,
            decode_responses=True,
            socket_timeout=self.timeout_s,
            socket_connect_timeout=self.timeout_s,
        )
        run = self._write_loop if self.role == "writer" else self._read_loop
        self._task = asyncio.create_task(run(), name=f"redis-broadcast-{self.role}")
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
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
            _, old = self._backlog.popleft()
            self.stats["publish_dropped"] += old is not None
            self._sync_all = True
        self._backlog.append((link, text))
        self._wake.set()

    async def _write_loop(self) -> None:
        retry_s = 0.2
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch = list(self._backlog)
            self._backlog.clear()
            try:
                async with asyncio.timeout(self.timeout_s):
                    await self._write(batch)
            except _FAILURES as exc:
                lost = sum(1 for _, text in batch if text is not None)
                self.stats["publish_dropped"] += lost
                if self.connected or retry_s == 0.2:
                    log.warning("Redis publish failed, %d messages dropped: %r", lost, exc)
                self.connected, self._sync_all = False, True
                await asyncio.sleep(retry_s)
                retry_s = min(retry_s * 2, 5.0)
                self._wake.set()  # try again, at least to store the states
                continue
            self.connected, retry_s = True, 0.2

    async def _write(self, batch: list[tuple[str, str | None]]) -> None:
        assert self._redis is not None and self._feed is not None
        links = set(self._feed.link_ids()) if self._sync_all else {link for link, _ in batch}
        pipe = self._redis.pipeline(transaction=True)
        for link in sorted(links):
            state = self._feed.state_text(link)
            if state is not None:
                pipe.set(self.state_prefix + link, state)
        texts = [(link, text) for link, text in batch if text is not None]
        for link, text in texts:
            pipe.publish(self.channel_prefix + link, text)
        await pipe.execute()
        self._sync_all = False
        self.stats["published"] += len(texts)

    # -- display role ----------------------------------------------------------------

    def request_resync(self, link: str) -> None:
        self._resync.add(link)

    async def _read_loop(self) -> None:
        retry_s = 0.2
        while True:
            try:
                await self._relay()
            except _FAILURES as exc:
                self.stats["feed_lost"] += 1
                if self.connected:
                    log.warning("lost the Redis broadcast feed: %r", exc)
                    retry_s = 0.2
                else:
                    retry_s = min(retry_s * 2, 5.0)
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
            while True:
                if self._resync:
                    links, self._resync = self._resync, set()
                    await self._restore(links)
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is None or message.get("type") != "pmessage":
                    continue
                link = str(message["channel"])[len(self.channel_prefix) :]
                text = str(message["data"])
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
            links.add(str(key)[len(self.state_prefix) :])
        return links

    async def _restore(self, links: set[str]) -> None:
        assert self._redis is not None and self._feed is not None
        ordered = sorted(links)
        if not ordered:
            return
        texts = await self._redis.mget([self.state_prefix + link for link in ordered])
        for link, text in zip(ordered, texts, strict=True):
            if text is not None:
                self._feed.restore(link, str(text))
