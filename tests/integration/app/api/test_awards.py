"""`GET /v1/awards` lists every award the server decided, of every kind.

Amounts are the rules' pay tables for a 1.00 wager: 3 Card Poker 4.4 (straight flush 175,
three of a kind 150), envy bonus 4.7 (250 for A K Q of spades), Western Stud River bet
(flush 2 to 1).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.store.journal import MemoryJournal
from tests.integration.app.support import make_client
from tests.support import OPERATOR, Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
T03 = {"Authorization": "Bearer demo-table-T03"}
T05 = {"Authorization": "Bearer demo-table-T05"}


@pytest.fixture
def journal() -> MemoryJournal:
    return MemoryJournal()


@pytest.fixture
async def client(clock: Clock, journal: MemoryJournal) -> AsyncIterator[httpx.AsyncClient]:
    async for c in make_client(clock, dual=False, journal=journal):
        yield c


async def post(client: httpx.AsyncClient, path: str, body: Any, headers: dict[str, str]) -> Any:
    r = await client.post(path, json=body, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


async def awards(client: httpx.AsyncClient, **query: str | int) -> dict[str, Any]:
    r = await client.get("/v1/awards", params=query, headers=OPERATOR)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def play_every_kind(client: httpx.AsyncClient, clock: Clock) -> None:
    """A 3 Card Poker round (a meter award, two fixed, two envy bonuses), a River bet, a
    royal flush at a stud table."""
    bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"), (3, "10.00", "1.00"))
    await post(client, "/v1/tables/T03/rounds/R1/bets", bets, T03)
    outcome = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(10), "cards": ["AS", "KS", "QS"]},
            {"box": 2, "dealt_at": clock.at(20), "cards": ["2H", "3H", "4H"]},
            {"box": 3, "dealt_at": clock.at(30), "cards": ["5D", "5C", "5H"]},
        ]
    }
    await post(client, "/v1/tables/T03/rounds/R1/outcome", outcome, T03)
    await post(client, "/v1/tables/T05/rounds/W1/bets", bets_body(clock, (1, "10.00", "5.00")), T05)
    river = {
        "boxes": [{"box": 1, "dealt_at": clock.at(40), "cards": ["2D", "7D", "9D", "JD", "KD"]}]
    }
    await post(client, "/v1/tables/T05/rounds/W1/outcome", river, T05)
    await post(client, "/v1/tables/T02/rounds/S1/bets", bets_body(clock, (1, "10.00", "1.00")), T02)
    royal = {
        "boxes": [{"box": 1, "dealt_at": clock.at(50), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    await post(client, "/v1/tables/T02/rounds/S1/outcome", royal, T02)


def brief(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["table"], r["box"], r["kind"], r.get("for_box"), r.get("amount")) for r in rows]


async def test_every_kind_is_listed_newest_first(client: httpx.AsyncClient, clock: Clock) -> None:
    await play_every_kind(client, clock)
    clock.now += 5_000
    await client.get("/v1/tables/T02/rounds/S1?wait=10", headers=T02)
    await client.get("/v1/tables/T03/rounds/R1?wait=10", headers=T03)
    answer = await awards(client)
    assert answer["total"] == 7
    # Newest first by dealt_at; an envy bonus is dealt with the hand that triggered it.
    assert brief(answer["awards"]) == [
        ("T02", 1, "meter", None, "10000.25"),
        ("T05", 1, "river", None, "10.00"),
        ("T03", 3, "fixed", None, "150.00"),
        ("T03", 2, "fixed", None, "175.00"),
        # Same instant: the meter award (by its sequence), then by box, last first.
        ("T03", 1, "meter", None, "5000.60"),
        ("T03", 3, "envy", 1, "250.00"),
        ("T03", 2, "envy", 1, "250.00"),
    ]
    envy = next(r for r in answer["awards"] if r["kind"] == "envy")
    assert envy == {
        "id": "T03/R1/3/player/envy/1",
        "link": "tcp",
        "table": "T03",
        "round": "R1",
        "box": 3,
        "kind": "envy",
        "hand": "akq_spades",
        "amount": "250.00",
        "state": "final",
        "dealt_at": clock.at(10 - 5_000),
        "for_box": 1,
    }
    river = next(r for r in answer["awards"] if r["kind"] == "river")
    assert (river["link"], river["state"], river["hand"]) == (None, "final", "flush")


async def test_filters_kind_link_meter_table_time_and_limit(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.now
    await play_every_kind(client, clock)
    envy = await awards(client, kind="envy")
    assert envy["total"] == 2 and {r["kind"] for r in envy["awards"]} == {"envy"}
    assert (await awards(client, table="T05"))["total"] == 1
    tcp = await awards(client, link="tcp")
    assert tcp["total"] == 5 and {r["table"] for r in tcp["awards"]} == {"T03"}
    # A meter has only meter awards: the tcp level's hits.
    level = await awards(client, link="tcp", meter="major")
    assert brief(level["awards"]) == [("T03", 1, "meter", None, None)]  # still pending
    assert level["awards"][0]["state"] == "pending"
    # from/to: the time the hand was dealt, `to` excluded.
    window = await awards(client, **{"from": clock.at(15), "to": clock.at(40)})
    assert [(r["box"], r["kind"]) for r in window["awards"]] == [(3, "fixed"), (2, "fixed")]
    page = await awards(client, limit=2, offset=1)
    assert page["total"] == 7
    assert brief(page["awards"]) == [
        ("T05", 1, "river", None, "10.00"),
        ("T03", 3, "fixed", None, "150.00"),
    ]
    assert start <= clock.now
    for bad in ({"kind": "jackpot"}, {"kind": ""}, {"limit": 0}):
        r = await client.get("/v1/awards", params=bad, headers=OPERATOR)
        assert r.status_code == 422, bad
        assert r.headers["content-type"] == "application/problem+json"


async def test_csv_has_every_kind(client: httpx.AsyncClient, clock: Clock) -> None:
    await play_every_kind(client, clock)
    r = await client.get("/v1/awards", params={"format": "csv"}, headers=OPERATOR)
    assert r.headers["content-type"].startswith("text/csv")
    lines = r.text.splitlines()
    header = lines[0].split(",")
    # The columns of before first, in their places.
    assert header[:15] == [
        "id",
        "link",
        "table",
        "round",
        "box",
        "hand",
        "meter",
        "share",
        "state",
        "amount",
        "order",
        "sequence",
        "late",
        "dealt_at",
        "finalized_at",
    ]
    assert {"kind", "for_box", "target"} <= set(header)
    kinds = sorted(line.split(",")[header.index("kind")] for line in lines[1:])
    assert kinds == ["envy", "envy", "fixed", "fixed", "meter", "meter", "river"]


async def test_a_void_box_shows_its_fixed_awards_void(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play_every_kind(client, clock)
    await post(client, "/v1/tables/T03/rounds/R1/void", {"reason": "5.8.1", "boxes": [2]}, T03)
    rows = (await awards(client, table="T03"))["awards"]
    states = {(r["box"], r["kind"]): r["state"] for r in rows}
    assert states == {
        (1, "meter"): "pending",
        (2, "fixed"): "void",
        (2, "envy"): "void",
        (3, "fixed"): "final",
        (3, "envy"): "final",
    }


async def test_pruned_rounds_awards_are_still_listed_and_replayed(
    client: httpx.AsyncClient, clock: Clock, journal: MemoryJournal
) -> None:
    await play_every_kind(client, clock)
    clock.now += 5_000
    await client.get("/v1/tables/T03/rounds/R1?wait=10", headers=T03)
    before = await awards(client)
    assert before["total"] == 7
    clock.now += 16 * 60_000  # past the 15 minutes settled rounds are kept in memory
    await post(client, "/v1/tables/T01/rounds/X/bets", bets_body(clock, (1, "10.00", "1.00")), T01)
    r = await client.get("/v1/tables/T03/rounds/R1", headers=T03)
    assert r.json().get("archived") is True  # pruned
    assert await awards(client) == before
    # A server started from the same journal lists the same awards.
    async for again in make_client(clock, dual=False, journal=journal):
        assert await awards(again) == before


async def test_the_last_25_hits_of_a_level_is_one_request(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    """New York 5320.8: the last 25 hits of a level. 27 straight flushes (10 % each) at
    stud tables, and fixed awards (four of a kind, every third round) between them."""
    for n in range(27):
        table, headers = ("T01", T01) if n % 2 else ("T02", T02)
        bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"))
        await post(client, f"/v1/tables/{table}/rounds/R{n}/bets", bets, headers)
        quads = ["KH", "KD", "KC", "KS"] if n % 3 == 0 else ["KH", "KD", "QC", "JS"]
        outcome = {
            "boxes": [
                {"box": 1, "dealt_at": clock.at(10), "cards": [f"{r}S" for r in "56789"]},
                {"box": 2, "dealt_at": clock.at(20), "cards": [*quads, "2D"]},
            ]
        }
        await post(client, f"/v1/tables/{table}/rounds/R{n}/outcome", outcome, headers)
        clock.now += 3_000
    level = await awards(client, link="stud", meter="major", limit=25)
    assert level["total"] == 27 and len(level["awards"]) == 25
    assert {r["kind"] for r in level["awards"]} == {"meter"}
    assert [r["round"] for r in level["awards"]] == [f"R{n}" for n in range(26, 1, -1)]
    assert (await awards(client, link="stud", kind="fixed"))["total"] == 9  # n = 0, 3, ... 24
