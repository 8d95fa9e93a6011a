"""Every fenced append proves, in its own transaction, that it follows the database's head:
its first seq is the head's plus one and its first hash chains from the head's hash. A
database rolled back under the writer (rows lost) or forked (another writer's rows)
refuses the append with ChainBroken, and nothing of it is written."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from app.store.database import create_pool
from app.store.errors import ChainBroken
from app.store.journal import GENESIS, JournalRow, PostgresJournal, chain_hash
from app.store.lease import PostgresLease
from tests.support import rewrite_history

pytestmark = pytest.mark.integration


def chained(first: int, count: int, head: str, tag: str = "") -> list[JournalRow]:
    """`count` rows from seq `first`, chained from `head`."""
    rows = []
    for seq in range(first, first + count):
        text = f'{{"kind":"finalize","n":{seq}{tag}}}'
        head = chain_hash(head, text)
        rows.append(JournalRow(seq, seq, "finalize", None, None, text, None, head))
    return rows


@pytest.fixture
async def fenced(fresh_dsn: str) -> AsyncIterator[tuple[PostgresJournal, asyncpg.Pool]]:
    pool = await create_pool(fresh_dsn)
    term = await PostgresLease(pool, "a", 60_000).acquire()
    assert term is not None
    journal = PostgresJournal(pool)
    journal.fence = term.fence
    yield journal, pool
    await pool.close()


async def seqs(pool: asyncpg.Pool) -> list[int]:
    return [r["seq"] for r in await pool.fetch("SELECT seq FROM journal ORDER BY seq")]


async def test_appends_that_follow_the_head_are_written(
    fenced: tuple[PostgresJournal, asyncpg.Pool],
) -> None:
    journal, pool = fenced
    first = chained(1, 3, GENESIS)
    await journal.append(first)
    await journal.append(chained(4, 2, first[-1].hash))
    assert await seqs(pool) == [1, 2, 3, 4, 5]


async def test_an_append_after_lost_rows_is_refused_naming_both_heads(
    fenced: tuple[PostgresJournal, asyncpg.Pool],
) -> None:
    journal, pool = fenced
    rows = chained(1, 4, GENESIS)
    await journal.append(rows)
    await rewrite_history(pool, "DELETE FROM journal WHERE seq > 2")
    with pytest.raises(ChainBroken) as broken:
        await journal.append(chained(5, 1, rows[-1].hash))
    assert (broken.value.found_seq, broken.value.found_hash) == (2, rows[1].hash)
    assert broken.value.first_seq == 5
    assert "seq 2" in str(broken.value) and "seq 5" in str(broken.value)
    assert await seqs(pool) == [1, 2]


async def test_an_append_on_another_history_is_refused(
    fenced: tuple[PostgresJournal, asyncpg.Pool],
) -> None:
    journal, pool = fenced
    rows = chained(1, 2, GENESIS)
    await journal.append(rows)
    ours = chained(3, 1, rows[-1].hash)
    await journal.append(ours)
    # seq 3 lost, another seq 3 written
    await rewrite_history(pool, "DELETE FROM journal WHERE seq = 3")
    theirs = chained(3, 1, rows[-1].hash, tag=',"other":1')
    await journal.append(theirs)
    with pytest.raises(ChainBroken) as broken:
        await journal.append(chained(4, 1, ours[0].hash))
    assert (broken.value.found_seq, broken.value.found_hash) == (3, theirs[0].hash)
    assert await seqs(pool) == [1, 2, 3]


async def test_an_append_behind_the_head_or_with_a_gap_is_refused(
    fenced: tuple[PostgresJournal, asyncpg.Pool],
) -> None:
    journal, pool = fenced
    rows = chained(1, 3, GENESIS)
    await journal.append(rows)
    gap = chained(4, 3, rows[-1].hash)
    with pytest.raises(ChainBroken):
        await journal.append([gap[0], gap[2]])
    with pytest.raises(ChainBroken):
        await journal.append(chained(5, 1, rows[-1].hash))
    assert await seqs(pool) == [1, 2, 3]
    await journal.append(gap)  # the journal takes what follows it
    assert await seqs(pool) == [1, 2, 3, 4, 5, 6]
