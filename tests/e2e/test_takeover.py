"""The leader's lock with real writer processes: a killed leader is taken over long before
its lease ends, a frozen one only once it has ended (docs/design.md "The lease and its
fence"). Orders of events by the database's clock, never a wall-clock bound."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from tests.conftest import run_blocking
from tests.e2e.cluster import (
    TAKEOVER_S,
    TOKENS,
    Writer,
    bets_body,
    leader_of,
    post_until_answered,
    wait_for,
    writer_pair,
)
from tests.e2e.test_failover import Load, check_journal, journal_keys

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LONG_LEASE_MS = 60_000  # a takeover within it is the lock's doing
SHORT_LEASE_MS = 1_500


def pair_with_lease(
    folder: Path, dsn: str, lease_ms: int, lock: str = "1"
) -> contextlib.AbstractContextManager[list[Writer]]:
    env = {"JACKPOT_LEASE_MS": str(lease_ms), "JACKPOT_LEADER_LOCK": lock}
    return writer_pair(folder, dsn, env)


@pytest.fixture
def long_pair(folder: Path, fresh_dsn: str) -> Iterator[list[Writer]]:
    with pair_with_lease(folder, fresh_dsn, LONG_LEASE_MS) as writers:
        yield writers


@pytest.fixture
def short_pair(folder: Path, fresh_dsn: str) -> Iterator[list[Writer]]:
    with pair_with_lease(folder, fresh_dsn, SHORT_LEASE_MS) as writers:
        yield writers


@pytest.fixture
def unlocked_pair(folder: Path, fresh_dsn: str) -> Iterator[list[Writer]]:
    with pair_with_lease(folder, fresh_dsn, SHORT_LEASE_MS, lock="0") as writers:
        yield writers


_LEASE = """
SELECT epoch, (EXTRACT(EPOCH FROM expires_at) * 1000)::BIGINT AS expires_ms,
       (EXTRACT(EPOCH FROM acquired_at) * 1000)::BIGINT AS acquired_ms,
       (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT AS now_ms
  FROM writer_lease WHERE id = 1
"""


class LeaseWatch:
    """The lease row every 20 ms: the last end seen of each epoch, by the database's clock."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.ends: dict[int, int] = {}
        self.acquired: dict[int, int] = {}
        self.stop = asyncio.Event()

    async def run(self) -> None:
        connection = await asyncpg.connect(self.dsn)
        try:
            while not self.stop.is_set():
                await self.read(connection)
                await asyncio.sleep(0.02)
        finally:
            await connection.close()

    async def read(self, connection: asyncpg.Connection) -> int:
        row = await connection.fetchrow(_LEASE)
        assert row is not None
        self.ends[row["epoch"]] = row["expires_ms"]
        self.acquired[row["epoch"]] = row["acquired_ms"]
        return int(row["now_ms"])

    async def now_ms(self) -> int:
        connection = await asyncpg.connect(self.dsn)
        try:
            return await self.read(connection)
        finally:
            await connection.close()


def lock_metric(writer: Writer) -> str | None:
    """The jackpot_writer_leader_lock line of the writer's /metrics."""
    try:
        text = httpx.get(f"{writer.url}/metrics", timeout=2).text
    except httpx.HTTPError:
        return None
    return next((x for x in text.splitlines() if x.startswith("jackpot_writer_leader_lock ")), None)


async def first_ack(writer: Writer, load: Load, n: int) -> None:
    """Posted until the writer answers it 200, as a table behind the proxy does."""
    key = ("T01", f"first-{n}")
    body = load.bodies[key] = bets_body(1)
    async with httpx.AsyncClient(base_url=writer.url, timeout=10) as client:
        status, answer = await post_until_answered([client], *key, body)
    assert status == 200
    load.first[key] = answer


def test_a_killed_leader_is_taken_over_and_acknowledging_before_its_lease_ends(
    long_pair: list[Writer], fresh_dsn: str
) -> None:
    for writer in long_pair:
        writer.start()
    leader = leader_of(long_pair)
    load = Load(long_pair)
    watch = LeaseWatch(fresh_dsn)
    # The leader holds its lock (the metric), the standby holds none.
    wait_for(
        "the leader's lock", lambda: lock_metric(leader) == "jackpot_writer_leader_lock 1.0", 30
    )
    assert lock_metric(next(w for w in long_pair if w is not leader)) == (
        "jackpot_writer_leader_lock 0.0"
    )

    async def run() -> None:
        nonlocal leader
        watching = asyncio.create_task(watch.run())
        loading = asyncio.create_task(load.run())
        for n in range(2):
            await asyncio.sleep(1.5)
            assert not loading.done(), loading.exception()
            old_epoch = max(watch.ends)
            leader.kill()  # SIGKILL, mid-flight
            standby = next(w for w in long_pair if w is not leader)
            await first_ack(standby, load, n)
            acked_ms = await watch.now_ms()
            new_epoch = max(watch.ends)
            # The new leader took a new epoch and acknowledged before the old lease
            # would have ended, by the database's clock: the lock's doing, not expiry.
            assert new_epoch == old_epoch + 1
            assert watch.acquired[new_epoch] < watch.ends[old_epoch]
            assert acked_ms < watch.ends[old_epoch]
            assert standby.leads()
            leader.start()  # back, as a standby
            await asyncio.to_thread(leader_of, long_pair)
            leader = standby
        load.stop.set()
        watch.stop.set()
        await loading
        await watching

    asyncio.run(run())
    assert len(load.first) > 20, "the load did not get going"
    # Nothing acknowledged lost, each once, every retry its first answer, verify clean.
    check_journal(fresh_dsn, long_pair[0].floor, load, leader)


def test_a_frozen_leader_is_taken_over_only_once_its_lease_ended_and_is_fenced(
    short_pair: list[Writer], fresh_dsn: str
) -> None:
    for writer in short_pair:
        writer.start()
    old = leader_of(short_pair)
    new = next(w for w in short_pair if w is not old)
    watch = LeaseWatch(fresh_dsn)

    async def run() -> list[int]:
        watching = asyncio.create_task(watch.run())
        await asyncio.sleep(0.5)
        old_epoch = max(watch.ends)
        async with httpx.AsyncClient(base_url=old.url, timeout=60) as client:
            status, _ = await post_until_answered([client], "T01", "before", bets_body(2))
            assert status == 200
            old.signal(signal.SIGSTOP)  # its session, and its lock, live on

            async def held(n: int) -> int:
                try:
                    r = await client.post(
                        f"/v1/tables/T02/rounds/held-{n}/bets",
                        json=bets_body(1),
                        headers={"Authorization": f"Bearer {TOKENS['T02']}"},
                    )
                except httpx.HTTPError:
                    return -1
                return r.status_code

            waiting = [asyncio.create_task(held(n)) for n in range(5)]
            await asyncio.to_thread(wait_for, "the standby leads", new.leads, TAKEOVER_S, new.tail)
            await first_ack(new, Load([new]), 0)
            # Read now: the watch polls every 20 ms and may not have seen the takeover yet.
            await watch.now_ms()
            new_epoch = max(watch.ends)
            assert new_epoch == old_epoch + 1
            # Taken at expiry only: not before the frozen leader's last renewal ran out.
            assert watch.acquired[new_epoch] >= watch.ends[old_epoch]
            old.signal(signal.SIGCONT)
            answers = await asyncio.gather(*waiting)
        watch.stop.set()
        await watching
        return answers

    answers = asyncio.run(run())
    assert 200 not in answers, answers  # fenced: nothing it held was acknowledged
    wait_for("the old leader stands by", lambda: old.role() == "standby", TAKEOVER_S, old.tail)
    keys = run_blocking(journal_keys(fresh_dsn))
    assert not [k for k in keys if k.startswith("T02|held-")]
    assert keys["T01|before|bets"] == 1 and keys["T01|first-0|bets"] == 1
    assert new.leads()


def test_without_the_lock_a_leader_keeps_its_lease_and_a_killed_one_waits_for_it(
    unlocked_pair: list[Writer], fresh_dsn: str
) -> None:
    # JACKPOT_LEADER_LOCK=0 (behind a transaction-mode pooler): the lease alone, as before.
    for writer in unlocked_pair:
        writer.start()
    leader = leader_of(unlocked_pair)
    standby = next(w for w in unlocked_pair if w is not leader)
    watch = LeaseWatch(fresh_dsn)

    async def run() -> None:
        watching = asyncio.create_task(watch.run())
        await asyncio.sleep(SHORT_LEASE_MS / 1000 * 3)  # renewed all along
        assert list(watch.ends) == [max(watch.ends)] and leader.leads()
        assert lock_metric(leader) == "jackpot_writer_leader_lock 0.0"
        old_epoch = max(watch.ends)
        leader.kill()
        await first_ack(standby, Load([standby]), 0)
        await watch.now_ms()  # the row as it is now: the poll may not have seen the new epoch
        assert watch.acquired[old_epoch + 1] >= watch.ends[old_epoch]  # at expiry only
        watch.stop.set()
        await watching

    asyncio.run(run())
