"""Meter awards that left memory, after a restart on PostgreSQL: listed as before, and
`jackpot verify` names a `past_awards` row of one that is missing, which recovery then
writes back (docs/design.md, "Past awards")."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest

from app.audit.verify_run import verify
from app.store.journal import PostgresJournal
from tests.integration.app.api.test_past_meter_awards import (
    award_of,
    fate,
    hits_shown,
    meter_rows,
    prune,
    settle,
)
from tests.integration.app.support import build_server, running
from tests.support import Clock

pytestmark = pytest.mark.integration

HITS = 12


async def history(pool: asyncpg.Pool, clock: Clock) -> tuple[dict[str, Any], list[Any]]:
    """HITS meter hits settled, then pruned: the listing and the floor's hits before."""
    server = build_server(journal=PostgresJournal(pool), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        rows = await settle(client, clock, HITS)
        shown = await hits_shown(client)
        await prune(client, clock, 1)
        return rows, shown


async def relisted(pool: asyncpg.Pool, clock: Clock) -> tuple[dict[str, Any], list[Any]]:
    server = build_server(journal=PostgresJournal(pool), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        return await meter_rows(client), await hits_shown(client)


async def stored(pool: asyncpg.Pool) -> list[str]:
    rows = await pool.fetch("SELECT id FROM past_awards WHERE kind = 'meter' ORDER BY id")
    return [r["id"] for r in rows]


async def test_a_restart_lists_the_same_and_verify_names_a_missing_row(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    before, shown = await history(pool, clock)
    left = sorted(award_of(n) for n in range(HITS) if fate(n) != "final")
    assert await stored(pool) == left
    rows, shown_again = await relisted(pool, clock)
    assert {i: rows[i] for i in before} == before
    assert shown_again == shown

    gone = award_of(4)  # paid
    await pool.execute("DELETE FROM past_awards WHERE id = $1", gone)  # as the owner
    config = build_server().writer.service.config
    report = await verify(PostgresJournal(pool), config)
    assert [d.what for d in report.discrepancies] == [f"past_awards row {gone}: missing"]
    assert report.meter_awards == len([n for n in range(HITS) if fate(n) != "void"])
    with caplog.at_level(logging.ERROR, logger="jackpot.writer"):
        rows, _ = await relisted(pool, clock)
    assert "past_awards lacked 1 awards" in caplog.text
    assert await stored(pool) == left
    assert {i: rows[i] for i in before} == before
    assert (await verify(PostgresJournal(pool), config)).discrepancies == ()
