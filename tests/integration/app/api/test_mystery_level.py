"""A must-hit-by level served: drawn at start and journaled as its commitment only, won by
the first box to reach the trigger, the reveal on the award matching the commitment."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from app.api.auth import token_hash
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.floor_state import FloorState
from jackpot.canonical import loads_exact
from jackpot.money import format_money
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock, bets_body

TABLE = {"Authorization": "Bearer mystery-table"}
OPERATOR = {"Authorization": "Bearer mystery-operator"}
FLOOR = f"""
currency = "SGD"
[[links]]
id = "tiers"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.20"
  reserve_rate = "0"
  [[links.meters]]
  id = "mystery"
  seed = "50.00"
  rate = "0.05"
  reserve_rate = "0"
  must_hit_by = "50.10"
[[tables]]
id = "T01"
game = "multi_link_casino_stud"
link = "tiers"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "{token_hash("mystery-table")}"
[[operators]]
name = "olivia"
role = "operator"
token_sha256 = "{token_hash("mystery-operator")}"
"""
KEY = "the test floor's own mystery key"  # never the demo's (app/config/mystery_key.py)
NOTHING = [["2C", "7D", "9C", "JD", "KC"], ["3H", "8S", "TD", "QH", "4C"]]


@pytest.fixture
def journal() -> KeptJournal:
    return KeptJournal()


@pytest.fixture
async def client(clock: Clock, journal: KeptJournal) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(
        parse_floor(FLOOR), journal=journal, clock=clock, outcome_wait_s=0.2, mystery_key=KEY
    )
    async with running(server.app) as c:
        yield c


async def entries(journal: KeptJournal) -> list[dict[str, Any]]:
    return [orjson.loads(row.entry) async for row in journal.read(0)]


async def meter(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get("/v1/links/tiers/meters/mystery", headers=OPERATOR)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def test_drawn_at_start_won_at_the_first_crossing_and_revealed(
    client: httpx.AsyncClient, clock: Clock, journal: KeptJournal
) -> None:
    arms: list[dict[str, Any]] = []
    for _ in range(100):  # the writer draws as it starts: wait for its entry's commit
        arms = [e for e in await entries(journal) if e["kind"] == "arm"]
        if arms:
            break
        await asyncio.sleep(0.02)
    (arm,) = arms
    read = await meter(client)
    assert (read["must_hit_from"], read["must_hit_by"]) == ("50.00", "50.10")
    assert read["commitment"] == arm["commitment"]
    assert set(arm) == {"kind", "now", "link", "meter", "commitment", "sealed"}
    # Two 1.00 wagers add 0.05 each: the meter reaches 50.10, past any trigger in range.
    bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"))
    r = await client.post("/v1/tables/T01/rounds/R1/bets", headers=TABLE, json=bets)
    assert r.status_code == 200, r.text
    outcome = {"boxes": [{"box": b, "dealt_at": clock.at(10 * b), "cards": NOTHING[b - 1]}
                         for b in (1, 2)]}  # fmt: skip
    clock.now += 100
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=TABLE)
    assert r.status_code == 200, r.text
    assert r.json()["awards"] == []
    clock.now += 5_000
    for _ in range(100):
        r = await client.get("/v1/tables/T01/rounds/R1", headers=TABLE)
        if r.json()["awards"]:
            break
        await asyncio.sleep(0.1)  # the writer's timer wakes by the real clock
    (award,) = r.json()["awards"]
    reveal = award["reveal"]
    text = f"{reveal['trigger']}|{reveal['nonce']}".encode()
    assert hashlib.sha256(text).hexdigest() == reveal["commitment"] == arm["commitment"]
    trigger_cents = int(reveal["trigger"].replace(".", ""))
    assert 5_000 <= trigger_cents < 5_010
    # Box 1 takes the meter to 50.05, box 2 to 50.10: the first to reach the trigger wins.
    assert award["box"] == (1 if trigger_cents <= 5_005 else 2)
    assert (award["hand"], award["meter"], award["amount"]) == ("must_hit_by", "mystery", "50.10")
    # A new trigger is drawn at once: its commitment, a new one, is on the meter's read.
    arms = [e for e in await entries(journal) if e["kind"] == "arm"]
    assert len(arms) == 2 and (await meter(client))["commitment"] == arms[1]["commitment"]
    assert arms[1]["commitment"] != arms[0]["commitment"]
    # The next draw's entry reveals it in the journal; before, it was never there in clear.
    assert arms[1]["revealed"] == f"{reveal['trigger']}|{reveal['nonce']}"
    assert reveal["nonce"] not in str(arms[0])
    # The journal replays to the same meters and award.
    service = FloorState(floor_config(parse_floor(FLOOR), KEY))
    async for row in journal.read(0):
        service.apply(loads_exact(row.entry, f"journal entry {row.seq}"))
    link = service.floor.links["tiers"]
    assert format_money(link.meters[1].value) == (await meter(client))["final_value"]
    replayed = service.floor.awards[f"T01/R1/{award['box']}/must_hit_by:mystery"]
    assert replayed.amount is not None and format_money(replayed.amount) == "50.10"
