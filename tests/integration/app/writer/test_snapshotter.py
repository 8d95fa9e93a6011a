"""The snapshotter against real PostgreSQL: it follows the journal and stores snapshots,
the leader never dumps its state and rebases on them, and recovery starts from them or
refuses them (docs/design.md "Recovery and snapshots")."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from app.state.timefmt import format_time
from app.store.errors import BrokenChain
from app.store.journal import PostgresJournal
from app.store.packing import pack, unpack_bytes
from app.store.snapshots import dump_text
from app.writer.snapshot_policy import SnapshotPolicy
from app.writer.snapshotter import Cadence, Snapshotter, SnapshotterProcess
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, bets, service
from tests.support import Clock, replayed, table_command

pytestmark = pytest.mark.integration

ROYAL = ["AH", "KH", "QH", "JH", "TH"]
PLAIN = ["2C", "7D", "9H", "JS", "4C"]
OTHER = ["3S", "5S", "8D", "TC", "KD"]
EVERY = 5  # a snapshot every 5 entries, whatever the state's size
CADENCE = Cadence(snapshot_every=EVERY, snapshot_growth=0, freeze_every=1_000)


class NoDump:
    """Stands in for the leader's own snapshot: any call fails the test."""

    calls = 0

    def __call__(self, *args: Any) -> None:
        NoDump.calls += 1
        raise AssertionError("the leader took a snapshot of its state")


@pytest.fixture
def no_leader_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process (the leader's), no snapshot is dumped aside or taken."""
    NoDump.calls = 0
    monkeypatch.setattr("app.writer.snapshot_policy.dump_packed_aside", NoDump())
    monkeypatch.setattr(SnapshotPolicy, "take", NoDump())


@pytest.fixture
def clock() -> Clock:
    clock = Clock()
    clock.now = NOW
    return clock


def leader(pool: asyncpg.Pool, clock: Clock) -> Writer:
    settings = WriterSettings(
        clock=clock, snapshot_every=EVERY, makes_snapshots=False, outcome_wait_s=0.05
    )
    return Writer(service(), PostgresJournal(pool), settings)


async def started(pool: asyncpg.Pool, clock: Clock) -> Writer:
    """A leader, recovered and started."""
    writer = leader(pool, clock)
    await writer.recover()
    writer.start()
    return writer


async def following(journal: PostgresJournal) -> Snapshotter:
    """A snapshotter, recovered: it follows the journal from its latest snapshot."""
    snapshotter = Snapshotter(service().config, journal, CADENCE)
    await snapshotter.recover()
    return snapshotter


async def play(writer: Writer, clock: Clock, first: int, count: int) -> None:
    """Rounds at T01 (stud link): bets, then an outcome, a royal flush now and then;
    every other round left open."""
    for n in range(first, first + count):
        status, _ = await writer.submit("bets", "T01", f"R{n}", bets(clock.now))
        assert status == 201
        if n % 2:
            cards = ROYAL if n % 3 == 0 else PLAIN
            dealt = [
                {"box": 1, "dealt_at": format_time(clock.now + 5), "cards": cards},
                {"box": 2, "dealt_at": format_time(clock.now + 6), "cards": OTHER},
            ]
            outcome = table_command("outcome", {"boxes": dealt})
            status, _ = await writer.submit("outcome", "T01", f"R{n}", outcome)
            assert status in (200, 201)
        clock.now += 1_000


async def full_replay_text(journal: PostgresJournal, seq: int) -> str:
    """The state after entry `seq` as replaying every entry from the first gives it."""
    rows = [row async for row in journal.read(0) if row.seq <= seq]
    return dump_text(replayed(rows), seq, rows[-1].hash)


async def test_the_snapshotters_snapshot_is_the_state_a_full_replay_gives(
    pool: asyncpg.Pool, clock: Clock, no_leader_dump: None
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    try:
        await play(writer, clock, 0, 12)
        snapshotter = await following(journal)
        assert await snapshotter.step() == writer.seq
    finally:
        await writer.stop()
    seqs = await journal.snapshot_seqs()
    assert len(seqs) == writer.seq // EVERY == snapshotter.stored
    for seq in seqs:
        stored = await journal.snapshot_at(seq)
        assert stored == await full_replay_text(journal, seq)
    assert NoDump.calls == 0


async def test_a_restart_recovers_from_the_snapshotters_snapshot(
    pool: asyncpg.Pool, clock: Clock, no_leader_dump: None
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    await play(writer, clock, 0, 10)
    snapshotter = await following(journal)
    await snapshotter.step()
    await play(writer, clock, 10, 3)  # after the latest snapshot: replayed at the restart
    # The leader is dropped without a stop, as a kill leaves it: what is committed stays.
    seq, head = writer.durable_head()
    latest = max(await journal.snapshot_seqs())
    restarted = leader(pool, clock)
    replayed_entries = await restarted.recover()
    assert replayed_entries == seq - latest  # from the snapshot, not from the first entry
    assert (restarted.seq, restarted.head) == (seq, head)
    assert dump_text(restarted.service, seq, head) == await full_replay_text(journal, seq)
    assert NoDump.calls == 0
    await writer.stop()


async def test_the_leader_rebases_on_the_snapshotters_snapshots_and_never_dumps(
    pool: asyncpg.Pool, clock: Clock, no_leader_dump: None
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    try:
        snapshotter = await following(journal)
        for first in range(0, 30, 5):
            await play(writer, clock, first, 5)
            await snapshotter.step()
        await play(writer, clock, 30, 4)  # the rows beyond the base: a rebase is due
        await asyncio.wait_for(_rebased(writer, max(await journal.snapshot_seqs())), 10)
    finally:
        await writer.stop()
    base = writer.position.base_point[0]
    assert base == max(await journal.snapshot_seqs())
    # Only the rows committed after the stored snapshot are kept to rebuild from.
    assert [row.seq for row in writer.position.since_base] == list(range(base + 1, writer.seq + 1))
    # What a failed commit would rebuild is the journal's state.
    text = dump_text(writer.service, writer.seq, writer.head)
    writer.position.restore()
    assert dump_text(writer.service, writer.seq, writer.head) == text
    assert NoDump.calls == 0


async def _rebased(writer: Writer, seq: int) -> None:
    while writer.position.base_point[0] != seq:
        await writer.submit("bets", "T02", f"X{writer.seq}", bets(NOW))
        await asyncio.sleep(0.05)


async def tamper(pool: asyncpg.Pool, seq: int, head: str) -> None:
    """Store at `seq` a snapshot whose text names another head (the state of another
    history), as a changed database row would."""
    async with pool.acquire() as connection:
        packed = await connection.fetchval("SELECT packed FROM snapshots WHERE seq = $1", seq)
        text = unpack_bytes(packed, seq)
        old = f'"head":"{_head_of(text)}"'
        forged = pack(text.replace(old, f'"head":"{head}"'))
        await connection.execute("UPDATE snapshots SET packed = $2 WHERE seq = $1", seq, forged)


def _head_of(text: str) -> str:
    start = text.index(',"head":"') + len(',"head":"')
    return text[start : start + 64]


async def test_a_snapshot_that_is_not_the_journals_state_at_its_seq_is_refused(
    pool: asyncpg.Pool, clock: Clock
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    try:
        await play(writer, clock, 0, 8)
        snapshotter = await following(journal)
        await snapshotter.step()
        latest = max(await journal.snapshot_seqs())
        await tamper(pool, latest, "f" * 64)
        # A leader does not take it as its base.
        with pytest.raises(ValueError, match=f"seq {latest}"):
            await writer.snapshots.rebase_on_stored()
        assert writer.position.base_point[0] < latest
    finally:
        await writer.stop()
    # Recovery refuses it: it is not the state after the journal's entry at its seq.
    with pytest.raises(BrokenChain, match=f"snapshot at seq {latest}"):
        await leader(pool, clock).recover()
    # Nor does a snapshotter follow from it.
    with pytest.raises(BrokenChain):
        await following(journal)


async def test_with_no_snapshot_at_all_recovery_replays_the_whole_journal(
    pool: asyncpg.Pool, clock: Clock
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    await play(writer, clock, 0, 6)
    await writer.stop()
    assert await journal.snapshot_seqs() == []
    restarted = leader(pool, clock)
    assert await restarted.recover() == writer.seq
    text = dump_text(restarted.service, restarted.seq, restarted.head)
    assert text == await full_replay_text(journal, writer.seq)


async def test_the_snapshotter_process_stores_snapshots_beside_a_leader_that_never_dumps(
    pool: asyncpg.Pool, clock: Clock, fresh_dsn: str, no_leader_dump: None
) -> None:
    writer, journal = await started(pool, clock), PostgresJournal(pool)
    process = SnapshotterProcess(service().config, CADENCE)
    await process.start(fresh_dsn)
    try:
        await play(writer, clock, 0, 8)
        for _ in range(300):
            if await journal.snapshot_seqs():
                break
            await asyncio.sleep(0.05)
        seqs = await journal.snapshot_seqs()
        assert seqs and seqs[0] % EVERY == 0
        assert await journal.snapshot_at(seqs[0]) == await full_replay_text(journal, seqs[0])
    finally:
        child = process.process
        await process.stop()
        await writer.stop()
    assert child is not None and child.returncode is not None
    assert NoDump.calls == 0
