"""The link's signs say when the progressive is not in play (rules 5.17, 5.18.2 c)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.subscription import Subscription
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock

SAM = {"Authorization": "Bearer demo-supervisor"}


async def next_status(sub: Subscription) -> dict[str, Any]:
    """The next `status` message (within a second: 'its signs say so within a second')."""
    while True:
        message = json.loads(await asyncio.wait_for(sub.__anext__(), 1.0))
        if message["type"] == "status":
            result: dict[str, Any] = message
            return result


async def test_a_suspended_link_and_its_tables_reach_the_signs_rule_5_18_2() -> None:
    clock = Clock()
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=10, ping_s=3600.0)
    server = build_server(journal=KeptJournal(), clock=clock, broadcaster=broadcaster)
    async with running(server.app) as client:
        sub = broadcaster.subscribe("stud")
        first = json.loads(await asyncio.wait_for(sub.__anext__(), 1.0))
        assert first["type"] == "snapshot"
        assert (first["in_play"], first["tables"]) == (True, [])
        await client.post(
            "/v1/tables/T01/suspend", json={"reason": "sensor", "boxes": [3]}, headers=SAM
        )
        status = await next_status(sub)
        assert status["status"] == "ok"
        assert (status["in_play"], status["reason"]) == (True, "sensor")
        assert status["tables"] == [{"table": "T01", "boxes": [3]}]
        await client.post("/v1/links/stud/suspend", json={"reason": "controller"}, headers=SAM)
        status = await next_status(sub)
        assert (status["in_play"], status["reason"]) == (False, "controller")
        assert status["since"] == clock.at()
        # What a screen connecting now reads.
        state = (await client.get("/v1/links/stud")).json()
        assert (state["in_play"], state["reason"]) == (False, "controller")
        await client.post("/v1/links/stud/resume", json={"reason": "ok"}, headers=SAM)
        await client.post("/v1/tables/T01/resume", json={"reason": "ok"}, headers=SAM)
        await next_status(sub)
        status = await next_status(sub)
        assert (status["in_play"], status["tables"], status["reason"]) == (True, [], None)
