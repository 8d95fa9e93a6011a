"""Display processes report their screens to the writer through Redis (real Redis):
signed rows, taken by the writer, expiring with their process; a row not signed with
the floor's secret is skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from app.display.redis_backend import RedisBackend
from app.display.screen_relay import PREFIX, ScreenRelay

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
