"""Suspend and resume: a link, a table or boxes out of play (rules 5.17, 5.18), on the record."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.audit.replay_check import Verifier
from app.store.journal import GENESIS, MemoryJournal, chain_hash
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
T03 = {"Authorization": "Bearer demo-table-T03"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
PROBLEM = "application/problem+json"


@pytest.fixture
def journal() -> KeptJournal:
    return KeptJournal()


@pytest.fixture
async def client(clock: Clock, journal: KeptJournal) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as c:
        yield c


@pytest.fixture
async def dual(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(dual=True, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as c:
        yield c


async def bets(
    client: httpx.AsyncClient, table: str, round_id: str, clock: Clock, *boxes: tuple[int, str, str]
) -> httpx.Response:
    headers = {"Authorization": f"Bearer demo-table-{table}"}
    path = f"/v1/tables/{table}/rounds/{round_id}/bets"
    return await client.post(path, json=bets_body(clock, *boxes), headers=headers)


async def test_a_suspended_box_refuses_its_jackpot_wager_others_accepted_rule_5_18_2(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post(
        "/v1/tables/T01/suspend", json={"reason": "box 3 sensor fault", "boxes": [3]}, headers=SAM
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["action"] == "suspend"
    assert answer["by"] == "sam"
    assert [(p["scope"], p["table"], p["box"], p["link"]) for p in answer["suspended"]] == [
        ("box", "T01", 3, "stud")
    ]
    clock.now += 1_000
    refused = await bets(client, "T01", "R1", clock, (1, "10.00", "1.00"), (3, "10.00", "1.00"))
    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"] == PROBLEM
    problem = refused.json()
    assert problem["type"] == "progressive-not-in-play"
    assert "table T01 box 3" in problem["detail"]
    assert "box 3 sensor fault" in problem["detail"]
    assert "2027-01-15T08:00:00.000Z" in problem["detail"]  # since: the suspension's time
    assert [(s["box"], s["since"], s["reason"]) for s in problem["suspended"]] == [
        (3, "2027-01-15T08:00:00.000Z", "box 3 sensor fault")
    ]
    # Box 3 without a jackpot wager, box 1 with one: in play.
    accepted = await bets(client, "T01", "R1", clock, (1, "10.00", "1.00"), (3, "10.00", "0"))
    assert accepted.status_code == 200, accepted.text
    assert [b["jackpot"] for b in accepted.json()["boxes"]] == ["accepted", "none"]


async def test_a_suspended_link_refuses_every_tables_jackpot_wagers_rule_5_17(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post(
        "/v1/links/stud/suspend", json={"reason": "controller fault"}, headers=SAM
    )
    assert r.status_code == 200, r.text
    for table in ("T01", "T02"):
        refused = await bets(client, table, "R1", clock, (2, "10.00", "1.00"))
        assert refused.status_code == 409, refused.text
        assert refused.json()["type"] == "progressive-not-in-play"
        assert "link stud suspended since" in refused.json()["detail"]
    # Another link's table is in play; an ante-only box on the suspended link is too.
    assert (await bets(client, "T03", "R1", clock, (1, "10.00", "1.00"))).status_code == 200
    assert (await bets(client, "T01", "R2", clock, (1, "10.00", "0"))).status_code == 200
    # Resume: everything is in play again.
    r = await client.post("/v1/links/stud/resume", json={"reason": "fixed"}, headers=SAM)
    assert r.status_code == 200, r.text
    assert [(p["scope"], p["resumed_by"]) for p in r.json()["resumed"]] == [("link", "sam")]
    assert (await bets(client, "T02", "R1", clock, (2, "10.00", "1.00"))).status_code == 200


async def test_a_round_accepted_before_the_suspension_is_paid_rule_5_18_1(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    assert (await bets(client, "T02", "R1", clock, (1, "10.00", "1.00"))).status_code == 200
    r = await client.post("/v1/links/stud/suspend", json={"reason": "fault"}, headers=SAM)
    assert r.status_code == 200
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02)
    assert r.status_code == 200, r.text
    clock.now += 5_000
    view = (await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=T02)).json()
    # 10000.00 seed + 0.25 of the 1.00 wager, the royal flush takes it all (4.2).
    assert [(a["state"], a["amount"]) for a in view["awards"]] == [("final", "10000.25")]


async def test_a_whole_table_and_its_boxes_resume_together(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await client.post("/v1/tables/T01/suspend", json={"reason": "a", "boxes": [2, 5]}, headers=SAM)
    await client.post("/v1/tables/T01/suspend", json={"reason": "b"}, headers=SAM)
    assert (await bets(client, "T01", "R1", clock, (1, "10.00", "1.00"))).status_code == 409
    # T02 on the same link is in play.
    assert (await bets(client, "T02", "R1", clock, (1, "10.00", "1.00"))).status_code == 200
    r = await client.post("/v1/tables/T01/resume", json={"reason": "ok"}, headers=SAM)
    assert sorted((p["scope"], p["box"]) for p in r.json()["resumed"]) == [
        ("box", 2),
        ("box", 5),
        ("table", None),
    ]
    assert (await bets(client, "T01", "R1", clock, (5, "10.00", "1.00"))).status_code == 200


async def test_refusals_name_the_field_and_change_nothing(client: httpx.AsyncClient) -> None:
    cases: list[tuple[str, dict[str, Any], dict[str, str], int]] = [
        ("/v1/links/nope/suspend", {"reason": "x"}, SAM, 404),
        ("/v1/tables/T99/suspend", {"reason": "x"}, SAM, 404),
        ("/v1/tables/T01/suspend", {"reason": "x", "boxes": [8]}, SAM, 422),
        ("/v1/tables/T01/suspend", {"reason": "x", "boxes": [2, 2]}, SAM, 422),
        ("/v1/tables/T01/suspend", {"reason": "x", "boxes": []}, SAM, 422),
        ("/v1/tables/T01/suspend", {"reason": " "}, SAM, 422),
        ("/v1/tables/T01/suspend", {}, SAM, 422),
        ("/v1/links/stud/suspend", {"reason": "x", "boxes": [1]}, SAM, 422),
        ("/v1/links/stud/resume", {"reason": "x"}, SAM, 409),
        ("/v1/links/stud/suspend", {"reason": "x"}, OPERATOR, 403),
        ("/v1/links/stud/suspend", {"reason": "x"}, T01, 403),
        ("/v1/links/stud/suspend", {"reason": "x"}, {}, 401),
    ]
    for path, body, headers, status in cases:
        r = await client.post(path, json=body, headers=headers)
        assert r.status_code == status, (path, body, r.text)
        assert r.headers["content-type"] == PROBLEM
    r = await client.post("/v1/tables/T01/suspend", json={"reason": "x", "boxes": [8]}, headers=SAM)
    assert r.json()["errors"][0]["loc"] == ["body", "boxes", 0]
    # The journal holds the start's entries only: the parameters read at start (`config`)
    # and the first draw of the demo floor's must-hit-by level (`arm`).
    assert (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"] == 2
    await client.post("/v1/links/stud/suspend", json={"reason": "first"}, headers=SAM)
    again = await client.post("/v1/links/stud/suspend", json={"reason": "x"}, headers=SAM)
    assert again.status_code == 409
    assert "link stud suspended since" in again.json()["detail"]


async def test_suspensions_are_audited(client: httpx.AsyncClient) -> None:
    await client.post("/v1/tables/T01/suspend", json={"reason": "fault", "boxes": [3]}, headers=SAM)
    await client.post("/v1/tables/T01/resume", json={"reason": "mended", "boxes": [3]}, headers=SUE)
    audit = (await client.get("/v1/audit?action=suspend", headers=OPERATOR)).json()["audit"]
    assert [(a["who"], a["table"], a["boxes"], a["reason"]) for a in audit] == [
        ("sam", "T01", [3], "fault")
    ]
    audit = (await client.get("/v1/audit?table=T01", headers=OPERATOR)).json()["audit"]
    assert [a["action"] for a in audit] == ["suspend", "resume"]


async def test_dual_control_suspension_waits_for_a_second_supervisor(
    dual: httpx.AsyncClient, clock: Clock
) -> None:
    r = await dual.post("/v1/links/stud/suspend", json={"reason": "fault"}, headers=SAM)
    assert r.status_code == 202, r.text
    proposal = r.json()
    assert proposal["state"] == "proposed"
    assert proposal["change"] == {
        "kind": "suspend", "link": "stud", "table": None, "boxes": None, "reason": "fault"
    }  # fmt: skip
    # Only proposed: still in play.
    assert (await bets(dual, "T01", "R1", clock, (1, "10.00", "1.00"))).status_code == 200
    own = await dual.post(f"/v1/changes/{proposal['id']}/approve", headers=SAM)
    assert own.status_code == 409
    r = await dual.post(f"/v1/changes/{proposal['id']}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    assert r.json()["action"] == "suspend" and r.json()["by"] == "sam"
    assert (await bets(dual, "T01", "R2", clock, (1, "10.00", "1.00"))).status_code == 409
    # A resume is a proposal too; a rejected one changes nothing.
    r = await dual.post("/v1/links/stud/resume", json={"reason": "fixed"}, headers=SUE)
    assert r.status_code == 202
    await dual.post(f"/v1/changes/{r.json()['id']}/reject", json={"reason": "no"}, headers=SAM)
    assert (await bets(dual, "T01", "R3", clock, (1, "10.00", "1.00"))).status_code == 409
    # Proposing to suspend what is suspended is refused at once.
    r = await dual.post("/v1/links/stud/suspend", json={"reason": "x"}, headers=SUE)
    assert r.status_code == 409


async def test_a_restart_keeps_what_is_suspended(clock: Clock, journal: KeptJournal) -> None:
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        r = await client.post(
            "/v1/tables/T02/suspend", json={"reason": "fault", "boxes": [4]}, headers=SAM
        )
        assert r.status_code == 200
    again = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(again.app) as client:
        refused = await bets(client, "T02", "R1", clock, (4, "10.00", "1.00"))
        assert refused.status_code == 409
        assert refused.json()["suspended"][0]["reason"] == "fault"


async def test_jackpot_verify_replays_suspensions(clock: Clock) -> None:
    journal = MemoryJournal()
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        await client.post("/v1/links/stud/suspend", json={"reason": "fault"}, headers=SAM)
        await bets(client, "T01", "R1", clock, (1, "10.00", "0"))
        clock.now += 60_000
        await client.post("/v1/links/stud/resume", json={"reason": "fixed"}, headers=SAM)
        await bets(client, "T01", "R2", clock, (1, "10.00", "1.00"))
        verifier = Verifier(server.writer.service.config)
        async for row in journal.read(0):
            verifier.feed(row)
    report = verifier.report()
    assert report.discrepancies == ()
    assert (report.kinds["suspend"], report.kinds["resume"], report.kinds["bets"]) == (1, 1, 2)
    periods = verifier.service.in_play.periods
    assert [(p.scope, p.since, p.until) for p in periods] == [
        ("link", clock.now - 60_000, clock.now)
    ]


async def test_verify_names_a_jackpot_wager_accepted_while_suspended_rule_5_18_2(
    clock: Clock,
) -> None:
    journal = MemoryJournal()
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        assert (await bets(client, "T01", "R1", clock, (1, "10.00", "1.00"))).status_code == 200
        await client.post("/v1/links/stud/suspend", json={"reason": "fault"}, headers=SAM)
        config = server.writer.service.config
        rows = [row async for row in journal.read(0)]
    # The same entries with the suspension before the bets (after the start's entries: the
    # parameters, which every journal records first, and the mystery level's first draw):
    # a bets entry the rules refuse.
    swapped, previous = [], GENESIS
    first, rest = rows[:2], rows[2:]
    reordered = (
        first + [r for r in rest if r.kind == "suspend"] + [r for r in rest if r.kind != "suspend"]
    )
    assert [r.kind for r in reordered][:4] == ["config", "arm", "suspend", "bets"]
    for seq, row in enumerate(reordered, start=1):
        row = dataclasses.replace(row, seq=seq, hash=chain_hash(previous, row.entry))
        swapped.append(row)
        previous = row.hash
    verifier = Verifier(config)
    for row in swapped:
        verifier.feed(row)
    found = [(d.seq, d.what) for d in verifier.report().discrepancies]
    assert len(found) == 1 and found[0][0] == 4
    assert "progressive not in play: link stud suspended since" in found[0][1]


async def test_the_floor_shows_what_is_suspended(client: httpx.AsyncClient) -> None:
    await client.post("/v1/tables/T02/suspend", json={"reason": "fault", "boxes": [4]}, headers=SAM)
    await client.post("/v1/links/tcp/suspend", json={"reason": "controller"}, headers=SAM)
    floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
    assert [(s["scope"], s["link"], s["table"], s["box"]) for s in floor["suspensions"]] == [
        ("box", "stud", "T02", 4),
        ("link", "tcp", None, None),
    ]
    assert {ln["link"]: ln["in_play"] for ln in floor["links"]} == {
        "stud": True,
        "tcp": False,
        "tiers": True,
    }
    tables = {t["table"]: (t["in_play"], t["suspended_boxes"]) for t in floor["tables"]}
    assert tables["T02"] == (True, [4])
    assert tables["T03"] == (False, [])
    assert tables["T01"] == (True, [])


async def test_the_reconciliation_lists_each_suspension_period(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.at()
    await client.post("/v1/links/stud/suspend", json={"reason": "first"}, headers=SAM)
    clock.now += 60_000
    await client.post("/v1/links/stud/resume", json={"reason": "mended"}, headers=SUE)
    await client.post("/v1/tables/T03/suspend", json={"reason": "second"}, headers=SAM)
    clock.now += 60_000
    end = clock.at()
    r = await client.get(
        "/v1/reports/reconciliation", params={"from": start, "to": end}, headers=OPERATOR
    )
    assert r.status_code == 200, r.text
    periods = [
        (p["link"], p["table"], p["since"], p["until"], p["reason"], p["resumed_by"])
        for p in r.json()["suspensions"]
    ]
    assert periods == [
        ("stud", None, start, clock.at(-60_000), "first", "sue"),
        ("tcp", "T03", clock.at(-60_000), None, "second", None),
    ]
    # A period that ended before the report's: not listed.
    later = await client.get(
        "/v1/reports/reconciliation", params={"from": clock.at(-30_000)}, headers=OPERATOR
    )
    assert [p["table"] for p in later.json()["suspensions"]] == ["T03"]
