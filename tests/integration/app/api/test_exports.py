"""Exports of awards and the audit log are complete: `format=csv` and `format=jsonl` give
every row of the period asked, however many, where the screen's JSON pages (at most
1,000 a page).

The awards are 3 Card Poker straights (rule 4.4: a straight pays 15 to a 1.00 wager), seven
boxes a round.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import orjson

from app.state.timefmt import format_time
from tests.support import OPERATOR, SUPERVISOR, Clock, bets_body

T03 = {"Authorization": "Bearer demo-table-T03"}
ROUNDS = 150  # 1,050 awards: more than any page (limit is at most 1,000)
SEED_CHANGES = 1_010
STRAIGHTS = [
    ["2H", "3D", "4C"], ["5H", "6D", "7C"], ["8H", "9D", "TC"], ["JH", "QD", "KC"],
    ["2D", "3C", "4S"], ["5D", "6C", "7S"], ["8D", "9C", "TS"],
]  # fmt: skip


async def post(client: httpx.AsyncClient, path: str, body: Any, headers: dict[str, str]) -> None:
    r = await client.request(
        "PUT" if path.endswith("/seed") else "POST", path, json=body, headers=headers
    )
    assert r.status_code == 200, r.text


async def play_straights(client: httpx.AsyncClient, clock: Clock, rounds: int) -> None:
    for n in range(rounds):
        clock.now += 1_000
        boxes = [(b, "10.00", "1.00") for b in range(1, 8)]
        await post(client, f"/v1/tables/T03/rounds/R{n}/bets", bets_body(clock, *boxes), T03)
        outcome = {
            "boxes": [
                {"box": b, "dealt_at": clock.at(10), "cards": cards}
                for b, cards in enumerate(STRAIGHTS, 1)
            ]
        }
        await post(client, f"/v1/tables/T03/rounds/R{n}/outcome", outcome, T03)


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


async def test_the_awards_csv_and_json_lines_have_every_award_of_the_floor(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play_straights(client, clock, ROUNDS)
    r = await client.get("/v1/awards", params={"format": "csv"}, headers=OPERATOR)
    assert r.status_code == 200, r.text
    rows = csv_rows(r.text)
    assert len(rows) == 1050
    assert r.headers["content-type"].startswith("text/csv")
    assert r.headers["x-total-count"] == "1050"
    assert "attachment" in r.headers["content-disposition"]
    assert len({row["id"] for row in rows}) == 1050
    assert {(row["kind"], row["hand"], row["amount"]) for row in rows} == {
        ("fixed", "straight", "15.00")
    }
    # Newest dealt first, as the listing.
    assert rows[0]["round"] == f"R{ROUNDS - 1}" and rows[-1]["round"] == "R0"

    r = await client.get("/v1/awards", params={"format": "jsonl"}, headers=OPERATOR)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = [orjson.loads(line) for line in r.text.splitlines()]
    assert len(lines) == 1050
    page = await client.get("/v1/awards", params={"limit": 1000}, headers=OPERATOR)
    assert lines[:1000] == page.json()["awards"]


async def test_an_export_keeps_to_its_period_and_filters(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.now
    await play_straights(client, clock, 10)
    # Rounds R2..R5 dealt at start + n*1000 + 10 for n = 3..6 (the clock moves first).
    params = {"format": "csv", "from": format_time(start + 3_000), "to": format_time(start + 7_000)}
    r = await client.get("/v1/awards", params=params, headers=OPERATOR)
    assert r.status_code == 200, r.text
    rows = csv_rows(r.text)
    assert sorted({row["round"] for row in rows}) == ["R2", "R3", "R4", "R5"]
    assert len(rows) == 28 and r.headers["x-total-count"] == "28"
    r = await client.get("/v1/awards", params={**params, "table": "T01"}, headers=OPERATOR)
    assert csv_rows(r.text) == [] and r.text.startswith("id,link,table,round")
    # A limit given explicitly is honoured, and the total says how many matched.
    r = await client.get("/v1/awards", params={**params, "limit": 5}, headers=OPERATOR)
    assert len(csv_rows(r.text)) == 5 and r.headers["x-total-count"] == "28"


async def test_the_audit_csv_has_every_record(client: httpx.AsyncClient) -> None:
    for n in range(SEED_CHANGES):
        body = {"seed": f"{10_000 + n}.00", "reason": f"change {n}"}
        await post(client, "/v1/links/stud/meters/major/seed", body, SUPERVISOR)
    r = await client.get("/v1/audit", params={"format": "csv"}, headers=OPERATOR)
    assert r.status_code == 200, r.text
    rows = csv_rows(r.text)
    assert len(rows) == SEED_CHANGES
    assert r.headers["x-total-count"] == str(SEED_CHANGES)
    # Oldest first, as the listing.
    assert [row["reason"] for row in rows[:2]] == ["change 0", "change 1"]
    assert rows[-1]["seed_after"] == f"{10_000 + SEED_CHANGES - 1}.00"
    r = await client.get("/v1/audit", params={"format": "jsonl"}, headers=OPERATOR)
    lines = [orjson.loads(line) for line in r.text.splitlines()]
    assert len(lines) == SEED_CHANGES
    assert lines[-1]["after"]["seed"] == f"{10_000 + SEED_CHANGES - 1}.00"


async def test_an_export_needs_an_operator(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/awards", params={"format": "csv"})
    assert r.status_code == 401
    r = await client.get(
        "/v1/audit", params={"format": "csv"}, headers={"Authorization": "Bearer demo-table-T01"}
    )
    assert r.status_code == 403
