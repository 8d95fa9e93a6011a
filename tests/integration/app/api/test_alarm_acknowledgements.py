"""A supervisor acknowledges one of the console's alarms (docs/api.md "Alarms"): an
`acknowledge` journal entry and its audit record (who, when, which alarm, the note), on
the floor view for every console, replayed by recovery and `jackpot verify`; refused to a
plain operator and for a malformed alarm, recording nothing."""

from __future__ import annotations

from app.audit.findings import format_report
from app.audit.replay_check import Verifier
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import OPERATOR, SUPERVISOR, Clock

ALARM = "pending:T02/R1/1/player/major"


async def test_an_acknowledgement_is_journaled_audited_and_shown_to_every_console() -> None:
    journal, clock = KeptJournal(), Clock()
    server = build_server(journal=journal, clock=clock)
    async with running(server.app) as client:
        body = {"alarm": ALARM, "note": "table T01 called, outcome coming"}
        r = await client.post("/v1/alarms/acknowledge", json=body, headers=SUPERVISOR)
        assert r.status_code == 200, r.text
        answer = r.json()
        assert (answer["alarm"], answer["by"], answer["at"]) == (ALARM, "sam", clock.at(0))
        [record] = (await client.get("/v1/audit?action=acknowledge", headers=OPERATOR)).json()[
            "audit"
        ]
        assert (record["who"], record["after"], record["reason"]) == (
            "sam",
            {"alarm": ALARM},
            "table T01 called, outcome coming",
        )
        floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
        assert floor["acknowledged"] == [{"alarm": ALARM, "by": "sam", "at": clock.at(0)}]
    rows = [row async for row in journal.read(0)]
    # After the parameters read at start, which every journal records first (`config`).
    assert [row.kind for row in rows] == [
        "config",
        "arm",
        "acknowledge",
    ]  # the mini's first draw: `arm`
    verifier = Verifier(server.writer.service.config)
    for row in rows:
        verifier.feed(row)
    report = verifier.report()
    assert report.ok, format_report(report)
    # A restart rebuilds it from the journal.
    async with running(build_server(journal=journal, clock=clock).app) as client:
        floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
        assert floor["acknowledged"] == [{"alarm": ALARM, "by": "sam", "at": clock.at(0)}]


async def test_only_a_supervisor_acknowledges_and_only_an_alarm() -> None:
    journal = KeptJournal()
    async with running(build_server(journal=journal).app) as client:
        r = await client.post("/v1/alarms/acknowledge", json={"alarm": ALARM}, headers=OPERATOR)
        assert r.status_code == 403, r.text
        r = await client.post("/v1/alarms/acknowledge", json={"alarm": "<b>"}, headers=SUPERVISOR)
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["loc"] == ["body", "alarm"]
        r = await client.post(
            "/v1/alarms/acknowledge", json={"alarm": ALARM, "x": 1}, headers=SUPERVISOR
        )
        assert r.status_code == 422, r.text
    # Nothing recorded but the parameters read at start (`config`).
    assert [row.kind async for row in journal.read(0)] == ["config", "arm"]
