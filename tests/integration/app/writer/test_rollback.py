"""A database rolled back under the leading writer (rows it committed are gone): its next
append is refused by the database (ChainBroken), the group gets 503, the writer rebuilds
from the database and says so, and no event the database does not hold is answered 200."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import asyncpg
import pytest

from app.store.journal import PostgresJournal
from app.store.lease import PostgresLease
from app.writer.refusals import Unavailable
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, bets, service
from tests.support import Clock, rewrite_history

pytestmark = pytest.mark.integration


@pytest.fixture
async def writer(pool: asyncpg.Pool) -> AsyncIterator[Writer]:
    term = await PostgresLease(pool, "a", 60_000).acquire()
    assert term is not None
    journal = PostgresJournal(pool)
    journal.fence = term.fence
    clock = Clock()
    clock.now = NOW
    writer = Writer(service(), journal, WriterSettings(clock=clock))
    await writer.recover()
    writer.start()
    yield writer
    await writer.stop()


async def test_a_lost_tail_is_refused_rebuilt_and_never_answered_from_memory(
    writer: Writer, pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    assert (await writer.submit("bets", "T01", "R1", bets()))[0] == 201
    assert (await writer.submit("bets", "T01", "LOST1", bets()))[0] == 201
    lost = await pool.fetchval("SELECT seq FROM journal WHERE idem_key = 'T01|LOST1|bets'")
    # the database rolled back: LOST1 is gone
    await rewrite_history(pool, "DELETE FROM journal WHERE seq >= $1", lost)
    with caplog.at_level(logging.ERROR, logger="jackpot.writer"), pytest.raises(Unavailable):
        await writer.submit("bets", "T01", "R2", bets())
    assert writer.stats["chain_broken"] == 1
    assert any(
        f"seq {lost - 1}" in record.getMessage() and "rebuil" in record.getMessage()
        for record in caplog.records
    )
    # Rebuilt from the database: its head, and no memory of LOST1.
    head = await pool.fetchrow("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1")
    assert head is not None
    assert (writer.seq, writer.head) == (head["seq"], head["hash"])
    assert "T01|LOST1|bets" not in writer.position.answers
    assert ("T01", "LOST1") not in writer.service.floor.rounds
    # A retry of LOST1 is recorded anew (201, not a retry's 200 from memory).
    assert (await writer.submit("bets", "T01", "LOST1", bets()))[0] == 201
    assert await pool.fetchval("SELECT count(*) FROM journal WHERE idem_key = 'T01|LOST1|bets'")
    assert (await writer.submit("bets", "T01", "R2", bets()))[0] == 201
    last = await pool.fetchrow("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1")
    assert last is not None
    assert (writer.seq, writer.head) == (last["seq"], last["hash"])
    assert not writer.degraded
