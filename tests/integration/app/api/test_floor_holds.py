"""Every pending award says why (docs/design.md "The watermark"): `GET /v1/floor` names
the open round holding it (table, round, open since, when its hold ends at the latest),
each table's open rounds, and warns once a round has held awards past their hold longer
than the floor's `hold_warning_ms` (30 s). The remedy is the table's outcome or void
(rule 5.17), or a supervisor's `void_round` correction."""

from __future__ import annotations

from typing import Any

import httpx

from app.state.timefmt import format_time
from tests.support import OPERATOR, SUPERVISOR, Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}


async def floor(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get("/v1/floor", headers=OPERATOR)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def open_round_then_a_royal_flush(client: httpx.AsyncClient, clock: Clock) -> int:
    """T01/R1 closes its bets and posts nothing more; T02/R1's royal flush is dealt 5 s
    later. Returns T01/R1's closed_at."""
    opened = clock.now
    r = await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T01
    )
    assert r.status_code == 200, r.text
    clock.now += 5_000
    r = await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T02
    )
    assert r.status_code == 200, r.text
    royal = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=royal, headers=T02)
    assert r.status_code == 200, r.text
    return opened


async def test_a_pending_award_names_the_round_holding_it(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    opened = await open_round_then_a_royal_flush(client, clock)
    clock.now += 10_000
    view = await floor(client)
    stud = next(link for link in view["links"] if link["link"] == "stud")
    [award] = stud["pending"]
    holder = {
        "table": "T01",
        "round": "R1",
        "open_since": format_time(opened),
        "ends_by": format_time(opened + 180_000),  # round_timeout_ms: it turns stale then
    }
    assert award["held_by"] == [holder]
    assert award["final_by"] == format_time(opened + 180_000)
    [holding] = stud["holding_rounds"]
    # Dealt at opened + 5,010, its hold (2 s) passed at opened + 7,010: held 7,990 ms since.
    assert holding == {
        **holder,
        "awards": [award["id"]],
        "held_for_ms": 7_990,
        "warning": False,
    }
    assert view["hold_warning_ms"] == 30_000
    tables = {t["table"]: t["open_rounds"] for t in view["tables"]}
    assert tables == {"T01": 1, "T02": 0, "T03": 0, "T04": 0, "T05": 0, "T06": 0}

    clock.now += 25_000  # held 32,990 ms: past the warning
    [holding] = (await floor(client))["links"][0]["holding_rounds"]
    assert (holding["held_for_ms"], holding["warning"]) == (32_990, True)


async def test_voiding_the_holding_round_from_the_console_releases_the_award(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await open_round_then_a_royal_flush(client, clock)
    clock.now += 40_000
    # A supervisor's void through the audited path (docs/api.md, corrections).
    void = {
        "kind": "void_round", "table": "T01", "round": "R1", "reason": "table lost the round",
        "reason_code": "error_correction",  # it lowers the meter (docs/api.md "Reason codes")
    }  # fmt: skip
    r = await client.post("/v1/links/stud/meters/major/corrections", json=void, headers=SUPERVISOR)
    assert r.status_code == 200, r.text
    r = await client.get("/v1/tables/T02/rounds/R1?wait=5", headers=T02)
    assert r.json()["awards"][0]["state"] == "final"
    stud = (await floor(client))["links"][0]
    assert (stud["pending"], stud["holding_rounds"]) == ([], [])
    assert {t["table"]: t["open_rounds"] for t in (await floor(client))["tables"]}["T01"] == 0


async def test_an_award_past_its_hold_with_nothing_open_is_held_by_nothing(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T02
    )
    royal = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=royal, headers=T02)
    assert r.status_code == 200
    [award] = (await floor(client))["links"][0]["pending"]
    assert award["held_by"] == []
    assert award["final_by"] == clock.at(10 + 2_000)  # its hold only
