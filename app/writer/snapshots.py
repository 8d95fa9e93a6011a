"""Snapshots of the state, taken aside while the writer goes on; each becomes the new base."""

from __future__ import annotations

import asyncio
import gc
import logging

from app.store.snapshots import dump_packed_aside
from app.writer.recovery import Recovery

log = logging.getLogger("jackpot.writer")

# The generations `_freeze` collects first: 0 and 1. Garbage still alive at a young
# collection waits in generation 1, and a freeze would keep it for ever
# (tests/integration/app/writer/test_snapshot_cadence.py).
FREEZE_COLLECTS = 1


class Snapshots(Recovery):
    """Takes a snapshot aside and rebases on it once its rows are committed."""

    __slots__ = ()

    def _snapshot(self) -> None:
        """Snapshot the state as it is now, with every row up to `seq` applied: a forked
        process serialises it while the writer goes on; once those rows are committed, it
        becomes the base to rebuild from and is stored (if they are not, it is dropped)."""
        seq, head, now = self.seq, self.head, self.clock()
        last = self.gathering or self.committing  # the group of the last row applied
        committed = None if last is None else last.outcome()
        # Also spares the forked child's pages from the collector.
        self._freeze()
        dumped = dump_packed_aside(self.service, seq, head)

        async def store() -> None:
            try:
                packed, size = await dumped
                if committed is not None and not await committed:
                    log.info("snapshot at %d dropped: its last rows were not committed", seq)
                    return
                self._rebase(packed, seq, head, size)
                await self.journal.save_snapshot(seq, now, self.base)
            except Exception as error:  # a missed snapshot only slows the next start
                log.warning("snapshot at %d not saved: %s", seq, error)
            finally:
                self.snapshot_task = None

        self.snapshot_task = asyncio.create_task(store())

    def _freeze(self) -> None:
        """Take the state as it is now out of the cyclic collector (`gc.freeze`).

        The state is long-lived and makes no garbage cycles (a cycle collection under load
        frees nothing): out of the collector's generations, it is not walked by every full
        collection as it grows (pauses of half a second on a large floor). Pruned rounds are
        still freed, by reference counting. The generations are collected first: a refused
        request leaves cyclic garbage (exception, traceback, frames, the request), which a
        freeze would keep forever (measured: 2,105 uvicorn request cycles kept after 20 s of
        refused requests with a snapshot every 2,000 entries; 182 with a collection of
        generation 0, the ones still in flight).
        """
        gc.collect(FREEZE_COLLECTS)
        gc.freeze()
        self.frozen_at = self.seq

    def _rebase(self, packed: bytes, seq: int, head: str, size: int) -> None:
        """The snapshot at `seq`, of `size` bytes of text, is the new base: keep only the
        rows committed after it."""
        self.base, self.base_point, self.base_size = packed, (seq, head), size
        self.since_base = [row for row in self.since_base if row.seq > seq]
        self.since_base_size = sum(len(row.entry) for row in self.since_base)
