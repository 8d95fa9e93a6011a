"""The writer's lease against real PostgreSQL: taken only once expired by the database's
clock, each takeover a new epoch, and an append under a stale epoch writes nothing."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.store.database import create_pool
from app.store.errors import Deposed
from app.store.journal import GENESIS, JournalRow, PostgresJournal, chain_hash
from app.store.lease import PostgresLease
from tests.conftest import run_blocking
from tests.support import rewrite_history

pytestmark = pytest.mark.integration

LEASE_MS = 60_000  # long: expiry is moved by the database's clock in the tests, not waited


def row(seq: int) -> JournalRow:
    """Entry `seq` of one chain (a writer's appends must follow the head: 0006)."""
    head = GENESIS
    for n in range(1, seq + 1):
        text = f'{{"kind":"finalize","n":{n}}}'
        head = chain_hash(head, text)
    return JournalRow(seq, 1_795_000_000_000 + seq, "finalize", None, None, text, None, head)


async def expire(pool: asyncpg.Pool, ms_from_now: int = -1) -> None:
    """Move the lease's end relative to the database's own clock."""
    await pool.execute(
        "UPDATE writer_lease SET expires_at = clock_timestamp() + $1 * INTERVAL '1 millisecond'",
        ms_from_now,
    )


async def journal_seqs(pool: asyncpg.Pool) -> list[int]:
    return [r["seq"] for r in await pool.fetch("SELECT seq FROM journal ORDER BY seq")]


async def test_a_fresh_database_gives_the_lease_to_the_first_and_then_to_nobody_else(
    pool: asyncpg.Pool,
) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    term = await a.acquire()
    assert term is not None and term.epoch == 1
    assert await b.acquire() is None
    assert await a.acquire() is None  # not even its holder takes it twice
    view = await a.read()
    assert view is not None and (view.epoch, view.holder) == (1, "a")
    assert 0 < view.expires_in_ms <= LEASE_MS


async def test_the_lease_is_taken_over_only_once_expired_by_the_database_clock(
    pool: asyncpg.Pool,
) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    assert await a.acquire() is not None
    await expire(pool, 500)  # still 0.5 s to go by the database's clock
    assert await b.acquire() is None
    await expire(pool, -1)
    term = await b.acquire()
    assert term is not None and term.epoch == 2
    assert not await a.renew(1)  # deposed: its renewal finds another epoch
    assert await b.renew(2)
    await expire(pool, -1)  # expired, nobody took it: its holder still renews it
    assert await b.renew(2)
    assert await a.acquire() is None


async def test_every_takeover_increments_the_epoch_and_a_release_hands_over_at_once(
    pool: asyncpg.Pool,
) -> None:
    contenders = [PostgresLease(pool, name, LEASE_MS) for name in "abc"]
    epochs = []
    for lease in contenders * 2:
        term = await lease.acquire()
        assert term is not None
        epochs.append(term.epoch)
        await lease.release(term.epoch)
    assert epochs == [1, 2, 3, 4, 5, 6]


async def test_an_append_under_a_stale_epoch_fails_and_writes_nothing(pool: asyncpg.Pool) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    old, new = PostgresJournal(pool), PostgresJournal(pool)
    term = await a.acquire()
    assert term is not None
    old.fence = term.fence
    await old.append([row(1)])
    await expire(pool)
    taken = await b.acquire()
    assert taken is not None
    new.fence = taken.fence
    with pytest.raises(Deposed):
        await old.append([row(2), row(3)])
    assert await journal_seqs(pool) == [1]
    await new.append([row(2)])
    assert await journal_seqs(pool) == [1, 2]
    # The pool's connection went back clean (no transaction left open by the refusal).
    assert await pool.fetchval("SELECT count(*) FROM journal") == 2


async def test_a_takeover_waits_for_an_append_in_flight_and_the_next_append_fails(
    pool: asyncpg.Pool,
) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    first = await a.acquire()
    assert first is not None
    await expire(pool)
    async with pool.acquire() as appending:
        # An append of epoch 1 has been checked by the journal's trigger, not yet committed.
        await appending.execute(
            "SELECT set_config('jackpot.epoch', '1', false),"
            " set_config('jackpot.nonce', $1, false)",
            first.nonce,
        )
        await appending.execute("BEGIN")
        first_row = row(1)
        await appending.execute(
            "INSERT INTO journal (seq, recorded_at_ms, kind, entry, hash)"
            " VALUES (1, 0, 'finalize', $1, $2)",
            first_row.entry,
            first_row.hash,
        )
        takeover = asyncio.ensure_future(b.acquire())
        await asyncio.sleep(0.3)
        assert not takeover.done()  # the takeover waits for the append's row lock
        # A renewal (a non-key update) does not wait for it.
        assert await asyncio.wait_for(a.renew(1), 2)
        await expire(pool)  # (itself a non-key update: it does not wait either)
        await appending.execute("COMMIT")
    term = await asyncio.wait_for(takeover, 5)
    assert term is not None and term.epoch == 2
    old = PostgresJournal(pool)
    old.fence = first.fence
    with pytest.raises(Deposed):
        await old.append([row(2)])
    assert await journal_seqs(pool) == [1]


async def test_an_append_that_checks_after_a_takeover_committed_fails(pool: asyncpg.Pool) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    first = await a.acquire()
    assert first is not None
    await expire(pool)
    async with pool.acquire() as taking:
        await taking.execute("BEGIN")
        epoch = await taking.fetchval(
            "UPDATE writer_lease SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch"
        )
        assert epoch == 2
        old = PostgresJournal(pool)
        old.fence = first.fence
        append = asyncio.ensure_future(old.append([row(1)]))
        await asyncio.sleep(0.3)
        assert not append.done()  # waits for the takeover to end
        await taking.execute("COMMIT")
    with pytest.raises(Deposed):
        await asyncio.wait_for(append, 5)
    assert await journal_seqs(pool) == []
    assert await b.acquire() is not None  # the manual takeover left it expired: epoch 3


async def test_an_append_without_an_epoch_is_refused_once_a_writer_has_led(
    pool: asyncpg.Pool,
) -> None:
    unfenced = PostgresJournal(pool)
    await unfenced.append([row(1)])  # no writer ever led: tools and tests may append
    assert await PostgresLease(pool, "a", LEASE_MS).acquire() is not None
    with pytest.raises(Deposed):  # a process that never took the lease writes nothing
        await unfenced.append([row(2)])
    with pytest.raises(asyncpg.PostgresError) as raw:  # nor does a bare INSERT
        await pool.execute(
            "INSERT INTO journal (seq, recorded_at_ms, kind, entry, hash)"
            " VALUES (2, 0, 'x', '{}', 'h')"
        )
    assert raw.value.sqlstate == "JP002"
    assert await journal_seqs(pool) == [1]


async def test_the_epoch_is_set_once_per_session_and_again_after_a_takeover(
    pool: asyncpg.Pool,
) -> None:
    a, b = PostgresLease(pool, "a", LEASE_MS), PostgresLease(pool, "b", LEASE_MS)
    journal = PostgresJournal(pool)
    term = await a.acquire()
    assert term is not None
    journal.fence = term.fence
    for seq in (1, 2, 3):  # the pool's connections each given the epoch once
        await journal.append([row(seq)])
    await expire(pool)
    taken = await b.acquire()
    assert taken is not None
    with pytest.raises(Deposed):  # the sessions still carry the old epoch
        await journal.append([row(4)])
    journal.fence = taken.fence  # a takeover by this process: the new epoch is set
    await journal.append([row(4)])
    assert await journal_seqs(pool) == [1, 2, 3, 4]


# -- two contenders, any interleaving ------------------------------------------------------

Op = tuple[int, str]  # (contender 0 or 1, "acquire" | "renew" | "append" | "expire")
OPS = st.lists(
    st.tuples(st.integers(0, 1), st.sampled_from(["acquire", "renew", "append", "expire"])),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_any_interleaving_keeps_one_writer_per_epoch_and_only_the_current_epoch_appends(
    fresh_dsn: str, ops: list[Op]
) -> None:
    run_blocking(interleave(fresh_dsn, ops))


async def interleave(dsn: str, ops: list[Op]) -> None:
    pool = await create_pool(dsn, max_size=3)
    # Each contender's journal has a pool of its own, as each writer process has: a
    # session carries the fence of the one journal that set it.
    own = [await create_pool(dsn, max_size=2) for _ in range(2)]
    try:
        await rewrite_history(pool, "TRUNCATE journal")
        await pool.execute(
            "UPDATE writer_lease SET epoch = 0, holder = NULL, expires_at = '-infinity'"
        )
        leases = [PostgresLease(pool, name, LEASE_MS) for name in ("a", "b")]
        journals = [PostgresJournal(own[0]), PostgresJournal(own[1])]
        believed: list[int | None] = [None, None]  # the epoch each believes it leads under
        db_epoch, expired = 0, True  # the model
        written: list[int] = []
        for who, op in ops:
            if op == "expire":
                await expire(pool)
                expired = True
            elif op == "acquire":
                term = await leases[who].acquire()
                assert (term is not None) == expired
                if term is not None:
                    db_epoch += 1
                    expired = False
                    assert term.epoch == db_epoch
                    believed[who], journals[who].fence = term.epoch, term.fence
            elif op == "renew":
                mine = believed[who]
                renewed = mine is not None and await leases[who].renew(mine)
                assert renewed == (mine == db_epoch and mine > 0)
                expired = expired and not renewed
            elif believed[who] is not None:  # append
                seq = len(written) + 1
                try:
                    await journals[who].append([row(seq)])
                except Deposed:
                    assert believed[who] != db_epoch
                else:
                    assert believed[who] == db_epoch
                    written.append(seq)
        assert await journal_seqs(pool) == written
    finally:
        for each in own:
            await each.close()
        await pool.close()


# -- a rollback of the database hands an epoch out again ----------------------------------


async def roll_back_lease(pool: asyncpg.Pool, saved: asyncpg.Record) -> None:
    """The lease row as it was when `saved` was read, expired: what an asynchronous
    replica promoted without the last takeover's commit holds."""
    await pool.execute(
        "UPDATE writer_lease SET epoch = $1, holder = $2, expires_at = '-infinity' WHERE id = 1",
        saved["epoch"],
        saved["holder"],
    )


async def test_an_epoch_handed_out_again_after_a_rollback_fences_out_its_first_holder(
    pool: asyncpg.Pool,
) -> None:
    a, b, c = (PostgresLease(pool, name, LEASE_MS) for name in "abc")
    first = await a.acquire()
    assert first is not None
    saved = await pool.fetchrow("SELECT * FROM writer_lease WHERE id = 1")
    assert saved is not None
    await expire(pool)
    lost = await b.acquire()  # the takeover the rollback loses
    assert lost is not None and lost.epoch == 2
    mine = PostgresJournal(pool)
    mine.fence = lost.fence
    await roll_back_lease(pool, saved)
    again = await c.acquire()  # the same epoch number, for another writer
    assert again is not None and again.epoch == 2
    assert not await b.renew(2)  # b is deposed, though its epoch is the lease's
    assert await c.renew(2)
    with pytest.raises(Deposed):
        await mine.append([row(1)])
    theirs = PostgresJournal(pool)
    theirs.fence = again.fence
    await theirs.append([row(1)])
    assert await journal_seqs(pool) == [1]
