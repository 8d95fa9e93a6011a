"""A table asks what is in play (its heartbeat); a silent table is flagged and, when the
floor asks for it, taken out of play by the writer's timer (rules 5.17, 5.18.2)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from app.audit.replay_check import Verifier
from app.config.floor_file import parse_floor
from tests.integration.app.support import KeptJournal, build_server, running, scrape, value
from tests.support import DEMO, Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}


def floor_text(**settings: object) -> str:
    lines = "".join(f"{k} = {str(v).lower()}\n" for k, v in settings.items())
    return (
        Path(DEMO).read_text().replace("dual_control = false\n", f"dual_control = false\n{lines}")
    )


async def test_a_table_is_told_what_is_in_play_at_it_rule_5_18_2() -> None:
    clock = Clock()
    server = build_server(clock=clock)
    async with running(server.app) as client:
        r = await client.get("/v1/tables/T01/status", headers=T01)
        assert r.status_code == 200, r.text
        assert r.json() == {
            "table": "T01", "link": "stud", "in_play": True, "suspended_boxes": [],
            "reason": None, "since": None, "suspensions": [], "link_status": "ok",
            "server_time": clock.at(),
        }  # fmt: skip
        await client.post(
            "/v1/tables/T01/suspend", json={"reason": "sensor", "boxes": [3, 5]}, headers=SAM
        )
        status = (await client.get("/v1/tables/T01/status", headers=T01)).json()
        assert (status["in_play"], status["suspended_boxes"]) == (True, [3, 5])
        assert (status["reason"], status["since"]) == ("sensor", clock.at())
        clock.now += 1_000
        await client.post("/v1/links/stud/suspend", json={"reason": "controller"}, headers=SAM)
        status = (await client.get("/v1/tables/T01/status", headers=T01)).json()
        assert (status["in_play"], status["reason"]) == (False, "controller")
        assert status["suspended_boxes"] == []  # the whole table is out of play
        assert (await client.get("/v1/tables/T01/status", headers=T02)).status_code == 403
        assert (await client.get("/v1/tables/T01/status")).status_code == 401
        assert (await client.get("/v1/tables/T99/status", headers=OPERATOR)).status_code == 404


async def test_a_table_unheard_longer_than_table_silence_ms_is_flagged() -> None:
    clock = Clock()
    server = build_server(parse_floor(floor_text(table_silence_ms=5_000)), clock=clock)
    async with running(server.app) as client:
        clock.now += 4_000
        await client.get("/v1/tables/T01/status", headers=T01)
        await client.get("/v1/tables/T02/status", headers=OPERATOR)  # not T02's heartbeat
        clock.now += 2_000
        floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
        assert floor["table_silence_ms"] == 5_000
        tables = {t["table"]: (t["unheard"], t["last_heard_at"]) for t in floor["tables"]}
        assert tables["T01"] == (False, clock.at(-2_000))
        assert tables["T02"] == (True, clock.at(-6_000))  # since the writer began
        samples = await scrape(client)
        assert value(samples, "jackpot_table_unheard", table="T01") == 0
        assert value(samples, "jackpot_table_unheard", table="T02") == 1
        assert value(samples, "jackpot_table_heard_age_seconds", table="T02") == 6.0
        # Flagged only: the floor does not suspend silent tables unless asked to.
        r = await client.post(
            "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")),
            headers=T02,
        )  # fmt: skip
        assert r.status_code == 200, r.text
        assert floor["suspensions"] == []


async def test_a_silent_table_is_suspended_by_the_timer_and_resumed_by_a_supervisor_rule_5_17(
    ) -> None:  # fmt: skip
    clock, journal = Clock(), KeptJournal()
    floor = parse_floor(floor_text(table_silence_ms=200, suspend_silent_tables="true"))
    server = build_server(floor, clock=clock, journal=journal)
    async with running(server.app) as client:
        clock.now += 150
        await client.get("/v1/tables/T01/status", headers=T01)
        clock.now += 100
        await wait_for_suspension(client, "T02")
        assert (await client.get("/v1/tables/T01/status", headers=T01)).json()["in_play"]
        told = (await client.get("/v1/tables/T02/status", headers=T02)).json()
        assert told["in_play"] is False
        assert "no word from the table for 250 ms" in told["reason"]
        refused = await client.post(
            "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")),
            headers=T02,
        )  # fmt: skip
        assert refused.status_code == 409
        assert refused.json()["suspended"][0]["by"] is None
        # Heard again, it stays out of play until a supervisor resumes it.
        clock.now += 50
        await client.get("/v1/tables/T02/status", headers=T02)
        await asyncio.sleep(0.3)
        assert not (await client.get("/v1/tables/T02/status", headers=T02)).json()["in_play"]
        r = await client.post("/v1/tables/T02/resume", json={"reason": "back"}, headers=SAM)
        assert r.status_code == 200, r.text
        assert (await client.get("/v1/tables/T02/status", headers=T02)).json()["in_play"]
        audit = (await client.get("/v1/audit?table=T02", headers=OPERATOR)).json()["audit"]
        assert [(a["action"], a["who"]) for a in audit] == [("suspend", None), ("resume", "sam")]
        config = server.writer.service.config
    verifier = Verifier(config)
    async for row in journal.read(0):
        verifier.feed(row)
    assert verifier.report().discrepancies == ()


async def wait_for_suspension(client: httpx.AsyncClient, table: str) -> None:
    """The writer's timer runs on its own: wait (a little real time) until it has."""
    for _ in range(50):
        floor = (await client.get("/v1/floor", headers=OPERATOR)).json()
        if any(s["table"] == table for s in floor["suspensions"]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{table} was not suspended")
