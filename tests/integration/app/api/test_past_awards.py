"""Past awards leave the writer's memory (app/state/past_awards.py): a pruned round's
fixed awards that are paid or void are listed from the `past_awards` table, the unpaid
ones stay in memory; `GET /v1/awards` lists the same either way (docs/api.md "Records
and reports"). Straight flush at Three Card Poker: 175 to 1 (rules 4.4), a 1.00 wager."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.compose import WriterProcess
from app.store.journal import Journal, MemoryJournal
from app.store.past_award_book import AwardFilter, PastAwardBook
from app.store.snapshots import dump_text
from tests.integration.app.support import build_server, running
from tests.support import OPERATOR, Clock, bets_body

T03 = {"Authorization": "Bearer demo-table-T03"}
ROUNDS = 12
RETAIN_MS = 900_000  # the demo floor's retain_ms (the default)


@pytest.fixture
def server(clock: Clock, journal: Journal) -> WriterProcess:
    return build_server(journal=journal, clock=clock, outcome_wait_s=0.2)


@pytest.fixture
async def client(server: WriterProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with running(server.app) as c:
        yield c


async def play(client: httpx.AsyncClient, clock: Clock, n: int) -> None:
    """Round Pn: box 1 a straight flush (a fixed award of 175.00); every third one void,
    every other one paid at the table."""
    round_id = f"P{n:03d}"
    bets = bets_body(clock, (1, "10.00", "1.00"))
    r = await client.post(f"/v1/tables/T03/rounds/{round_id}/bets", json=bets, headers=T03)
    assert r.status_code in (200, 201), r.text
    outcome = {"boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2H", "3H", "4H"]}]}
    r = await client.post(f"/v1/tables/T03/rounds/{round_id}/outcome", json=outcome, headers=T03)
    assert r.status_code in (200, 201), r.text
    if n % 3 == 0:
        void = {"reason": "misdeal"}
        r = await client.post(f"/v1/tables/T03/rounds/{round_id}/void", json=void, headers=T03)
        assert r.status_code in (200, 201), r.text
    elif n % 2 == 0:
        paid = {"boxes": [1]}
        r = await client.post(f"/v1/tables/T03/rounds/{round_id}/paid", json=paid, headers=T03)
        assert r.status_code in (200, 201), r.text
    clock.now += 1_000


def expected_state(n: int) -> str:
    return "void" if n % 3 == 0 else "paid" if n % 2 == 0 else "final"


async def listing(client: httpx.AsyncClient, **query: Any) -> dict[str, Any]:
    r = await client.get("/v1/awards", params={"table": "T03", **query}, headers=OPERATOR)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def stored(journal: Journal) -> set[str]:
    """The ids of the awards the journal's book holds."""
    assert isinstance(journal, PastAwardBook)
    page, total = await journal.past_awards_page(AwardFilter(), 1_000_000)
    assert total == len(page)
    return {a.id for a in page}


def brief(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(r["id"], r["state"], r["amount"], r["kind"]) for r in rows]


async def test_settled_awards_leave_memory_and_are_listed_the_same(
    client: httpx.AsyncClient, clock: Clock, server: WriterProcess, journal: Journal
) -> None:
    for n in range(ROUNDS):
        await play(client, clock, n)
    # Newest dealt first: the last round played first.
    expected = [
        (f"T03/P{n:03d}/1/player/fixed", expected_state(n), "175.00", "fixed")
        for n in reversed(range(ROUNDS))
    ]
    before = await listing(client, limit=1000)
    assert brief(before["awards"]) == expected
    assert before["total"] == ROUNDS
    assert await stored(journal) == set()  # nothing pruned yet

    clock.now += RETAIN_MS + 10_000
    await play(client, clock, ROUNDS)  # the writer's timer prunes as it is applied
    expected.insert(0, (f"T03/P{ROUNDS:03d}/1/player/fixed", "void", "175.00", "fixed"))

    after = await listing(client, limit=1000)
    assert brief(after["awards"]) == expected
    assert after["awards"][1:] == before["awards"]
    left = await stored(journal)
    assert left == {e[0] for e in expected[1:] if e[1] != "final"}
    state = server.writer.service
    kept = {f"T03/{p.round}/1/player/fixed" for p in state.floor.past_fixed}
    assert kept == {e[0] for e in expected[1:] if e[1] == "final"}
    assert not set(state.payments) & left  # their payments went with them

    # Pages, filters and states: the same merge of memory and table.
    assert brief((await listing(client, limit=5))["awards"]) == expected[:5]
    assert brief((await listing(client, limit=4, offset=3))["awards"]) == expected[3:7]
    for wanted in ("paid", "void", "final"):
        page = await listing(client, state=wanted, limit=2, offset=1)
        matching = [e for e in expected if e[1] == wanted]
        assert brief(page["awards"]) == matching[1:3]
        assert page["total"] == len(matching)
    csv = await client.get(
        "/v1/awards", params={"table": "T03", "format": "csv", "limit": 3}, headers=OPERATOR
    )
    assert csv.text.splitlines()[1].startswith(expected[0][0] + ",")


async def test_memory_and_snapshot_keep_no_settled_award_however_many() -> None:
    """2,000 rounds with a fixed award each, then pruned: the state's `past_fixed` keeps
    only the final unpaid ones, and the snapshot names none of the settled rounds."""
    clock = Clock()
    server = build_server(journal=MemoryJournal(), clock=clock, outcome_wait_s=0.2)
    rounds = 2_000
    async with running(server.app) as client:
        for n in range(rounds):
            await play(client, clock, n)
        clock.now += RETAIN_MS + 10_000
        await play(client, clock, rounds)  # void: it stays in its round, not yet pruned
        state = server.writer.service
        position = server.writer.position
        snapshot = dump_text(state, position.seq, position.head)
    unpaid = {f"P{n:03d}" for n in range(rounds) if n % 3 != 0 and n % 2 != 0}
    assert len(unpaid) == 667
    assert {p.round for p in state.floor.past_fixed} == unpaid
    assert len(state.floor.past_fixed) == 667
    settled = [f"P{n:03d}" for n in range(rounds) if f"P{n:03d}" not in unpaid]
    assert not [r for r in settled if f'"{r}"' in snapshot]
    assert all(f'"{r}"' in snapshot for r in unpaid)
