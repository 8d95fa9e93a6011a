"""The snapshotter: a process of its own that follows the journal and stores snapshots, so
that the leader never dumps its state (docs/design.md "Recovery and snapshots").

It starts from the latest snapshot, checked against the chain as recovery checks it, and
applies every committed entry through the same kinds as the
writer, the standby and `jackpot verify`, and stores a snapshot whenever the writer's
policy says one is due (`snapshot_every` entries and the journal grown by the last
snapshot's size). Each names the seq and the head hash it is the state after: recovery
refuses one the journal does not hold there (app/store/continuity.py `check_base`).

A writer process on the server's database starts it (`SnapshotterProcess`) and stops it;
it also ends when its parent does. With a standby beside the leader, each writer process
starts one: a session advisory lock lets one of them work, the other waits (its holder's
connection closes with its process, so the lock frees at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import pickle
import signal
import sys
from dataclasses import dataclass

import asyncpg

from app.state.floor_state import FloorConfig, FloorState
from app.state.timefmt import wall_clock_ms
from app.store.continuity import check_base
from app.store.errors import BrokenChain, JournalUnavailable
from app.store.journal import Journal, PostgresJournal
from app.store.packing import pack
from app.store.snapshots import dump_text, text_size
from app.writer.position import Position
from app.writer.snapshot_policy import SnapshotPolicy, tune_collector
from app.writer.writer_settings import WriterSettings
from jackpot.snapshot import SnapshotWithoutMeters

log = logging.getLogger("jackpot.snapshotter")

# The journal's tail is read this often when it has nothing new (at most).
POLL_S = 0.5
# The session advisory lock only one snapshotter of a database holds ("jpsnap").
LOCK_KEY = 0x6A70736E6170
# Linux prctl: the child gets this signal when its parent dies (a kill -9 of the writer).
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class Cadence:
    """When a snapshot is due (app/writer/writer_settings.py: the writer's own settings)."""

    snapshot_every: int
    snapshot_growth: int
    freeze_every: int

    @classmethod
    def of(cls, settings: WriterSettings) -> Cadence:
        return cls(settings.snapshot_every, settings.snapshot_growth, settings.freeze_every)

    def settings(self) -> WriterSettings:
        return WriterSettings(
            snapshot_every=self.snapshot_every,
            snapshot_growth=self.snapshot_growth,
            freeze_every=self.freeze_every,
            makes_snapshots=True,
        )


class Snapshotter:
    """Follows the journal with a state of its own and stores its snapshots."""

    def __init__(self, config: FloorConfig, journal: Journal, cadence: Cadence) -> None:
        self.journal = journal
        self.position = position = Position(FloorState(config))
        self.settings = settings = cadence.settings()
        self.policy = SnapshotPolicy(position, journal, settings)
        self.stored = 0  # snapshots stored by this one

    async def recover(self) -> None:
        """Start from the journal's latest snapshot (checked against the chain, as recovery
        checks it); `step` applies the entries after it, storing snapshots as they fall due."""
        position = self.position
        latest = await self.journal.latest_snapshot()
        position.start_from(b"" if latest is None else latest[1])
        try:
            position.restore()
        except SnapshotWithoutMeters:  # stored before the meters were kept: from the start
            position.start_from(b"")
            position.restore()
        await check_base(self.journal, position.seq, position.head)

    async def step(self) -> int:
        """Apply what the journal holds beyond our seq, storing a snapshot at each point one
        is due. Returns the entries applied."""
        position, policy, applied = self.position, self.policy, 0
        while True:
            due = False
            async for row in self.journal.read(position.seq):
                position.replay(row)  # checks the chain: BrokenChain if it does not hold
                position.since_base_size += len(row.entry)
                applied += 1
                if policy.snapshot_due():
                    due = True
                    break
            if not due:
                break
            await self.snapshot()
        if policy.freeze_due():
            policy.freeze()
        return applied

    async def snapshot(self) -> None:
        """Store the state as it is now: the state after entry `seq`, head `head`."""
        position = self.position
        seq, head = position.seq, position.head
        text = dump_text(position.service, seq, head)
        packed, size = pack(text), text_size(text)
        del text
        await self.journal.save_snapshot(seq, wall_clock_ms(), packed)
        position.rebase(packed, seq, head, size)
        self.stored += 1
        log.info("snapshot stored at seq %d (%d bytes of text)", seq, size)

    async def run(self, dsn: str, parent: int | None = None) -> None:
        """Hold the database's snapshotter lock, then follow the journal for ever."""
        lock = await _hold_lock(dsn, parent)
        try:
            while True:
                try:
                    await self.recover()
                    while True:
                        if parent is not None and os.getppid() != parent:
                            return  # the writer that started us is gone
                        if not await self.step():
                            await asyncio.sleep(POLL_S)
                except (BrokenChain, ValueError) as error:
                    log.error("snapshotter: the journal cannot be followed: %s", error)
                except (JournalUnavailable, OSError) as error:
                    log.warning("snapshotter: the database cannot be read: %s", error)
                await asyncio.sleep(POLL_S)
        finally:
            with contextlib.suppress(Exception):
                await lock.close()


async def _hold_lock(dsn: str, parent: int | None) -> asyncpg.Connection:
    """A connection holding the snapshotter's session advisory lock (waits for it)."""
    while True:
        if parent is not None and os.getppid() != parent:
            raise SystemExit(0)
        try:
            connection: asyncpg.Connection = await asyncpg.connect(dsn)
            try:
                if await connection.fetchval("SELECT pg_try_advisory_lock($1)", LOCK_KEY):
                    return connection
            except BaseException:
                await connection.close()
                raise
            await connection.close()
        except (OSError, asyncpg.PostgresError) as error:
            log.warning("snapshotter: the database cannot be reached: %s", error)
        await asyncio.sleep(POLL_S * 4)


class SnapshotterProcess:
    """The snapshotter as a child of a writer process (`python -m app.writer.snapshotter`):
    its floor and cadence handed over its stdin (the floor's mystery key stays off the
    command line and the environment)."""

    def __init__(self, config: FloorConfig, cadence: Cadence) -> None:
        self.config, self.cadence = config, cadence
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, dsn: str) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "app.writer.snapshotter", stdin=asyncio.subprocess.PIPE
        )
        assert self.process.stdin is not None
        self.process.stdin.write(pickle.dumps((self.config, self.cadence, dsn, os.getpid())))
        await self.process.stdin.drain()
        self.process.stdin.close()

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _main(config: FloorConfig, cadence: Cadence, dsn: str, parent: int) -> None:
    journal = await PostgresJournal.connect(dsn)
    try:
        await Snapshotter(config, journal, cadence).run(dsn, parent)
    finally:
        await journal.close()


def main() -> None:
    # From our own parent's pipe: trusted as the parent's memory is.
    config, cadence, dsn, parent = pickle.loads(sys.stdin.buffer.read())  # noqa: S301
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    # Background work: the writer's requests and PostgreSQL's commits come first.
    os.nice(10)
    tune_collector()  # as the writer: its state is as large (`step` freezes it)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s snapshotter %(message)s")
    if os.getppid() != parent:
        return  # the parent died before the death signal was armed
    asyncio.run(_main(config, cadence, dsn, parent))


if __name__ == "__main__":
    main()
