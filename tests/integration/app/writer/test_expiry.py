"""Abandoned rounds through the whole app: bets and never an outcome.

A round open longer than `expire_after` round timeouts is expired by a journal entry,
leaves the watermark, memory and snapshots; a table holds at most `max_open_rounds`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import httpx
import orjson
import pytest

from app.config.floor_file import load_floor
from app.store.snapshots import dump_text
from app.writer.writer import Writer
from tests.integration.app.support import build_server
from tests.support import DEMO, OPERATOR, T01, T02, Clock, bets_body

ROUND_TIMEOUT = 180_000  # app/demo/floor.toml
RETAIN = 15 * 60_000  # settled, void and expired rounds are kept this long (jackpot/floor.py)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def app_client(clock: Clock) -> AsyncIterator[tuple[Writer, httpx.AsyncClient]]:
    server = build_server(clock=clock, outcome_wait_s=0.2)
    app, writer = server.app, server.writer
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield writer, c


async def test_abandoned_rounds_leave_memory_and_snapshots(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    writer, client = app_client
    abandoned = 40
    for i in range(abandoned):
        table, headers = ("T01", T01) if i % 2 else ("T02", T02)
        body = bets_body(clock, (1, "25.00", "1.00"), (2, "10.00", "0"))
        r = await client.post(f"/v1/tables/{table}/rounds/A{i}/bets", json=body, headers=headers)
        assert r.status_code == 200, r.text
        clock.now += 50
    meter_before = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    # Long past any round timeout and the retention of rounds that are done: normal play.
    for step in range(3):
        clock.now += 10 * ROUND_TIMEOUT + RETAIN
        body = bets_body(clock, (1, "25.00", "1.00"))
        r = await client.post(f"/v1/tables/T01/rounds/N{step}/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
        outcome = {
            "boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": ["2S", "7H", "9D", "JC", "KS"]}]
        }
        r = await client.post(f"/v1/tables/T01/rounds/N{step}/outcome", json=outcome, headers=T01)
        assert r.status_code == 200, r.text
    floor = writer.service.floor
    left = [key for key in floor.rounds if key[1].startswith("A")]
    assert left == [], f"{len(left)} abandoned rounds still in memory"
    assert not any(key[1].startswith("A") for key in writer.service.extras)
    assert all(not link.open_rounds for link in floor.links.values())
    state = orjson.loads(dump_text(writer.service, writer.seq, writer.head))
    assert not [r for r in state["floor"]["rounds"] if r["round"].startswith("A")]
    assert not [k for k in state["idem"] if "|A" in k]
    # Their contributions stay on the meter: they were on display (4.5.1).
    meter_after = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter_after["value"] >= meter_before["value"]


async def expire_one(client: httpx.AsyncClient, clock: Clock, round_id: str) -> dict[str, str]:
    """Bets at T01 with no outcome, then long enough for the writer's timer to expire it
    (the next request wakes the writer). Returns the bets body."""
    body = bets_body(clock, (1, "25.00", "1.00"), (2, "25.00", "1.00"))
    r = await client.post(f"/v1/tables/T01/rounds/{round_id}/bets", json=body, headers=T01)
    assert r.status_code == 200, r.text
    clock.now += 10 * ROUND_TIMEOUT + 1
    await client.post(
        "/v1/tables/T02/rounds/wake/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T02
    )
    return body


async def test_an_expired_round_refuses_its_outcome_with_409_and_says_why(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    writer, client = app_client
    await expire_one(client, clock, "R1")
    r = await client.get("/v1/tables/T01/rounds/R1", headers=T01)
    assert r.status_code == 200 and r.json()["state"] == "expired"
    seq = writer.seq
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(-5), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    assert r.status_code == 409, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "expired" in r.json()["detail"] and "expire_after" in r.json()["detail"]
    assert writer.seq == seq  # nothing recorded


async def test_a_void_of_an_expired_round_reverses_its_contributions(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    writer, client = app_client
    await expire_one(client, clock, "R1")
    before = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    body = {"reason": "controller lost the round (5.17)"}
    r = await client.post("/v1/tables/T01/rounds/R1/void", json=body, headers=T01)
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "void"
    assert [x["contribution"] for x in r.json()["reversed"]] == ["0.30", "0.30"]
    after = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    # 0.25 a box left the meter at the current position (no award since: it still held it).
    assert Decimal(before["value"]) - Decimal(after["value"]) == Decimal("0.50")


async def test_the_journal_replays_and_verifies_with_expire_entries(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    from app.audit.verify_run import verify
    from tests.support import replayed

    writer, client = app_client
    await expire_one(client, clock, "R1")
    await expire_one(client, clock, "R2")
    await client.post("/v1/tables/T01/rounds/R1/void", json={"reason": "lost"}, headers=T01)
    rows = [row async for row in writer.journal.read(0)]
    kinds = [row.kind for row in rows]
    assert kinds.count("expire") == 2
    expire = orjson.loads(next(row.entry for row in rows if row.kind == "expire"))
    assert expire["rounds"] == [["T01", "R1"]] and set(expire) == {"kind", "now", "rounds"}
    seq, head = rows[-1].seq, rows[-1].hash
    assert dump_text(replayed(rows), seq, head) == dump_text(writer.service, seq, head)
    report = await verify(writer.journal, writer.service.config)
    assert report.ok, report.discrepancies
    # R1, R2 and the first wake-up round (T02, no outcome either)
    assert report.expired_rounds == 3 and report.kinds["expire"] == 2


async def test_the_reconciliation_report_and_the_metrics_show_expired_rounds(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    from tests.integration.app.support import scrape, value

    _, client = app_client
    start = clock.at()
    await expire_one(client, clock, "R1")
    report = (
        await client.get(
            f"/v1/reports/reconciliation?from={start}&to={clock.at(1)}", headers=OPERATOR
        )
    ).json()
    assert report["expired_rounds"]["count"] == 1
    (row,) = report["expired_rounds"]["rounds"]
    assert (row["table"], row["round"], row["link"]) == ("T01", "R1", "stud")
    assert row["contribution"] == "0.50" and row["reserve"] == "0.10"
    assert all(m["balanced"] for m in report["meters"])
    samples = await scrape(client)
    assert value(samples, "jackpot_expired_rounds_total", table="T01") == 1
    assert value(samples, "jackpot_table_open_rounds", table="T01") == 0
    assert value(samples, "jackpot_table_open_rounds", table="T02") == 1  # the wake-up round


@pytest.fixture
async def limited(clock: Clock) -> AsyncIterator[tuple[Writer, httpx.AsyncClient]]:
    floor = load_floor(DEMO).model_copy(update={"max_open_rounds": 3})
    server = build_server(floor, clock=clock)
    app, writer = server.app, server.writer
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield writer, c


async def test_a_table_holding_max_open_rounds_has_its_bets_refused_with_409(
    limited: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    writer, client = limited
    no_jackpot = bets_body(clock, (1, "25.00", "0"))  # rounds with no jackpot wager count too
    for i in range(3):
        r = await client.post(f"/v1/tables/T01/rounds/R{i}/bets", json=no_jackpot, headers=T01)
        assert r.status_code == 200, r.text
    seq = writer.seq
    r = await client.post("/v1/tables/T01/rounds/R3/bets", json=no_jackpot, headers=T01)
    assert r.status_code == 409 and r.headers["content-type"] == "application/problem+json"
    assert "max_open_rounds" in r.json()["detail"] and "3 open rounds" in r.json()["detail"]
    assert writer.seq == seq and ("T01", "R3") not in writer.service.floor.rounds
    # A retry of a recorded round is still answered; another table is not limited.
    again = await client.post("/v1/tables/T01/rounds/R0/bets", json=no_jackpot, headers=T01)
    assert again.status_code == 200
    r = await client.post("/v1/tables/T02/rounds/R0/bets", json=no_jackpot, headers=T02)
    assert r.status_code == 200
    # A round that settles makes room.
    await client.post("/v1/tables/T01/rounds/R0/void", json={"reason": "x"}, headers=T01)
    r = await client.post("/v1/tables/T01/rounds/R3/bets", json=no_jackpot, headers=T01)
    assert r.status_code == 200, r.text


async def test_events_for_an_expired_round_that_left_memory_are_409_not_404(
    app_client: tuple[Writer, httpx.AsyncClient], clock: Clock
) -> None:
    writer, client = app_client
    await expire_one(client, clock, "R1")
    clock.now += RETAIN + 1
    await client.post(
        "/v1/tables/T02/rounds/wake2/bets", json=bets_body(clock, (1, "25.00", "1.00")), headers=T02
    )
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).json()["archived"]
    seq = writer.seq
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(-5), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    for event, body in (("void", {"reason": "5.17"}), ("outcome", outcome)):
        r = await client.post(f"/v1/tables/T01/rounds/R1/{event}", json=body, headers=T01)
        assert r.status_code == 409, (event, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert "left memory" in r.json()["detail"] and "expired" in r.json()["detail"]
    assert writer.seq == seq  # nothing recorded
