"""After a restart on PostgreSQL, `GET /v1/awards` lists what it listed before; a
`past_awards` table missing rows is rebuilt at recovery from the journal's replay, a row
that differs stops recovery naming it, and `jackpot verify` names both (docs/design.md,
"Past awards")."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest

from app.audit.verify_run import verify
from app.store.journal import PostgresJournal
from app.store.past_award_check import PastAwardsDiffer
from tests.integration.app.api.test_past_awards import RETAIN_MS, ROUNDS, listing, play
from tests.integration.app.support import build_server, running
from tests.support import Clock

pytestmark = pytest.mark.integration


async def history(pool: asyncpg.Pool, clock: Clock) -> dict[str, Any]:
    """ROUNDS rounds played and pruned (their void and paid awards leave memory); the
    listing then."""
    server = build_server(journal=PostgresJournal(pool), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        for n in range(ROUNDS):
            await play(client, clock, n)
        clock.now += RETAIN_MS + 10_000
        await play(client, clock, ROUNDS)
        return await listing(client, limit=1000)


async def relisted(pool: asyncpg.Pool, clock: Clock) -> dict[str, Any]:
    server = build_server(journal=PostgresJournal(pool), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        return await listing(client, limit=1000)


async def stored(pool: asyncpg.Pool) -> list[str]:
    return [r["id"] for r in await pool.fetch("SELECT id FROM past_awards ORDER BY id")]


async def test_a_restart_lists_the_same(pool: asyncpg.Pool) -> None:
    clock = Clock()
    before = await history(pool, clock)
    left = await stored(pool)
    assert len(left) == 8  # of 12: four final and unpaid stay in memory
    assert await relisted(pool, clock) == before
    assert await stored(pool) == left


async def test_missing_rows_are_written_back_at_recovery(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    before = await history(pool, clock)
    left = await stored(pool)
    # As the owner: P000, P002, P003, P004, P006, P008, P009 (void or paid) go.
    await pool.execute("DELETE FROM past_awards WHERE id LIKE '%P00%'")  # as the owner
    assert len(await stored(pool)) < len(left)
    config = build_server().writer.service.config
    report = await verify(PostgresJournal(pool), config)
    missing = [d for d in report.discrepancies if d.kind == "past_awards"]
    assert [d.what for d in missing] == [
        f"past_awards row {i}: missing" for i in left if "P00" in i
    ]
    with caplog.at_level(logging.ERROR, logger="jackpot.writer"):
        assert await relisted(pool, clock) == before
    assert "past_awards lacked 7 awards" in caplog.text
    assert await stored(pool) == left
    assert (await verify(PostgresJournal(pool), config)).discrepancies == ()


async def test_a_row_that_differs_stops_recovery_and_verify_names_it(pool: asyncpg.Pool) -> None:
    clock = Clock()
    await history(pool, clock)
    await pool.execute(
        "UPDATE past_awards SET state = 'final' WHERE id = 'T03/P002/1/player/fixed'"
    )
    config = build_server().writer.service.config
    report = await verify(PostgresJournal(pool), config)
    assert [d.what for d in report.discrepancies] == [
        "past_awards row T03/P002/1/player/fixed: differs from the replay"
    ]
    with pytest.raises(PastAwardsDiffer, match="T03/P002/1/player/fixed"):
        await relisted(pool, clock)
