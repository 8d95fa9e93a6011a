"""Standby writers and their own screens, over a real Redis: a writer-role
Broadcaster that does not lead relays the leader's stream as a display process does, and
once it leads it ignores the relay and starts every link afresh, its seq still higher."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from app.display.broadcaster import Broadcaster, Subscription
from app.display.redis_backend import RedisBackend

METERS = [("major", "Major")]
QUIET = 3600.0  # no pings: the messages counted are the ones sent here


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def next_message(sub: Subscription, timeout: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        message: dict[str, Any] = json.loads(await anext(sub))
        return message


def shown(broadcaster: Broadcaster) -> object:
    state = broadcaster.link_state("stud")
    return None if state is None else state["meters"][0]["value"]  # type: ignore[index]


class Role:
    """What app/writer/leadership.py's `may_announce` says, set by the test."""

    def __init__(self, leads: bool) -> None:
        self.leading = leads

    def __call__(self) -> bool:
        return self.leading


async def writer(url: str, prefix: str, role: Role) -> Broadcaster:
    broadcaster = Broadcaster(
        RedisBackend(url, prefix=prefix, secret="s"), coalesce_ms=10, ping_s=QUIET
    )
    broadcaster.leads = role
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    return broadcaster


async def test_a_standby_writers_screen_follows_the_leader_and_then_the_standby_itself(
    redis_url: str,
) -> None:
    prefix = f"standby-{uuid.uuid4().hex}"  # the session's Redis: keys of our own
    a_leads, b_leads = Role(True), Role(False)
    a = await writer(redis_url, prefix, a_leads)
    b = await writer(redis_url, prefix, b_leads)
    try:
        a.meters("stud", {"major": "10000.00"})
        await until(lambda: shown(b) == "10000.00")  # through Redis: b's relay restored it
        on_b = b.subscribe("stud")
        first = await next_message(on_b)
        assert first["type"] == "snapshot" and first["meters"][0]["value"] == "10000.00"

        a.meters("stud", {"major": "10000.25"})  # the leader's, through Redis to b's screen
        a.win("stud", {"state": "final", "award_id": "A1", "amount": "500.00"})
        meters, relayed = await next_message(on_b), await next_message(on_b)
        assert meters["type"] == "meters" and meters["seq"] == first["seq"] + 1
        assert meters["meters"][0]["value"] == "10000.25"
        assert relayed["type"] == "win" and relayed["seq"] == first["seq"] + 2

        on_a = a.subscribe("stud")
        assert (await next_message(on_a))["seq"] == relayed["seq"]
        # A takeover: a is deposed (it may announce nothing more), b leads from the
        # database's clock, which is above every seq a sent.
        a_leads.leading, b_leads.leading = False, True
        base = int(str(relayed["seq"])) + 1000
        b.lead(base, {"stud": {"major": "10000.25"}})
        taken = await next_message(on_b)
        assert taken["type"] == "snapshot" and taken["seq"] == base + 1
        assert [w["award_id"] for w in taken["recent_wins"]] == ["A1"]  # kept, relayed
        a.meters("stud", {"major": "99999.99"})  # late, from the deposed one: goes nowhere
        b.meters("stud", {"major": "10000.50"})
        # a's own screen follows b now, through Redis: the new snapshot, then b's meters.
        # (a's relay starts within STANDBY_POLL_S: its snapshot may already hold b's meters.)
        for sub, seq in ((on_a, relayed["seq"]), (on_b, taken["seq"])):
            value = None
            while value != "10000.50":
                message = await next_message(sub)
                assert message["seq"] > seq and message["type"] in ("snapshot", "meters")
                seq, value = message["seq"], message["meters"][0]["value"]
                assert value in ("10000.25", "10000.50")
            assert seq == base + 2
        assert a.link_state("stud") == b.link_state("stud")
    finally:
        await a.stop()
        await b.stop()


async def test_a_writer_that_leads_ignores_what_its_relay_still_brings(redis_url: str) -> None:
    b = await writer(redis_url, f"standby-{uuid.uuid4().hex}", Role(True))
    try:
        base = time.time_ns() // 1_000_000 + 60_000  # the database's clock, ahead of ours
        b.lead(base, {"stud": {"major": "10000.00"}})
        b.feed_lost("lost Redis while it stood by")  # the relay's last word, late
        stale = {"type": "meters", "seq": base + 2, "link": "stud", "meters": []}
        assert b.receive("stud", json.dumps(stale))  # taken as seen: no resync
        b.restore("stud", json.dumps({**stale, "type": "snapshot", "seq": 9}))
        state = b.link_state("stud")
        assert state is not None
        assert (state["seq"], state["status"]) == (base + 1, "ok")
        assert state["meters"] == [{"meter": "major", "name": "Major", "value": "10000.00"}]
    finally:
        await b.stop()
