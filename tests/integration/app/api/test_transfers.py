"""Transfers between meters (always two supervisors) and the retirement of a link, through
the HTTP API on the real PostgreSQL journal (docs/api.md "Transfers and retirement")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from app.audit.verify_run import verify
from app.config.floor_file import FloorFile, parse_floor
from app.store.journal import PostgresJournal
from tests.integration.app.support import build_server, running
from tests.support import DEMO, Clock, bets_body

pytestmark = pytest.mark.integration

OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
T02 = {"Authorization": "Bearer demo-table-T02"}
T19 = {"Authorization": "Bearer demo-table-T19"}
PROBLEM = "application/problem+json"

# A link no table names any more: its seed is still on its meter.
OLD_LINK = """
[[links]]
id = "old"
name = "Old Progressive"
  [[links.meters]]
  id = "major"
  seed = "500.00"
  rate = "0.25"
  reserve_rate = "0.05"
"""
# The same link given a table again in a later floor file.
T19_ON_OLD = """
[[tables]]
id = "T19"
game = "casino_stud"
link = "old"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "37978a6db220c254e4971abf1bee0db3182a38d18372e4d8c486c14d9cd3ec1b"
"""


def floor(*extra: str) -> FloorFile:
    text = Path(DEMO).read_text()
    head, tables = text.split("[[tables]]", 1)
    return parse_floor(head + "".join(e for e in extra if "[[links]]" in e) + "[[tables]]"
                       + tables + "".join(e for e in extra if "[[links]]" not in e))  # fmt: skip


@pytest.fixture
async def client(pool: asyncpg.Pool, clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(floor(OLD_LINK), journal=PostgresJournal(pool), clock=clock)
    async with running(server.app) as c:
        yield c


async def meter(client: httpx.AsyncClient, link: str, name: str = "major") -> dict[str, Any]:
    r = await client.get(f"/v1/links/{link}/meters/{name}", headers=OPERATOR)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def money(client: httpx.AsyncClient, link: str) -> tuple[str, str, str, str]:
    m = await meter(client, link)
    return m["value"], m["final_value"], m["reserve"], m["final_reserve"]


async def until_final(client: httpx.AsyncClient, clock: Clock, link: str) -> None:
    """Past the hold: the writer's timer makes the link's pending reset final."""
    clock.now += 5_000
    for _ in range(200):
        m = await meter(client, link)
        if not m["pending_awards"] and (m["value"], m["reserve"]) == (
            m["final_value"],
            m["final_reserve"],
        ):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{link}: still pending")


async def tcp_with_a_reserve(client: httpx.AsyncClient, clock: Clock) -> None:
    """tcp/major: 5050.00 final, reserve 123.45 (a reset moved 123.45 above the seed to
    the reserve; then 50.00 added by a correction)."""
    up = {"kind": "adjust", "amount": "123.45", "reason": "fill"}
    r = await client.post("/v1/links/tcp/meters/major/corrections", json=up, headers=SAM)
    assert r.status_code == 200, r.text
    reset = {"reason": "start over", "reason_code": "error_correction"}
    r = await client.post("/v1/links/tcp/meters/major/reset", json=reset, headers=SAM)
    assert r.status_code == 200, r.text
    await until_final(client, clock, "tcp")
    up["amount"] = "50.00"
    r = await client.post("/v1/links/tcp/meters/major/corrections", json=up, headers=SAM)
    assert r.status_code == 200, r.text
    assert await money(client, "tcp") == ("5050.00", "5050.00", "123.45", "123.45")


async def propose(
    client: httpx.AsyncClient, source: str, body: dict[str, Any], who: dict[str, str] = SAM
) -> httpx.Response:
    return await client.post(f"/v1/links/{source}/meters/major/transfers", json=body, headers=who)


TO_STUD = {"to_link": "stud", "to_meter": "major", "reason": "tcp closes"}


# -- a transfer ------------------------------------------------------------------------


async def test_a_transfer_waits_for_a_second_supervisor_and_moves_exactly(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await tcp_with_a_reserve(client, clock)
    # The floor has dual_control off: a transfer is a proposal all the same.
    body = {**TO_STUD, "amount": "above_seed", "include_reserve": True}
    r = await propose(client, "tcp", body)
    assert r.status_code == 202, r.text
    proposal = r.json()
    assert proposal["state"] == "proposed"
    assert proposal["change"]["amount"] == "above_seed"
    assert await money(client, "tcp") == ("5050.00", "5050.00", "123.45", "123.45")
    assert await money(client, "stud") == ("10000.00", "10000.00", "0.00", "0.00")

    mine = await client.post(f"/v1/changes/{proposal['id']}/approve", headers=SAM)
    assert mine.status_code == 409, mine.text
    assert "different supervisor" in mine.json()["detail"]

    r = await client.post(f"/v1/changes/{proposal['id']}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    done = r.json()
    assert (done["amount"], done["reserve"]) == ("50.00", "123.45")
    assert (done["by"], done["approved_by"]) == ("sam", "sue")
    assert await money(client, "tcp") == ("5000.00", "5000.00", "0.00", "0.00")
    assert await money(client, "stud") == ("10050.00", "10050.00", "123.45", "123.45")

    audit = (await client.get("/v1/audit?action=transfer", headers=OPERATOR)).json()["audit"]
    assert [(a["action"], a["link"], a["amount"], a["reserve"]) for a in audit] == [
        ("transfer:out", "tcp", "50.00", "123.45"),
        ("transfer:in", "stud", "50.00", "123.45"),
    ]
    assert audit[0]["to"] == "stud/major" and audit[0]["reason_code"] == "transfer"


async def test_the_reconciliation_of_both_links_shows_it_and_balances(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await tcp_with_a_reserve(client, clock)
    r = await propose(client, "tcp", {**TO_STUD, "amount": "20.00", "include_reserve": True})
    await client.post(f"/v1/changes/{r.json()['id']}/approve", headers=SUE)
    report = (await client.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
    rows = {row["link"]: row for row in report["meters"]}
    tcp, stud = rows["tcp"], rows["stud"]
    assert (tcp["transferred_out"], tcp["transferred_out_reserve"]) == ("20.00", "123.45")
    assert (tcp["transferred_in"], tcp["transferred_in_reserve"]) == ("0.00", "0.00")
    assert (stud["transferred_in"], stud["transferred_in_reserve"]) == ("20.00", "123.45")
    assert (tcp["closing_value"], tcp["closing_reserve"]) == ("5030.00", "0.00")
    assert (stud["closing_value"], stud["closing_reserve"]) == ("10020.00", "123.45")
    assert tcp["balanced"] and stud["balanced"]
    (reduction,) = [x for x in report["reductions"] if x["action"] == "transfer:out"]
    assert (reduction["link"], reduction["reason_code"]) == ("tcp", "transfer")
    csv = await client.get("/v1/reports/reconciliation?format=csv", headers=OPERATOR)
    header = csv.text.splitlines()[0].split(",")
    assert header[-4:] == [
        "transferred_out", "transferred_in", "transferred_out_reserve", "transferred_in_reserve",
    ]  # fmt: skip
    (line,) = [x for x in csv.text.splitlines() if x.startswith("tcp,")]
    assert line.split(",")[-4:] == ["20.00", "0.00", "123.45", "0.00"]


async def test_verify_replays_a_transfer(
    pool: asyncpg.Pool, client: httpx.AsyncClient, clock: Clock
) -> None:
    await tcp_with_a_reserve(client, clock)
    r = await propose(client, "tcp", {**TO_STUD, "amount": "above_seed", "include_reserve": True})
    assert (await client.post(f"/v1/changes/{r.json()['id']}/approve", headers=SUE)).is_success
    config = build_server(floor(OLD_LINK)).writer.service.config
    report = await verify(PostgresJournal(pool), config)
    assert report.discrepancies == ()
    totals = {(m.link, m.meter): m for m in report.meters}
    assert (totals[("tcp", "major")].value, totals[("tcp", "major")].reserve) == (
        5000 * 10**6,
        0,
    )
    assert totals[("stud", "major")].reserve == 123_450_000
    assert all(m.balanced for m in report.meters)


# -- refusals: nothing changes ---------------------------------------------------------


async def nothing_changed(client: httpx.AsyncClient, audit_rows: int = 0) -> None:
    assert (await client.get("/v1/changes", headers=OPERATOR)).json()["changes"] == []
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert len(audit) == audit_rows


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"amount": "12.345"}, "amount"),
        ({"amount": "-1.00"}, "amount"),
        ({"amount": "everything"}, "amount"),
        ({"include_reserve": "yes"}, "include_reserve"),
        ({"to_meter": "no such/meter"}, "to_meter"),
        ({"reason": ""}, "reason"),
    ],
)
async def test_a_bad_field_is_422_naming_it(
    client: httpx.AsyncClient, change: dict[str, Any], field: str
) -> None:
    r = await propose(client, "tcp", {**TO_STUD, "amount": "1.00", **change})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == PROBLEM
    assert field in {e["loc"][1] for e in r.json()["errors"]}
    await nothing_changed(client)


async def test_an_amount_of_zero_and_a_transfer_to_itself_are_422(
    client: httpx.AsyncClient,
) -> None:
    r = await propose(client, "stud", {**TO_STUD, "amount": "0.00"})
    assert r.status_code == 422, r.text
    r = await propose(client, "stud", {**TO_STUD, "amount": "1.00"})
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"][-1] == "to_meter"
    await nothing_changed(client)


async def test_an_unknown_meter_is_404_before_anything_is_proposed(
    client: httpx.AsyncClient,
) -> None:
    r = await propose(client, "tcp", {**TO_STUD, "to_link": "nowhere", "amount": "1.00"})
    assert r.status_code == 404, r.text
    r = await client.post(
        "/v1/links/tcp/meters/minor/transfers", json={**TO_STUD, "amount": "1.00"}, headers=SAM
    )
    assert r.status_code == 404, r.text
    await nothing_changed(client)


async def test_below_the_seed_of_a_link_in_play_is_409(client: httpx.AsyncClient) -> None:
    r = await propose(client, "tcp", {**TO_STUD, "amount": "0.01"})
    assert r.status_code == 409, r.text
    assert "below its seed 5000.00" in r.json()["detail"]
    assert "suspended" in r.json()["detail"]
    await nothing_changed(client)


async def test_a_pending_award_on_the_source_is_409(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await client.post("/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")),
                      headers=T02)  # fmt: skip
    royal = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=royal, headers=T02)
    assert r.status_code in (200, 201), r.text
    r = await propose(client, "stud", {**TO_STUD, "to_link": "tcp", "amount": "all"})
    assert r.status_code == 409, r.text
    assert "stud/major has an award pending" in r.json()["detail"]
    await nothing_changed(client)


async def test_an_approval_rechecks_and_a_refused_one_changes_nothing(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await tcp_with_a_reserve(client, clock)
    rows = len((await client.get("/v1/audit", headers=OPERATOR)).json()["audit"])
    r = await propose(client, "tcp", {**TO_STUD, "amount": "50.00"})
    assert r.status_code == 202, r.text
    down = {"kind": "adjust", "amount": "-10.00", "reason": "x", "reason_code": "malfunction"}
    await client.post("/v1/links/tcp/meters/major/corrections", json=down, headers=SAM)
    refused = await client.post(f"/v1/changes/{r.json()['id']}/approve", headers=SUE)
    assert refused.status_code == 409, refused.text
    assert "below its seed" in refused.json()["detail"]
    assert await money(client, "tcp") == ("5040.00", "5040.00", "123.45", "123.45")
    assert await money(client, "stud") == ("10000.00", "10000.00", "0.00", "0.00")
    changes = (await client.get("/v1/changes", headers=OPERATOR)).json()["changes"]
    assert [c["state"] for c in changes] == ["proposed"]
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert len(audit) == rows + 2  # the proposal and the correction


# -- retirement ------------------------------------------------------------------------


async def test_a_link_a_table_names_cannot_be_retired(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/links/tcp/retire", json={"reason": "closing"}, headers=SAM)
    assert r.status_code == 409, r.text
    assert "tables T03 are assigned to it" in r.json()["detail"]
    await nothing_changed(client)


async def test_a_link_holding_money_cannot_be_retired(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/links/old/retire", json={"reason": "closing"}, headers=SAM)
    assert r.status_code == 409, r.text
    assert "link old holds money: major (value 500.000000" in r.json()["detail"]
    await nothing_changed(client)


async def empty_old(client: httpx.AsyncClient) -> None:
    """Suspended, so that its meter may go below its seed; its whole value to stud."""
    r = await client.post("/v1/links/old/suspend", json={"reason": "closing"}, headers=SAM)
    assert r.status_code == 200, r.text
    r = await propose(client, "old", {**TO_STUD, "amount": "all", "include_reserve": True})
    assert r.status_code == 202, r.text
    r = await client.post(f"/v1/changes/{r.json()['id']}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    assert r.json()["amount"] == "500.00"


async def test_a_retired_link_leaves_the_floor_and_stays_in_the_reports(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/v1/links/old")).status_code == 200
    await empty_old(client)
    assert await money(client, "old") == ("0.00", "0.00", "0.00", "0.00")
    r = await client.post("/v1/links/old/retire", json={"reason": "closing"}, headers=SAM)
    assert r.status_code == 200, r.text
    assert (r.json()["link"], r.json()["retired"]) == ("old", True)

    view = (await client.get("/v1/floor", headers=OPERATOR)).json()
    assert [link["link"] for link in view["links"]] == ["stud", "tcp", "tiers"]
    assert (await client.get("/v1/links/old")).status_code == 404
    assert (await client.get("/v1/links/stud")).status_code == 200

    report = (await client.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
    (old,) = [row for row in report["meters"] if row["link"] == "old"]
    assert (old["opening_value"], old["transferred_out"], old["closing_value"]) == (
        "500.00", "500.00", "0.00",
    )  # fmt: skip
    r = await propose(client, "stud", {**TO_STUD, "to_link": "old", "amount": "1.00"})
    assert r.status_code == 409, r.text
    assert r.json()["type"] == "link-retired"
    again = await client.post("/v1/links/old/retire", json={"reason": "twice"}, headers=SAM)
    assert again.status_code == 409, again.text
    seed = {"seed": "600.00", "reason": "no"}
    r = await client.put("/v1/links/old/meters/major/seed", json=seed, headers=SAM)
    assert r.status_code == 409, r.text
    assert r.json()["type"] == "link-retired"


async def test_a_retired_link_refuses_bets_after_a_restart_and_verify_replays_it(
    pool: asyncpg.Pool, clock: Clock
) -> None:
    server = build_server(floor(OLD_LINK), journal=PostgresJournal(pool), clock=clock)
    async with running(server.app) as client:
        await empty_old(client)
        r = await client.post("/v1/links/old/retire", json={"reason": "closing"}, headers=SAM)
        assert r.status_code == 200, r.text
    # A later floor file gives the retired link a table: its bets are refused.
    later = floor(OLD_LINK, T19_ON_OLD)
    server = build_server(later, journal=PostgresJournal(pool), clock=clock)
    async with running(server.app) as client:
        r = await client.post(
            "/v1/tables/T19/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")),
            headers=T19,
        )  # fmt: skip
        assert r.status_code == 409, r.text
        assert r.headers["content-type"] == PROBLEM
        assert r.json()["type"] == "link-retired"
        assert "link old is retired" in r.json()["detail"]
        assert (await client.get("/v1/links/old")).status_code == 404
        config = server.writer.service.config
    report = await verify(PostgresJournal(pool), config)
    assert report.discrepancies == ()
    assert report.kinds["retire"] == 1


async def test_the_parameters_record_a_retirement(client: httpx.AsyncClient) -> None:
    """A retired link is part of the parameters in force: `GET /v1/config` lists it and its
    history has the change (docs/api.md "Parameters")."""
    await empty_old(client)
    before = (await client.get("/v1/config", headers=OPERATOR)).json()
    assert before["retired"] == {}
    r = await client.post("/v1/links/old/retire", json={"reason": "closing"}, headers=SAM)
    assert r.status_code == 200, r.text
    after = (await client.get("/v1/config", headers=OPERATOR)).json()
    (retired,) = after["retired"].items()
    assert retired[0] == "old"
    assert (retired[1]["by"], retired[1]["reason"]) == ("sam", "closing")
    assert (
        retired[1]["seq"] == (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"]
    )
    history = (await client.get("/v1/config/history", headers=OPERATOR)).json()["changes"]
    assert history[-1]["state"] == "retired"
    assert history[-1]["changes"] == [
        {"parameter": "links[old].retired", "before": False, "after": True}
    ]
