"""Abandoned rounds through the whole app (issue 17, item 3): bets and never an outcome.

A round open longer than `expire_after` round timeouts is expired by a journal entry,
leaves the watermark, memory and snapshots; a table holds at most `max_open_rounds`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from app.floor import load_floor
from app.journal import MemoryJournal
from app.main import create_app
from app.settings import Settings
from app.snapshots import dump_text
from app.writer import Writer
from tests.app.test_api import DEMO, OPERATOR, T01, T02, Clock, bets_body

ROUND_TIMEOUT = 180_000  # app/demo/floor.toml
RETAIN = 15 * 60_000  # settled, void and expired rounds are kept this long (jackpot/floor.py)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def app_client(clock: Clock) -> AsyncIterator[tuple[Writer, httpx.AsyncClient]]:
    app = create_app(Settings(), load_floor(DEMO), journal=MemoryJournal())
    writer: Writer = app.state.writer
    writer.clock = clock
    writer.outcome_wait_s = 0.2
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
