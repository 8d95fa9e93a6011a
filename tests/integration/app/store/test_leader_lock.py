"""The leader's lock against real PostgreSQL: a standby takes the lease at once when the
leader's process dies (its session ends), only at expiry when it is frozen (its session
lives), and by the fenced statement either way (docs/design.md "The lease and its fence")."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.store.leader_lock import LOCK_CLASS, PostgresLeaderLock, lock_key
from app.store.lease import PostgresLease, Term
from tests.conftest import run_blocking

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[4]
LEASE_MS = 60_000  # long: a takeover before it ends is the lock's doing, not the lease's

# A leader in a process of its own: takes the lease with its lock, says its epoch, then
# (once told, by a line on stdin) renews and appends one entry under its fence.
LEADER = """
import asyncio, sys
from app.store.journal import GENESIS, chain_hash
from app.store.database import create_pool
from app.store.errors import Deposed
from app.store.journal import JournalRow, PostgresJournal
from app.store.leader_lock import PostgresLeaderLock
from app.store.lease import PostgresLease, Term
from tests.conftest import run_blocking

async def main(dsn: str) -> None:
    pool = await create_pool(dsn)
    lease = PostgresLease(pool, "old", 60_000)
    lock = PostgresLeaderLock(lease, lambda: dsn)
    term = await lock.acquire()
    print(term.epoch, lock.held, flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    print("renewed" if await lease.renew(term.epoch) else "not renewed", flush=True)
    journal = PostgresJournal(pool)
    journal.fence = term.fence
    text = '{"kind":"finalize","n":1}'
    row = JournalRow(1, 1_795_000_000_001, "finalize", None, None, text, None,
                     chain_hash(GENESIS, text))
    try:
        await journal.append([row])
        print("appended", flush=True)
    except Deposed:
        print("deposed", flush=True)

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture
async def pool(fresh_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await asyncpg.create_pool(fresh_dsn)
    yield pool
    await pool.close()


@pytest.fixture
def leader(fresh_dsn: str) -> Iterator[subprocess.Popen[str]]:
    dsn = fresh_dsn
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", LEADER, dsn],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    ) as process:  # fmt: skip
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()


def said(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().strip()


async def lease_row(pool: asyncpg.Pool) -> asyncpg.Record:
    """The lease by the database's clock, in ms since the epoch."""
    record = await pool.fetchrow(
        "SELECT epoch, holder,"
        " (EXTRACT(EPOCH FROM expires_at) * 1000)::BIGINT AS expires_ms,"
        " (EXTRACT(EPOCH FROM acquired_at) * 1000)::BIGINT AS acquired_ms"
        " FROM writer_lease WHERE id = 1"
    )
    assert record is not None
    return record


async def expire(pool: asyncpg.Pool) -> None:
    await pool.execute("UPDATE writer_lease SET expires_at = clock_timestamp() - INTERVAL '1 ms'")


async def gone(standby: PostgresLeaderLock) -> Term:
    """The term a standby takes once the leader's lock is free (within half the lease)."""
    for _ in range(30):
        term = await standby.leader_gone(1.0)
        if term is not None:
            return term
    raise AssertionError("the leader's lock was never granted")


def standby_lock(pool: asyncpg.Pool, dsn: str, name: str = "new") -> PostgresLeaderLock:
    return PostgresLeaderLock(PostgresLease(pool, name, LEASE_MS), lambda: dsn)


async def test_a_killed_leader_is_taken_over_at_once_long_before_its_lease_ends(
    pool: asyncpg.Pool, fresh_dsn: str, leader: subprocess.Popen[str]
) -> None:
    assert await asyncio.to_thread(said, leader) == "1 1"
    standby = standby_lock(pool, fresh_dsn)
    try:
        # Alive: its session holds the lock, the lease is its own.
        assert await standby.leader_gone(0.3) is None
        assert await standby.acquire() is None
        before = await lease_row(pool)
        leader.kill()  # SIGKILL: its socket closes, PostgreSQL ends its session
        leader.wait(timeout=30)
        term = await gone(standby)
        after = await lease_row(pool)
        # Taken by the fenced statement (a new epoch, our nonce), before the old lease
        # would have ended by the database's clock.
        assert (term.epoch, after["epoch"], after["holder"]) == (2, 2, "new")
        assert term.nonce and term.at_ms < before["expires_ms"]
        assert after["acquired_ms"] < before["expires_ms"]
        assert standby.held == 2  # the new epoch's lock, from the same statement
        assert await standby.lease.renew(2)
        # Another standby now sees a live leader again.
        other = standby_lock(pool, fresh_dsn, "other")
        assert await other.leader_gone(0.2) is None
        await other.let_go()
    finally:
        await standby.let_go()


async def test_a_frozen_leader_is_taken_over_only_at_expiry_and_its_writes_are_fenced(
    pool: asyncpg.Pool, fresh_dsn: str, leader: subprocess.Popen[str]
) -> None:
    assert await asyncio.to_thread(said, leader) == "1 1"
    leader.send_signal(signal.SIGSTOP)  # its session (and its lock) lives on
    standby = standby_lock(pool, fresh_dsn)
    try:
        assert await standby.leader_gone(0.5) is None
        assert await standby.acquire() is None
        assert (await lease_row(pool))["epoch"] == 1
        await expire(pool)
        ended = (await lease_row(pool))["expires_ms"]
        term = await standby.acquire()
        assert term is not None and term.epoch == 2
        assert (await lease_row(pool))["acquired_ms"] >= ended  # by the lease alone
        leader.send_signal(signal.SIGCONT)
        assert leader.stdin is not None
        leader.stdin.write("go\n")
        leader.stdin.flush()
        assert await asyncio.to_thread(said, leader) == "not renewed"
        assert await asyncio.to_thread(said, leader) == "deposed"
        assert await pool.fetchval("SELECT count(*) FROM journal") == 0
    finally:
        await standby.let_go()


async def test_a_living_leader_whose_lock_session_is_lost_is_deposed_at_once(
    pool: asyncpg.Pool, fresh_dsn: str
) -> None:
    leading, standby = standby_lock(pool, fresh_dsn, "old"), standby_lock(pool, fresh_dsn)
    try:
        first = await leading.acquire()
        assert first is not None and leading.held == 1
        assert await leading.keep(1)
        # Its lock's session ends (an administrator, a network cut) while it lives.
        await pool.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
            " AND classid = $1::OID AND objid = $2::OID AND objsubid = 2",
            LOCK_CLASS,
            lock_key(1),
        )
        term = await gone(standby)
        assert term.epoch == 2
        assert not await leading.lease.renew(1)  # deposed: it stands down
    finally:
        await leading.let_go()
        await standby.let_go()


async def test_a_leader_alone_takes_its_lock_again_on_a_new_session(
    pool: asyncpg.Pool, fresh_dsn: str
) -> None:
    leading = standby_lock(pool, fresh_dsn, "old")
    try:
        assert await leading.acquire() is not None
        await pool.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
            " AND objsubid = 2"
        )
        await asyncio.sleep(0.1)
        assert await leading.keep(1)  # a new session, the lock taken again
        assert leading.held == 1
        standby = standby_lock(pool, fresh_dsn)
        assert await standby.leader_gone(0.2) is None  # so it is seen alive
        await standby.let_go()
        assert (await lease_row(pool))["epoch"] == 1
    finally:
        await leading.let_go()


async def test_a_leader_that_took_the_lease_without_its_lock_is_taken_over_at_once(
    pool: asyncpg.Pool, fresh_dsn: str
) -> None:
    # Through the pool (its lock's session could not be had): a standby finds the epoch's
    # lock free and takes over; the leader is fenced as any deposed one.
    alone = PostgresLease(pool, "a", LEASE_MS)
    first = await alone.acquire()
    assert first is not None
    standby = standby_lock(pool, fresh_dsn)
    try:
        term = await standby.leader_gone(0.5)
        assert term is not None and term.epoch == 2
        assert not await alone.renew(1)
    finally:
        await standby.let_go()


# -- three contenders, any interleaving of deaths, expiries, takeovers ---------------------

LockOp = tuple[int, str]  # (contender, "acquire" | "gone" | "renew" | "keep" | "die" | "expire")
LOCK_OPS = st.lists(
    st.tuples(
        st.integers(0, 2), st.sampled_from(["acquire", "gone", "renew", "keep", "die", "expire"])
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=LOCK_OPS)
@example(ops=[(0, "acquire"), (1, "gone"), (0, "die"), (1, "gone"), (2, "gone"), (1, "renew")])
@example(ops=[(0, "acquire"), (0, "expire"), (1, "gone"), (2, "acquire"), (0, "renew")])
def test_a_standby_takes_over_early_exactly_when_no_session_of_the_leader_is_left(
    fresh_dsn: str, ops: list[LockOp]
) -> None:
    run_blocking(interleave(fresh_dsn, ops))


async def interleave(dsn: str, ops: list[LockOp]) -> None:
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=3)
    contenders: list[PostgresLeaderLock] = []
    try:
        await pool.execute(
            "UPDATE writer_lease SET epoch = 0, nonce = NULL, holder = NULL,"
            " expires_at = '-infinity'"
        )
        born = 0

        def contender() -> PostgresLeaderLock:
            nonlocal born
            born += 1  # a new process: a name, a lease and sessions of its own
            return standby_lock(pool, dsn, f"p{born}")

        contenders = [contender() for _ in range(3)]
        # The model: the lease's epoch, whether it has expired, who took it and whether
        # that process (and so its lock's session) still lives.
        epoch, expired, holder, holder_alive = 0, True, -1, False
        for who, op in ops:
            me = contenders[who]
            took = None
            if op == "expire":
                await expire(pool)
                expired = True
            elif op == "die":  # kill -9: its sessions end; a new process takes its place
                await me.let_go()
                contenders[who] = contender()
                holder_alive = holder_alive and holder != who
            elif op == "acquire":
                took = await me.acquire()
                assert (took is not None) == expired
            elif op == "gone" and who != holder:  # only standbys watch the leader
                took = await me.leader_gone(0)
                assert (took is not None) == (epoch > 0 and not holder_alive)
            elif op == "renew":
                renewed = await me.lease.renew(epoch)
                assert renewed == (who == holder and holder_alive)
                expired = expired and not renewed
            elif op == "keep" and who == holder and holder_alive:
                assert await me.keep(epoch)  # its session lives: it still holds the lock
            if took is not None:
                epoch, expired, holder, holder_alive = epoch + 1, False, who, True
                assert took.epoch == epoch and me.held == epoch
        assert await pool.fetchval("SELECT epoch FROM writer_lease") == epoch
    finally:
        for each in contenders:
            await each.let_go()
        await pool.close()
