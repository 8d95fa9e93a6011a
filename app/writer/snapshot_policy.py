"""When to snapshot the state and freeze it out of the cyclic collector, and the snapshot
itself: taken aside while the writer goes on, it becomes the new base once committed."""

from __future__ import annotations

import asyncio
import gc
import logging

from app.store.journal import Journal
from app.store.snapshots import dump_packed_aside
from app.writer.position import Position
from app.writer.writer_settings import WriterSettings

log = logging.getLogger("jackpot.writer")

# The generations `freeze` collects first: 0 and 1. Garbage still alive at a young
# collection waits in generation 1, and a freeze would keep it for ever
# (tests/integration/app/writer/test_snapshot_cadence.py).
FREEZE_COLLECTS = 1


class SnapshotPolicy:
    """Takes a snapshot aside when one is due and rebases on it once its rows are committed."""

    def __init__(self, position: Position, journal: Journal, settings: WriterSettings) -> None:
        self.position, self.journal, self.settings = position, journal, settings
        self.task: asyncio.Task[None] | None = None  # the snapshot being taken and stored
        self.frozen_at = 0  # the seq of the last `freeze`

    def snapshot_due(self) -> bool:
        """Whether to take a snapshot now. One bounds start-up's replay and costs as much
        as the state is large: after `snapshot_every` entries, it waits until the journal
        has grown by the base's size, so that a large state is snapshotted in proportion
        to the work appended (amortised, as log compaction does), a small one every
        `snapshot_every` entries."""
        position, settings = self.position, self.settings
        return (
            self.task is None
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
