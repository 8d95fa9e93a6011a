"""When to snapshot the state and freeze it out of the cyclic collector, and the snapshot
itself: taken aside while the writer goes on, it becomes the new base once committed.

A writer on the server's database takes none (`makes_snapshots` off): the snapshotter
process makes them (app/writer/snapshotter.py) and the writer rebases on the stored ones
(`rebase_on_stored`), as a standby does (docs/design.md "Recovery and snapshots")."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable

from app.store.journal import Journal
from app.store.snapshot_point import snapshot_point
from app.store.snapshots import dump_packed_aside
from app.writer.position import Position
from app.writer.writer_settings import WriterSettings

log = logging.getLogger("jackpot.writer")

# The generations `freeze` collects first: 0 and 1. Garbage still alive at a young
# collection waits in generation 1, and a freeze would keep it for ever
# (tests/integration/app/writer/test_snapshot_cadence.py).
FREEZE_COLLECTS = 1
# The cyclic collector's thresholds in a process that holds the state (a writer, the
# snapshotter): rare, larger young collections, so that it does not walk the long-lived
# state again and again as it grows (docs/performance.md "The cyclic collector").
GC_THRESHOLDS = (50_000, 50, 1_000)
# A leader asks for a newer stored snapshot at most this often, once its rows to rebuild
# from are more than `snapshot_every` (the seq alone: the bytes only when it is newer).
REBASE_ASK_S = 1.0


def tune_collector() -> None:
    gc.set_threshold(*GC_THRESHOLDS)


class SnapshotPolicy:
    """Takes a snapshot aside when one is due and rebases on it once its rows are committed."""

    def __init__(self, position: Position, journal: Journal, settings: WriterSettings) -> None:
        self.position, self.journal, self.settings = position, journal, settings
        self.task: asyncio.Task[None] | None = None  # the snapshot being taken and stored
        self.frozen_at = 0  # the seq of the last `freeze`
        self.rebasing: asyncio.Task[None] | None = None  # a stored snapshot being fetched
        self.asked_at = -REBASE_ASK_S  # monotonic, when a leader last asked for one

    def after_apply(self, committed: Callable[[], asyncio.Future[bool] | None]) -> None:
        """After a batch is applied: a snapshot (`committed()`: see `take`), a look for a
        newer stored one, or a freeze, whichever is due first."""
        if self.snapshot_due():
            self.take(committed())
        elif self.rebase_due():
            self.start_rebase()
        elif self.freeze_due():
            self.freeze()

    def snapshot_due(self) -> bool:
        """Whether to take a snapshot now. One bounds start-up's replay and costs as much
        as the state is large: after `snapshot_every` entries, it waits until the journal
        has grown by the base's size, so that a large state is snapshotted in proportion
        to the work appended (amortised, as log compaction does), a small one every
        `snapshot_every` entries."""
        position, settings = self.position, self.settings
        return (
            settings.makes_snapshots
            and self.task is None
            and position.seq - position.base_point[0] >= settings.snapshot_every
            and position.since_base_size >= settings.snapshot_growth * position.base_size
        )

    def freeze_due(self) -> bool:
        """Whether `freeze_every` entries were applied since the last freeze."""
        return self.position.seq - self.frozen_at >= self.settings.freeze_every

    def take(self, committed: asyncio.Future[bool] | None) -> None:
        """Snapshot the state as it is now, with every row up to `seq` applied: a forked
        process serialises it while the writer goes on; once those rows are committed
        (`committed`: of the group of the last row applied, None if it is), it becomes the
        base to rebuild from and is stored (if they are not, it is dropped)."""
        position = self.position
        seq, head, now = position.seq, position.head, self.settings.clock()
        # Also spares the forked child's pages from the collector.
        self.freeze()
        dumped = dump_packed_aside(position.service, seq, head)

        async def store() -> None:
            try:
                packed, size = await dumped
                if committed is not None and not await committed:
                    log.info("snapshot at %d dropped: its last rows were not committed", seq)
                    return
                position.rebase(packed, seq, head, size)
                await self.journal.save_snapshot(seq, now, position.base)
            except Exception as error:  # a missed snapshot only slows the next start
                log.warning("snapshot at %d not saved: %s", seq, error)
            finally:
                self.task = None

        self.task = asyncio.create_task(store())

    def rebase_due(self) -> bool:
        """Whether a leader that takes no snapshot should look for a newer stored one: its
        rows to rebuild from are more than `snapshot_every`, and it has not asked lately."""
        if self.settings.makes_snapshots or self.rebasing is not None:
            return False
        if len(self.position.since_base) <= self.settings.snapshot_every:
            return False
        return time.monotonic() - self.asked_at >= REBASE_ASK_S

    def start_rebase(self) -> None:
        """`rebase_on_stored` beside the writer's loop (which goes on meanwhile)."""
        self.asked_at = time.monotonic()

        async def rebase() -> None:
            try:
                await self.rebase_on_stored()
            except Exception as error:  # the rows stay the base's: only memory grows
                log.warning("stored snapshot not taken as the base: %s", error)
            finally:
                self.rebasing = None

        self.rebasing = asyncio.create_task(rebase(), name="jackpot-rebase")

    async def rebase_on_stored(self) -> bool:
        """Keep the rows to rebuild from bounded: the latest stored snapshot at a committed
        entry after our base becomes the base. Its bytes are fetched only when it is newer
        (the seq is asked first), and checked aside, unpacked a megabyte at a time: it must
        name the seq it is stored at and the head our chain has there, else it is refused
        (ValueError). Returns whether we rebased."""
        position = self.position
        seq = await self.journal.latest_snapshot_seq()
        if seq is None or not position.base_point[0] < seq <= position.durable_head()[0]:
            return False
        latest = await self.journal.latest_snapshot()
        if latest is None:
            return False
        seq, packed = latest
        point = await asyncio.to_thread(snapshot_point, packed)
        # Read again after the awaits: a failed commit or a rebuild may have moved the base.
        if not position.base_point[0] < seq <= position.durable_head()[0]:
            return False
        head = next((row.hash for row in position.since_base if row.seq == seq), None)
        if (point.seq, point.head) != (seq, head):
            raise ValueError(
                f"the snapshot stored at seq {seq} names seq {point.seq} and head {point.head},"
                f" the journal's entry {seq} has head {head}: refused"
            )
        position.rebase(packed, seq, point.head, point.text_size)
        return True

    def freeze(self) -> None:
        """Take the state as it is now out of the cyclic collector (`gc.freeze`).

        The state is long-lived and makes no garbage cycles (a cycle collection under load
        frees nothing): out of the collector's generations, it is not walked by every full
        collection as it grows. Pruned rounds are still freed, by reference counting. The
        generations are collected first: a refused request leaves cyclic garbage
        (exception, traceback, frames, the request), which a freeze would keep for ever
        (docs/performance.md, "The cyclic collector").
        """
        gc.collect(FREEZE_COLLECTS)
        gc.freeze()
        self.frozen_at = self.position.seq
