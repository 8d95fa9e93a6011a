"""A tiered link: each hand is paid from the level its pay-table row names, each level in
its own deal order (4.5.1, 4.5.2), and a 100 % award resets only its own meter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.api.auth import token_hash
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.floor_state import FloorState
from jackpot.canonical import loads_exact
from jackpot.money import format_money
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock, bets_body

TABLE = {"Authorization": "Bearer tiered-table"}
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
  id = "minor"
  seed = "500.00"
  rate = "0.10"
  reserve_rate = "0"
  [[links.meters]]
  id = "mini"
  seed = "50.00"
  rate = "0.05"
  reserve_rate = "0"
[[tables]]
id = "T01"
game = "multi_link_casino_stud"
link = "tiers"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "{token_hash("tiered-table")}"
  [tables.pay_table]
  royal_flush = "major:1.00"
  straight_flush = "minor:0.50"
  four_of_a_kind = "mini:1.00"
"""
ROYAL = ["AS", "KS", "QS", "JS", "10S"]
STRAIGHT_FLUSH = ["9H", "8H", "7H", "6H", "5H"]
FOUR = ["3C", "3D", "3H", "3S", "2D"]
NOTHING = ["2C", "7D", "9C", "JD", "KC"]


@pytest.fixture
def journal() -> KeptJournal:
    return KeptJournal()


@pytest.fixture
async def client(clock: Clock, journal: KeptJournal) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(parse_floor(FLOOR), journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as c:
        yield c


async def play(
    client: httpx.AsyncClient, clock: Clock, round_id: str, hands: list[list[str]]
) -> Any:
    boxes = [(box, "10.00", "1.00") for box in range(1, len(hands) + 1)]
    r = await client.post(f"/v1/tables/T01/rounds/{round_id}/bets", json=bets_body(clock, *boxes),
                          headers=TABLE)  # fmt: skip
    assert r.status_code == 200, r.text
    outcome = {
        "boxes": [
            {"box": box, "dealt_at": clock.at(10 * box), "cards": cards}
            for box, cards in enumerate(hands, start=1)
        ]
    }
    clock.now += 100
    r = await client.post(f"/v1/tables/T01/rounds/{round_id}/outcome", json=outcome, headers=TABLE)
    assert r.status_code == 200, r.text
    return r.json()


async def final_awards(client: httpx.AsyncClient, clock: Clock, round_id: str) -> Any:
    clock.now += 5_000
    r = await client.get(f"/v1/tables/T01/rounds/{round_id}?wait=10", headers=TABLE, timeout=30)
    awards = r.json()["awards"]
    assert {a["state"] for a in awards} == {"final"}, awards
    return [(a["box"], a["meter"], a["hand"], a["amount"]) for a in awards]


async def values(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.get("/v1/links/tiers")
    return {m["meter"]: m["value"] for m in r.json()["meters"]}


async def test_each_hand_is_paid_from_its_own_level_and_resets_only_it(
    client: httpx.AsyncClient, clock: Clock, journal: KeptJournal
) -> None:
    # Four 1.00 wagers: major +0.80, minor +0.40, mini +0.20 before any award (4.5.2:
    # contributions at closed_at come before every win dealt after it).
    answer = await play(client, clock, "R1", [ROYAL, STRAIGHT_FLUSH, FOUR, NOTHING])
    assert [(a["box"], a["meter"]) for a in answer["awards"]] == [
        (1, "major"),
        (2, "minor"),
        (3, "mini"),
    ]
    assert await final_awards(client, clock, "R1") == [
        (1, "major", "royal_flush", "10000.80"),
        (2, "minor", "straight_flush", "250.20"),  # half of 500.40
        (3, "mini", "four_of_a_kind", "50.20"),
    ]
    # The 100 % awards reset major and mini to their seeds; minor keeps its other half.
    clock.now += 1_000
    assert await values(client) == {"major": "10000.00", "minor": "250.20", "mini": "50.00"}
    # The journal alone gives the same meters (the claims name their meters).
    service = FloorState(floor_config(parse_floor(FLOOR)))
    async for row in journal.read(0):
        service.apply(loads_exact(row.entry, f"journal entry {row.seq}"))
    meters = service.floor.links["tiers"].meters
    assert [format_money(m.value) for m in meters] == ["10000.00", "250.20", "50.00"]


async def test_two_wins_of_one_level_in_one_round_are_paid_in_deal_order(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    # 4.5.1: the first dealt takes the displayed value, the next the value that follows.
    await play(client, clock, "R1", [STRAIGHT_FLUSH, ["9D", "8D", "7D", "6D", "5D"]])
    assert await final_awards(client, clock, "R1") == [
        (1, "minor", "straight_flush", "250.10"),  # half of 500.20
        (2, "minor", "straight_flush", "125.05"),  # half of the 250.10 left
    ]
