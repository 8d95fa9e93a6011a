"""Back to the last durable point: recovery at start, rollback when a commit fails, resync."""

from __future__ import annotations

import gc
import logging
from typing import Any

from app.state.entries import entry_from_dict
from app.store.continuity import check_base, check_follows
from app.store.journal import JournalRow
from app.store.packing import unpack_bytes
from app.store.snapshots import load_service, text_size
from app.writer.announce import Announcer
from app.writer.chain import GENESIS, body_sha, loads
from app.writer.errors import Conflict, Unavailable, Unrecorded
from app.writer.group import Group, Reply, Submission
from jackpot.errors import JackpotError
from jackpot.floor import FinalizeResult, OutcomeResult
from tables.errors import TablesError

log = logging.getLogger("jackpot.writer")


class Recovery(Announcer):
    """Rebuilds the state from the last durable point and answers from the journal."""

    __slots__ = ()

    async def recover(self) -> int:
        """State = latest snapshot + every journal entry after it. Returns entries replayed."""
        snapshot = await self.journal.latest_snapshot()
        # The snapshot is also the base to rebuild from if a commit fails: no second
        # dump of the whole state at start.
        self.base, self.since_base = (b"" if snapshot is None else snapshot[1]), []
        self.since_base_size = 0
        # Recovery builds many long-lived objects and no garbage cycles: the cyclic
        # collector would walk the growing heap again and again for nothing.
        gc.disable()
        try:
            self._restore()
            await check_base(self.journal, self.seq, self.head)
            replayed = 0
            async for row in self.journal.read(self.seq):
                self._replay(row)
                self._keep((row,))
                replayed += 1
        finally:
            gc.enable()
        return replayed

    def _restore(self) -> None:
        text = unpack_bytes(self.base, self.base_point[0]) if self.base else ""
        self.base_size = text_size(text)  # the next snapshot waits for as much (`snapshot_due`)
        state: dict[str, Any] = (
            loads(text, f"snapshot {self.base_point[0]}") if text else {"seq": 0, "head": GENESIS}
        )
        self.service = load_service(self.service.config, state)
        self.seq, self.head = state["seq"], state["head"]
        self.base_point = (self.seq, self.head)
        for row in self.since_base:
            self._replay(row)

    def _replay(self, row: JournalRow) -> object:
        check_follows(self.seq, self.head, row)
        where = f"journal entry {row.seq}"
        result = self.service.apply(entry_from_dict(loads(row.entry, where), where))
        if row.idem_key is not None and row.body_sha256 is not None:
            self.service.idem[row.idem_key] = row.body_sha256
        self.seq, self.head = row.seq, row.hash
        return result

    async def _resync(self) -> None:
        last = await self.journal.last()
        if last is not None and last.seq > self.seq:
            # Rows of a commit that landed though it failed: shown now, as their commit
            # would have shown them (DESIGN.md, Broadcast: a win is shown final once).
            landed = Group()
            async for row in self.journal.read(self.seq):
                result = self._replay(row)
                if isinstance(result, OutcomeResult):
                    landed.claimed.extend(result.awards)
                elif isinstance(result, FinalizeResult):
                    landed.finalized.extend(result.finalized)
                self._keep((row,))
            self._announce(set(self.service.floor.links), landed.claimed, landed.finalized)
        self.resync = False

    def _rollback(self, error: BaseException, subs: list[Submission]) -> None:
        """Back to the last durable state, 503 to every request not yet answered.

        A failed COMMIT can still have landed (the connection broke after it): before the
        next group, `_resync` reads the journal's head and replays what it holds beyond
        ours. Those requests got a 503 for an event that was recorded; their retries are
        answered from the idempotency key, so nothing is counted twice.
        """
        log.error("journal append failed, %d requests refused: %s", len(subs), error)
        self.stats["failed"] += 1
        self._restore()
        self.resync = True
        self._refuse(error, subs)

    def _refuse(self, error: BaseException, subs: list[Submission]) -> None:
        self.metrics.unavailable((sub.kind, sub.table) for sub in subs)
        for sub in subs:
            if not sub.future.done():
                sub.future.set_exception(
                    Unavailable("events cannot be recorded: the database is unavailable")
                )
        self.cannot_record()

    def _unapply(self, sub: Submission, rows: list[JournalRow], error: Exception) -> Unrecorded:
        """Take back an entry applied without its row: the last durable state, plus the
        rows applied since (the group being committed, the one gathered behind it, this
        group's so far). Nothing else changed: seq, idempotency keys and answers are set
        only once the row exists."""
        log.error("writer: %s of %s/%s not applied: %r", sub.kind, sub.table, sub.round, error)
        durable, last = self.durable_head()[0], self.seq
        applied: dict[int, JournalRow] = {}
        # While a refused commit is sorted out (`_duplicate`) the group being committed is
        # not applied: this group's rows, numbered from the durable point, replace its.
        for group in (self.committing, self.gathering):
            if group is not None:
                applied.update((row.seq, row) for row in group.rows)
        applied.update((row.seq, row) for row in rows)
        uncommitted = self.service.uncommitted  # finalised by rows that are replayed
        self._restore()
        for seq in range(durable + 1, last + 1):
            self._replay(applied[seq])
        self.service.uncommitted = uncommitted
        return Unrecorded(f"{sub.kind} could not be recorded: an internal error; retry it")

    def _recorded(self, sub: Submission, row: JournalRow) -> tuple[int, Reply]:
        if row.body_sha256 != body_sha(sub.body):
            self.metrics.event(sub.kind, sub.table, "refused")
            raise sub.conflict()
        self.metrics.event(sub.kind, sub.table, "retry")
        return 200, row.answer or "{}"

    def _answer_recorded(self, sub: Submission, row: JournalRow) -> None:
        """The journal has this event (a late retry): its first answer, or a 409 if the
        body is another."""
        try:
            sub.future.set_result(self._recorded(sub, row))
        except Conflict as error:
            sub.future.set_exception(error)

    def _answer_refused(self, refused: list[tuple[Submission, Exception]]) -> None:
        """Refusals are answered in order, without waiting for anything: one that may be
        a late retry is looked up by its `submit`, not here in the commit loop."""
        for sub, error in refused:
            if sub.future.done():
                continue
            sub.may_be_recorded &= sub.idem_key is not None and isinstance(
                error, (JackpotError, TablesError)
            )
            if not sub.may_be_recorded:
                self.metrics.event(sub.kind, sub.table, "refused")
            sub.future.set_exception(error)
