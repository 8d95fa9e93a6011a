"""A standby follows the leader's snapshots against real PostgreSQL: a stored
snapshot, megabytes on a large floor, is fetched once it is a newer one the standby has
applied, not at every poll while the leader's next snapshot is postponed."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from app.store.journal import PostgresJournal
from app.store.packing import unpack_bytes
from app.writer.leadership import Leadership
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, NoLease, bets, service
from tests.support import Clock

pytestmark = pytest.mark.integration


class CountingJournal(PostgresJournal):
    """Counts what a standby asks about the stored snapshots."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self.fetched = 0  # whole snapshots
        self.asked = 0  # their seq alone

    async def latest_snapshot(self) -> tuple[int, bytes] | None:
        self.fetched += 1
        return await super().latest_snapshot()

    async def latest_snapshot_seq(self) -> int | None:
        self.asked += 1
        return await super().latest_snapshot_seq()


async def post(writer: Writer, round_id: str, clock: Clock) -> None:
    status, _ = await writer.submit("bets", "T01", round_id, bets(clock.now))
    assert status == 201
    if writer.snapshots.task is not None:
        await writer.snapshots.task


async def test_a_standby_fetches_a_stored_snapshot_once_not_at_every_poll(
    pool: asyncpg.Pool,
) -> None:
    clock = Clock()
    clock.now = NOW
    # Its first snapshot at 3 entries (the empty floor as the base), the next far off: it
    # waits for the journal to grow by a million times the base's size (`snapshot_due`).
    settings = WriterSettings(clock=clock, snapshot_every=3, snapshot_growth=10**6)
    leader = Writer(service(), PostgresJournal(pool), settings)
    journal = CountingJournal(pool)
    standby = Writer(service(), journal, WriterSettings(clock=clock, snapshot_every=3))
    following = Leadership(standby, journal, NoLease())
    await leader.recover()
    await standby.recover()
    leader.start()
    try:
        for n in range(4):
            await post(leader, f"R{n}", clock)
        first = await journal.latest_snapshot()
        assert first is not None
        stored = first[0]
        # The leader's next snapshot is far off (`snapshot_due`): rows pile up after the
        # stored one, beyond `snapshot_every`.
        for n in range(4, 10):
            await post(leader, f"R{n}", clock)
        assert leader.seq - stored > 3
        journal.fetched = journal.asked = 0
        polls = 5
        for _ in range(polls):
            await following.follow()
        assert (standby.seq, standby.head) == (leader.seq, leader.head)
        assert standby.position.base_point[0] == stored
        assert journal.fetched == 1  # once, when it was new to us
        assert journal.asked == polls
        latest: Any = await journal.latest_snapshot()
        # Its size, as the leader would weigh its next snapshot with, once this one leads.
        assert standby.position.base_size == len(unpack_bytes(latest[1], stored).encode())
    finally:
        await leader.stop()
