"""Display processes report their screens to the writer through Redis (real Redis):
signed rows, taken by the writer, expiring with their process; a row not signed with
the floor's secret is skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from app.display.broadcaster import Broadcaster
from app.display.redis_backend import RedisBackend
from app.display.screen_relay import PREFIX, ScreenRelay
from app.display.screen_watch import ScreenWatch
from app.display.screens import Screens

SECRET = "s3cret"


@pytest.fixture
async def relays(redis_url: str) -> AsyncIterator[tuple[ScreenRelay, ScreenRelay]]:
    display = ScreenRelay(RedisBackend(redis_url, role="display", secret=SECRET), "disp-1:42")
    writer = ScreenRelay(RedisBackend(redis_url, role="writer", secret=SECRET), "writer-1:7")
    await display.start()
    await writer.start()
    assert display.redis is not None
    await display.redis.delete(
        *[k async for k in display.redis.scan_iter(match=PREFIX + "*")] or ["-"]
    )
    yield display, writer
    await display.stop()
    await writer.stop()


async def test_the_writer_takes_every_display_process_screens(
    relays: tuple[ScreenRelay, ScreenRelay],
) -> None:
    display, writer = relays
    row = {"screen": "scr-0001", "link": "stud", "name": "bar-left", "flags": ["stale"]}
    await display.put([row])
    taken = await writer.take()
    assert taken == {"scr-0001": {**row, "process": "disp-1:42"}}
    assert display.redis is not None
    ttl = await display.redis.pttl(PREFIX + "disp-1:42")
    assert 0 < ttl <= 30_000


async def test_rows_not_signed_with_the_secret_are_skipped(
    relays: tuple[ScreenRelay, ScreenRelay], redis_url: str
) -> None:
    _, writer = relays
    forger = RedisBackend(redis_url, role="display", secret="not-the-secret")
    key = PREFIX + "forged:1"
    client = aioredis.Redis.from_url(redis_url)
    try:
        await client.set(key, forger.sign(key, '[{"screen": "scr-evil", "link": "stud"}]'))
        await client.set(PREFIX + "plain:1", '[{"screen": "scr-plain", "link": "stud"}]')
        assert await writer.take() == {}
    finally:
        await client.aclose()


async def test_redis_away_is_no_error(redis_url: str) -> None:
    relay = ScreenRelay(RedisBackend("redis://127.0.0.1:1/0", secret=SECRET), "x:1")
    await relay.start()
    try:
        await relay.put([{"screen": "scr-0001"}])
        assert await relay.take() == {}
        assert relay.failing
    finally:
        await relay.stop()


async def test_a_display_process_screen_is_listed_by_the_writer(redis_url: str) -> None:
    display_backend = RedisBackend(redis_url, role="display", secret=SECRET)
    display = Broadcaster(display_backend)
    display_watch = ScreenWatch(
        Screens(display.link_state), display, relay=ScreenRelay(display_backend, "disp-2:9")
    )
    writer_backend = RedisBackend(redis_url, role="writer", secret=SECRET)
    writer = Broadcaster(writer_backend)
    writer_watch = ScreenWatch(
        Screens(writer.link_state), writer, relay=ScreenRelay(writer_backend, "writer-2:1")
    )
    for watch in (display_watch, writer_watch):
        assert watch.relay is not None
        await watch.relay.start()
    try:
        relay = display_watch.relay
        assert relay is not None and relay.redis is not None
        stale = [k async for k in relay.redis.scan_iter(match=PREFIX + "*")]
        if stale:  # other tests' processes
            await relay.redis.delete(*stale)
        display_watch.screens.connect("scr-door-0001", "stud", "door", "10.0.0.9", 1_000)
        await display_watch._relay(2_000)  # the display process's tick
        await writer_watch._relay(2_500)  # the writer's
        rows = writer_watch.screens.views(3_000)
        assert [(r["screen"], r["name"], r["process"]) for r in rows] == [
            ("scr-door-0001", "door", "disp-2:9")
        ]
    finally:
        for watch in (display_watch, writer_watch):
            assert watch.relay is not None
            await watch.relay.stop()
