"""The leader's term on what writers put in Redis, over a real Redis (docs/design.md,
"Broadcast"): the term is inside the HMAC, a display process takes nothing of a term
older than the newest it has seen, a stored state is never overwritten by an older term,
and a writer drops what it queued under a term it no longer holds."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis

from app.display.broadcaster import Broadcaster, Subscription
from app.display.redis_backend import RedisBackend

METERS = [("major", "Major")]
QUIET = 3600.0
SECRET = "s"


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def shown(broadcaster: Broadcaster) -> object:
    state = broadcaster.link_state("stud")
    return None if state is None else state["meters"][0]["value"]  # type: ignore[index]


async def writer(url: str, prefix: str, term: int) -> Broadcaster:
    broadcaster = Broadcaster(
        RedisBackend(url, prefix=prefix, secret=SECRET), coalesce_ms=1, ping_s=QUIET
    )
    broadcaster.lease_epoch = lambda: term
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    return broadcaster


async def stored(client: aioredis.Redis, key: str) -> str:
    value = await client.get(key)
    assert isinstance(value, bytes)
    return value.decode()


async def display(url: str, prefix: str) -> Broadcaster:
    broadcaster = Broadcaster(RedisBackend(url, prefix=prefix, role="display", secret=SECRET))
    await broadcaster.start()
    return broadcaster


async def values_until(sub: Subscription, last: str) -> list[str]:
    """The major meter's value in every message the screen gets after its first snapshot,
    up to `last`."""
    seen: list[str] = []
    async with asyncio.timeout(10):
        await anext(sub)
        while not seen or seen[-1] != last:
            message: dict[str, Any] = json.loads(await anext(sub))
            for meter in message.get("meters", []):
                seen.append(meter["value"])
    return seen


def backend(broadcaster: Broadcaster) -> RedisBackend:
    assert isinstance(broadcaster.backend, RedisBackend)
    return broadcaster.backend


async def test_a_deposed_leaders_older_term_reaches_no_screen_and_no_stored_state(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    new = await writer(redis_url, prefix, term=2)
    new.meters("stud", {"major": "100.00"})
    screen = await display(redis_url, prefix)
    old = await writer(redis_url, prefix, term=1)  # still believes it leads
    client = aioredis.Redis.from_url(redis_url)
    try:
        await until(lambda: shown(screen) == "100.00")
        sub = screen.subscribe("stud")
        # Its seq far above the leader's: only the term can tell the screen to skip it.
        published = backend(old).stats["published"]
        old.lead(10**13, {"stud": {"major": "999.00"}})
        old.flush()
        await until(lambda: backend(old).stats["published"] > published)
        state = await stored(client, f"{prefix}:state:stud")
        assert " 2 {" in state and "999.00" not in state  # the older term's SET refused
        await until(lambda: backend(screen).stats["rejected"] >= 1)
        new.meters("stud", {"major": "100.25"})
        assert "999.00" not in await values_until(sub, "100.25")
        later = await display(redis_url, prefix)  # a display process started after it all
        await until(lambda: shown(later) == "100.25")
        await later.stop()
    finally:
        await client.aclose()
        for broadcaster in (screen, old, new):
            await broadcaster.stop()


async def test_a_term_altered_in_redis_fails_the_hmac(redis_url: str) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    new = await writer(redis_url, prefix, term=2)
    new.meters("stud", {"major": "100.00"})
    screen = await display(redis_url, prefix)
    client = aioredis.Redis.from_url(redis_url)
    try:
        await until(lambda: shown(screen) == "100.00")
        sub = screen.subscribe("stud")
        key, channel = f"{prefix}:state:stud", f"{prefix}:link:stud"
        mac, term, text = (await stored(client, key)).split(" ", 2)
        assert term == "2"
        message = json.loads(text)
        forged = json.dumps({**message, "seq": message["seq"] + 1})
        # A higher term under the writer's own MAC: were the term outside the HMAC, the
        # screen would take it, and then refuse the leader's term 2 as older.
        await client.publish(channel, f"{mac} 3 {text}")
        await client.set(key, f"{mac} 3 {forged}")
        backend(screen).request_resync("stud")
        await until(lambda: backend(screen).stats["rejected"] >= 2)
        new.meters("stud", {"major": "100.25"})
        assert await values_until(sub, "100.25") == ["100.25"]
    finally:
        await client.aclose()
        await screen.stop()
        await new.stop()


async def test_what_a_writer_queued_under_a_term_it_no_longer_holds_is_not_written(
    redis_url: str,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    term = [2]
    w = await writer(redis_url, prefix, term=0)
    w.lease_epoch = lambda: term[0]
    w.meters("stud", {"major": "100.00"})
    screen = await display(redis_url, prefix)
    try:
        await until(lambda: shown(screen) == "100.00")
        sub = screen.subscribe("stud")
        w.meters("stud", {"major": "555.00"})
        w.flush()  # queued under term 2 ...
        term[0] = 3  # ... which this writer stood down from before Redis was written
        await asyncio.sleep(0.2)
        w.meters("stud", {"major": "100.25"})
        assert await values_until(sub, "100.25") == ["100.25"]
    finally:
        await screen.stop()
        await w.stop()
