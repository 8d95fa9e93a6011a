"""A pending award says why on the award itself (docs/api.md "Records and reports", a
round's `GET`): `held_by` (the open rounds holding it) and `final_by` in `GET /v1/awards`
rows and in the awards of `GET` on its round, as in `GET /v1/floor`; nothing of it once
the award is final."""

from __future__ import annotations

import httpx

from app.state.timefmt import format_time
from tests.integration.app.api.test_floor_holds import T02, open_round_then_a_royal_flush
from tests.support import OPERATOR, SUPERVISOR, Clock


def holder(opened: int) -> dict[str, str]:
    return {
        "table": "T01",
        "round": "R1",
        "open_since": format_time(opened),
        "ends_by": format_time(opened + 180_000),  # round_timeout_ms
    }


async def test_a_pending_award_in_the_awards_listing_names_its_holding_round(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    opened = await open_round_then_a_royal_flush(client, clock)
    clock.now += 10_000
    r = await client.get("/v1/awards?kind=meter", headers=OPERATOR)
    assert r.status_code == 200, r.text
    [award] = r.json()["awards"]
    assert award["state"] == "pending"
    assert award["held_by"] == [holder(opened)]
    assert award["final_by"] == format_time(opened + 180_000)
    r = await client.get("/v1/awards?kind=meter&format=jsonl", headers=OPERATOR)
    assert r.status_code == 200, r.text
    assert r.json()["held_by"] == [holder(opened)]


async def test_a_pending_award_in_its_rounds_view_names_its_holding_round(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    opened = await open_round_then_a_royal_flush(client, clock)
    r = await client.get("/v1/tables/T02/rounds/R1", headers=T02)
    assert r.status_code == 200, r.text
    [award] = r.json()["awards"]
    assert (award["state"], award["held_by"]) == ("pending", [holder(opened)])
    assert award["final_by"] == format_time(opened + 180_000)


async def test_a_final_award_says_nothing_of_holds(client: httpx.AsyncClient, clock: Clock) -> None:
    await open_round_then_a_royal_flush(client, clock)
    clock.now += 40_000  # past the award's hold: once T01/R1 is void, nothing holds it
    void = {
        "kind": "void_round", "table": "T01", "round": "R1", "reason": "table lost it",
        "reason_code": "error_correction",  # it lowers the meter (docs/api.md "Reason codes")
    }  # fmt: skip
    r = await client.post("/v1/links/stud/meters/major/corrections", json=void, headers=SUPERVISOR)
    assert r.status_code == 200, r.text
    r = await client.get("/v1/tables/T02/rounds/R1?wait=5", headers=T02)
    [award] = r.json()["awards"]
    assert award["state"] == "final"
    assert "held_by" not in award and "final_by" not in award
    [row] = (await client.get("/v1/awards?kind=meter", headers=OPERATOR)).json()["awards"]
    assert row["state"] == "final" and "held_by" not in row
