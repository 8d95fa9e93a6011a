"""A waiting change shows what it would do if approved now (docs/api.md "Dual control"):
the meter's value now, the seed before and after, a reset's excess to the reserve or its
funding by the reserve then the house, a correction's before and after; and what the
approval does is what it showed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.integration.app.support import build_server, running
from tests.support import OPERATOR, SUPERVISOR, Clock, bets_body

SUE = {"Authorization": "Bearer demo-supervisor-2"}
T01 = {"Authorization": "Bearer demo-table-T01"}


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    async with running(build_server(dual=True, clock=clock, outcome_wait_s=0.2).app) as c:
        yield c


async def propose(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> str:
    method = client.put if path == "seed" else client.post
    r = await method(f"/v1/links/stud/meters/major/{path}", json=body, headers=SUPERVISOR)
    assert r.status_code == 202, r.text
    change: str = r.json()["id"]
    return change


async def waiting(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    r = await client.get("/v1/changes", headers=OPERATOR)
    assert r.status_code == 200, r.text
    return {c["id"]: c for c in r.json()["changes"]}


async def test_a_waiting_reset_shows_its_value_seed_and_funding(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    # Four 1.00 wagers: 0.25 each to the meter (10,000 -> 10,001), 0.05 to the reserve.
    boxes = [(b, "10.00", "1.00") for b in range(1, 5)]
    r = await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, *boxes), headers=T01
    )
    assert r.status_code == 200, r.text
    seed = await propose(client, "seed", {"seed": "12000.00", "reason": "bigger"})
    # A reset and a lowering correction carry a listed reason (docs/api.md "Reason codes").
    reset = await propose(client, "reset", {"reason": "sensor fault", "reason_code": "malfunction"})
    adjust = await propose(
        client,
        "corrections",
        {
            "kind": "adjust",
            "amount": "-12.50",
            "reason": "miscount",
            "reason_code": "error_correction",
        },
    )
    changes = await waiting(client)
    assert changes[seed]["consequence"] == {
        "value_now": "10001.00", "value_after": "10001.00",
        "seed_before": "10000.00", "seed_after": "12000.00",
        "reserve_now": "0.20", "reserve_after": "0.20",
        "from_reserve": "0.00", "from_house": "0.00", "to_reserve": "0.00", "house_cover": "0.00",
    }  # fmt: skip
    assert changes[reset]["consequence"] == {
        "value_now": "10001.00", "value_after": "10000.00",
        "seed_before": "10000.00", "seed_after": "10000.00",
        "reserve_now": "0.20", "reserve_after": "1.20",
        "from_reserve": "0.00", "from_house": "0.00", "to_reserve": "1.00", "house_cover": "0.00",
    }  # fmt: skip
    assert changes[adjust]["consequence"]["value_after"] == "9988.50"

    r = await client.post(f"/v1/changes/{seed}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    after = (await waiting(client))[reset]["consequence"]
    assert (after["seed_after"], after["value_after"]) == ("12000.00", "12000.00")
    assert (after["from_reserve"], after["from_house"]) == ("0.20", "1998.80")
    floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
    assert next(c for c in floor["changes"] if c["id"] == reset)["consequence"] == after

    r = await client.post(f"/v1/changes/{reset}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    # Pending while T01/R1 is open: `value` and `reserve` count it (docs/api.md). The
    # reserve's 0.20 went into the seed, the house gave the rest (1,998.80).
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["reserve"]) == ("12000.00", "0.00")
    assert "consequence" not in (await waiting(client))[reset]


async def test_a_waiting_suspension_moves_no_meter_its_consequence_is_null(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/links/stud/suspend", json={"reason": "fault"}, headers=SUPERVISOR)
    assert r.status_code == 202, r.text
    change = r.json()["id"]
    assert (await waiting(client))[change]["consequence"] is None
    floor = await client.get("/v1/floor", headers=OPERATOR)
    assert floor.status_code == 200, floor.text
    assert [c["consequence"] for c in floor.json()["changes"]] == [None]
