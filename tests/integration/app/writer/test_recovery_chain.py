"""Recovery and a standby check the chain they read: every entry follows its predecessor
(seq and hash) and the snapshot they start from is the journal's state at its seq. On a
broken chain they refuse to lead, naming the first bad seq."""

from __future__ import annotations

import logging

import asyncpg
import pytest

from app.store.errors import BrokenChain
from app.store.journal import PostgresJournal
from app.store.lease import PostgresLease
from app.writer.leadership import Leadership
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, bets, service
from tests.support import Clock, rewrite_history

pytestmark = pytest.mark.integration

RAISE_A_WAGER = (
    "UPDATE journal SET entry = replace(entry, '\"jackpot\":1000000', '\"jackpot\":2000000')"
)


async def recorded(pool: asyncpg.Pool, rounds: int, snapshot_every: int = 20_000) -> Writer:
    """A journal of `rounds` bets written by a writer (with no lease: a tool's journal)."""
    clock = Clock()
    clock.now = NOW
    settings = WriterSettings(clock=clock, snapshot_every=snapshot_every)
    writer = Writer(service(), PostgresJournal(pool), settings)
    await writer.recover()
    writer.start()
    for n in range(rounds):
        assert (await writer.submit("bets", "T01", f"R{n}", bets()))[0] == 201
        if writer.snapshots.task is not None:
            await writer.snapshots.task
    await writer.stop()
    return writer


def fresh(pool: asyncpg.Pool) -> Writer:
    return Writer(service(), PostgresJournal(pool))


async def test_a_changed_entry_is_refused_at_recovery_naming_its_seq(pool: asyncpg.Pool) -> None:
    await recorded(pool, 5)
    await rewrite_history(pool, RAISE_A_WAGER + " WHERE seq = 3")
    with pytest.raises(BrokenChain, match="journal entry 3") as broken:
        await fresh(pool).recover()
    assert broken.value.seq == 3


async def test_a_missing_entry_is_refused_at_recovery_naming_the_gap(pool: asyncpg.Pool) -> None:
    await recorded(pool, 5)
    await rewrite_history(pool, "DELETE FROM journal WHERE seq = 2")
    with pytest.raises(BrokenChain, match="entries 2 to 2 are missing") as broken:
        await fresh(pool).recover()
    assert broken.value.seq == 3


async def test_a_snapshot_beyond_the_journal_is_refused(pool: asyncpg.Pool) -> None:
    await recorded(pool, 6, snapshot_every=3)
    seq = await pool.fetchval("SELECT max(seq) FROM snapshots")
    assert seq is not None
    await rewrite_history(pool, "DELETE FROM journal WHERE seq >= $1", seq)
    with pytest.raises(BrokenChain, match=f"snapshot at seq {seq}") as broken:
        await fresh(pool).recover()
    assert broken.value.seq == seq


async def test_a_standby_on_a_broken_chain_refuses_to_lead(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    await recorded(pool, 3)
    await rewrite_history(pool, RAISE_A_WAGER + " WHERE seq = 3")
    standby = fresh(pool)  # follows the journal from its start: the changed entry among it
    following = Leadership(standby, PostgresJournal(pool), PostgresLease(pool, "b", 60_000))
    with caplog.at_level(logging.ERROR):
        await following._follow_or_take_over()
    assert not following.leading
    assert any("journal entry 3" in r.getMessage() for r in caplog.records)
    assert await pool.fetchval("SELECT epoch FROM writer_lease") == 0  # it never took it
