"""Group commit: apply a batch of requests to the state, append all their rows in ONE
transaction, and only then answer them and show displays what is committed.

Applying and committing overlap: while one group is being committed, the requests that
arrive meanwhile are applied and gathered into the next group, committed as soon as the
first is (one commit in flight at a time, so the journal's order is the order of
application). A failed commit refuses its group and the one gathered behind it (applied on
top of it), and the state goes back to the last durable point (`Position.restore`).
Each request's entry, answer and status are its kind's (app/state/kinds.py; `entry_of`,
`answer_of`, `status_of` at the end).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

from app.state.entries import Entry
from app.state.floor_state import FloorState
from app.state.kinds import KINDS
from app.state.past_award import PastAward
from app.state.views import outcome_answer
from app.store.errors import ChainBroken, DuplicateEntry, JournalUnavailable
from app.store.journal import Journal, JournalRow
from app.writer.announcer import Announcer
from app.writer.group import AnswerOnCommit, Group, Submission
from app.writer.journal_answers import recorded_answer
from app.writer.ports import WriterMetrics
from app.writer.position import Position
from app.writer.recovery import Recovery
from app.writer.refusals import AnswerFailed, Conflict, Unavailable, Unrecorded
from app.writer.snapshot_policy import SnapshotPolicy
from app.writer.timer import Timer
from app.writer.writer_settings import WriterSettings
from jackpot.errors import JackpotError
from jackpot.floor import OutcomeResult
from tables.errors import TablesError

log = logging.getLogger("jackpot.writer")


class GroupCommitter:
    """Take -> apply -> append -> answer -> announce, one group commit in flight at a time."""

    def __init__(
        self,
        position: Position,
        journal: Journal,
        settings: WriterSettings,
        metrics: WriterMetrics[Any],
        *,
        announcer: Announcer,
        recovery: Recovery,
        snapshots: SnapshotPolicy,
        timer: Timer,
    ) -> None:
        self.position, self.journal, self.metrics = position, journal, metrics
        self.announcer, self.recovery, self.snapshots, self.timer = (
            announcer, recovery, snapshots, timer
        )  # fmt: skip
        self.max_batch, self.clock, self.rng = settings.max_batch, settings.clock, settings.rng
        self.stats = {"batches": 0, "rows": 0, "failed": 0}
        # The group applied while another is being committed, the one being committed, the
        # task committing them, and what `admit` waits for before it applies anything more:
        # a refused commit being sorted out (`_duplicate`), or a full gathered group.
        self.gathering: Group | None = None
        self.committing: Group | None = None
        self.task: asyncio.Task[None] | None = None
        self.paused: asyncio.Future[None] | None = None
        self.room: asyncio.Future[None] | None = None  # resolved when the gathered group is taken

    async def admit(self, batch: list[Submission]) -> None:
        """Apply a batch; its group is committed after the one in flight, if any."""
        while True:
            if self.paused is not None:
                await self.paused
            elif self.gathering and len(self.gathering.rows) + len(batch) > self.max_batch:
                # A group commits at most `max_batch` entries (and a finalize): this batch
                # waits until the gathered group is taken for its commit.
                self.room = self.room or asyncio.get_running_loop().create_future()
                await self.room
            else:
                break
        if self.recovery.unsure:
            await self.idle()
            try:
                await self.recovery.resync()
            except (JournalUnavailable, OSError) as error:
                self.refuse(error, batch)
                return
        group = self._apply(batch)
        if not (group.rows or group.done or group.refused):
            return  # the timer found nothing to finalise
        if self.gathering is None:
            self.gathering = group
        else:
            self.gathering.merge(group)
        if self.task is None:
            self.task = asyncio.create_task(self._commit_all(), name="jackpot-commit")
        last = self.gathering or self.committing  # the group of the last row applied
        self.snapshots.after_apply(lambda: None if last is None else last.outcome())

    async def idle(self) -> None:
        """Wait until every group applied so far is committed (or refused) and answered."""
        while self.task is not None:
            await asyncio.shield(self.task)

    def refuse(self, error: BaseException, subs: list[Submission]) -> None:
        """503 to every request not yet answered: nothing of theirs is recorded."""
        self.metrics.unavailable((sub.kind, sub.table) for sub in subs)
        for sub in subs:
            if not sub.future.done():
                sub.future.set_exception(
                    Unavailable("events cannot be recorded: the database is unavailable")
                )
        self.announcer.cannot_record()

    def _apply(self, batch: list[Submission]) -> Group:
        """Apply each request to the state (a refused one changes nothing), then the timed
        entries due."""
        now = self.clock()
        group = Group()
        position = self.position
        for sub in batch:
            try:
                outcome = self._one(position, sub, now, group)
            except Exception as error:  # answered with its own status by the route
                # A round in memory has all its recorded events' keys in `idem`: only a
                # refusal for a round not in memory may be a late retry (`submit`).
                sub.may_be_recorded = (sub.table, sub.round) not in position.service.floor.rounds
                if isinstance(error, (JackpotError, TablesError, Conflict)):
                    # A refusal's traceback says nothing, and it holds this frame, which
                    # holds the group, which holds the refusal: garbage only the cyclic
                    # collector frees, and that a freeze would keep for ever.
                    error.__traceback__ = None
                group.refused.append((sub, error))
                continue
            group.done.append((sub, outcome))
        self.timer.add_due(now, group)
        group.staged = self.metrics.take()
        return group

    def _one(self, position: Position, sub: Submission, now: int, group: Group) -> AnswerOnCommit:
        """Apply one request; returns how to answer it once its group is committed."""
        service = position.service
        key = sub.idem_key
        sha = sub.body_sha256() if key else None
        if key is not None and key in service.idem:
            if service.idem[key] != sha:
                raise sub.conflict()
            self.metrics.retry(sub.kind, sub.table)
            return self._replay_answer(sub, key)
        entry = entry_of(service, sub, now, self.rng)
        rows = group.rows
        # Nothing half-done: whatever fails once the state may have changed, before the
        # entry's row exists, takes the state back (`_unapply`); a refusal by the core
        # (JackpotError, TablesError) changes nothing.
        try:
            result = service.apply(entry)
        except (JackpotError, TablesError):
            raise
        except Exception as error:
            raise self._unapply(sub, rows, error) from error
        try:
            answer = answer_of(service, entry, result)
            link = getattr(result, "link", None) or (
                service.floor.rounds[(sub.table, sub.round)].link
                if sub.table and sub.round
                else None
            )
            row = position.row(entry, key, sha, answer)
            self.metrics.applied(sub.kind, sub.table, result)
        except Exception as error:
            raise self._unapply(sub, rows, error) from error
        position.append(rows, row)
        if key is not None and sha is not None:
            service.idem[key] = sha
            position.remember(key, row.answer or "{}")
        if isinstance(result, OutcomeResult):
            group.claimed.extend(result.awards)
        if isinstance(link, str):
            group.links.add(link)
        group.links.update(getattr(result, "links", ()))  # a transfer changes two links
        status = status_of(sub)
        # The state as it is when answered: `_unapply` may have replaced it meanwhile.
        # The text journaled (and remembered) is the answer's one encoding: the HTTP
        # answer sends it as it is; an outcome's awards are those of now.
        text = row.answer or "{}"
        return lambda: (
            status,
            text if sub.kind != "outcome" else outcome_now(position.service, sub),
        )

    def _replay_answer(self, sub: Submission, key: str) -> AnswerOnCommit:
        """A retry with the same body gets the first answer (an outcome: with the awards
        as they stand now, final amounts included)."""
        position = self.position
        if sub.kind == "outcome":
            return lambda: (200, outcome_now(position.service, sub))
        remembered = position.answers.get(key)
        # Not remembered (a restart since): the route reads it from the journal.
        return lambda: (200, remembered if remembered is not None else {})

    def leaving(self) -> list[PastAward]:
        """The awards that left memory with rows not yet committed: listed meanwhile."""
        groups = [g for g in (self.committing, self.gathering) if g is not None]
        return [a for g in groups for r in g.rows for a in r.awards]

    def _take(self) -> Group | None:
        """The gathered group, for its commit or its refusal; the loop may gather anew."""
        group, self.gathering = self.gathering, None
        if self.room is not None:
            self.room.set_result(None)
            self.room = None
        return group

    async def _commit_all(self) -> None:
        """Commit the gathered groups one at a time, in the order they were applied."""
        try:
            while (group := self._take()) is not None:
                self.committing = group
                try:
                    await self._commit(group)
                except Exception:
                    # As in the writer's loop: the requests of this group and of the one
                    # gathered behind it get a 503, and the state is back at the journal's.
                    log.exception("writer: unexpected error; state restored to the journal")
                    self._drop(RuntimeError("internal error"), group)
        finally:
            self.committing = self.task = None

    async def _commit(self, group: Group) -> None:
        """Append a group's rows, answer its requests, announce it (or refuse it, rolled back)."""
        # Taken just now, before any await: nothing is applied after this group yet, so the
        # state is the one its entries leave, which its commit makes durable: what displays
        # are shown of it once committed (docs/design.md, Broadcast).
        assert self.gathering is None
        shown = self.announcer.shown(group.links, group.claimed, group.finalized)
        if group.refused:
            self._answer_refused(group.refused)
        if not group.rows:
            self.metrics.settle(group.staged)
            self._answer_group(group)
            return
        if not await self._append_group(group):
            return  # refused, or answered from the journal (`_duplicate`)
        self._answer_group(group)
        self.announcer.show(shown, group.finalized)

    async def _append_group(self, group: Group) -> bool:
        """Append the group's rows in one transaction; True once they are durable."""
        started = time.perf_counter()
        try:
            await self.journal.append(group.rows)
        except DuplicateEntry as error:
            await self._duplicate(error, group)
            return False
        except ChainBroken as error:
            await self._diverged(error, group)
            return False
        except (JournalUnavailable, OSError) as error:
            self._drop(error, group)
            return False
        self.position.service.uncommitted.difference_update(r.id for r in group.finalized)
        self.metrics.commit(len(group.rows), time.perf_counter() - started, group.staged)
        self.stats["batches"] += 1
        self.stats["rows"] += len(group.rows)
        self.position.keep(group.rows)
        self.announcer.recorded_again()
        return True

    def _answer_group(self, group: Group) -> None:
        """The group is committed: answer each request. One answer that fails to build
        fails alone; the group stays committed (its entries are in the journal)."""
        for sub, answer in group.done:
            if sub.future.done():
                continue
            try:
                result = answer()
            except Exception as error:
                log.exception(
                    "writer: the answer to %s of %s/%s failed", sub.kind, sub.table, sub.round
                )
                sub.future.set_exception(AnswerFailed(repr(error)))
                continue
            sub.future.set_result(result)
        group.resolve(True)

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

    def _answer_recorded(self, sub: Submission, row: JournalRow) -> None:
        """The journal has this event (a late retry): its first answer, or a 409 if the
        body is another."""
        try:
            sub.future.set_result(recorded_answer(sub, row, self.metrics))
        except Conflict as error:
            sub.future.set_exception(error)

    def _unwind(self, group: Group) -> list[Submission]:
        """The group is not committed, nor the one gathered behind it (applied on top of
        it): both are dropped (a snapshot with their rows is not kept); their requests."""
        behind = self._take()
        subs = group.subs()
        group.resolve(False)
        if behind is not None:
            subs += behind.subs()
            behind.resolve(False)
        return subs

    def _drop(self, error: BaseException, group: Group) -> None:
        """The group may not be recorded: roll back, refusing its requests and those of
        the group gathered behind it."""
        self._rollback(error, self._unwind(group))

    def _rollback(self, error: BaseException, subs: list[Submission]) -> None:
        """Back to the last durable state, 503 to every request not yet answered.

        A failed COMMIT can still have landed (the connection broke after it): before the
        next group, `Recovery.resync` reads the journal's head and replays what it holds
        beyond ours. Those requests got a 503 for an event that was recorded; their retries
        are answered from the idempotency key, so nothing is counted twice.
        """
        log.error("journal append failed, %d requests refused: %s", len(subs), error)
        self.stats["failed"] += 1
        self.recovery.restore_unsure()
        self.refuse(error, subs)

    async def _duplicate(self, error: DuplicateEntry, group: Group) -> None:
        """The journal's unique key refused the group: one of its events was already
        recorded, for a round no longer kept in memory (a late retry). Nothing of the
        group was written. Answer those from the journal, and apply the others again,
        with those of the group gathered behind it; nothing else is applied meanwhile."""
        # Not those answered already (its refusals, before the append).
        subs = [sub for sub in self._unwind(group) if not sub.future.done()]
        self.position.restore()
        outer = self.paused is None
        if outer:
            self.paused = asyncio.get_running_loop().create_future()
        try:
            fresh: list[Submission] = []
            try:
                for sub in subs:
                    row = await self.journal.lookup(sub.idem_key) if sub.idem_key else None
                    if row is None:
                        fresh.append(sub)
                    else:
                        self._answer_recorded(sub, row)
            except (JournalUnavailable, OSError) as lost:
                self._rollback(lost, [sub for sub in subs if not sub.future.done()])
                return
            if len(fresh) == len(subs):  # not an idempotency key: the journal is ahead of us
                self._rollback(error, subs)
                return
            await self._commit(self._apply(fresh))
        finally:
            if outer:
                assert self.paused is not None
                self.paused.set_result(None)
                self.paused = None

    async def _diverged(self, error: ChainBroken, group: Group) -> None:
        """The database refused the group: it does not follow the database's head, which
        lost entries this writer committed (a rollback under it) or holds another history.
        The database is the record: the group and the one behind it get 503, the state is
        rebuilt from the database, and no remembered answer outlives it, so nothing the
        database no longer holds is answered 200 (docs/design.md, The lease and its fence)."""
        seq, head = self.position.durable_head()
        log.error(
            "journal continuity broken: this writer's head is seq %d (hash %s), the "
            "database's is seq %d (hash %s): the database lost or changed committed entries "
            "(a rollback?); refusing the group and rebuilding from the database",
            seq, head, error.found_seq, error.found_hash,
        )  # fmt: skip
        self.stats["chain_broken"] = self.stats.get("chain_broken", 0) + 1
        self._drop(error, group)
        self.position.answers.clear()
        outer = self.paused is None
        if outer:  # nothing is applied on the state being rebuilt
            self.paused = asyncio.get_running_loop().create_future()
        try:
            replayed = await self.recovery.recover()
            log.error("rebuilt from the database after the broken chain: %d entries", replayed)
        except Exception as failed:
            # From nothing: the next group's resync replays the whole journal first.
            log.error(
                "rebuild after the broken chain failed (%s): replaying before the next", failed
            )
            self.position.start_from(b"")
            self.position.restore()
            self.recovery.unsure = True
        finally:
            if outer:
                assert self.paused is not None
                self.paused.set_result(None)
                self.paused = None

    def _unapply(self, sub: Submission, rows: list[JournalRow], error: Exception) -> Unrecorded:
        """Take back an entry applied without its row: the last durable state, plus the
        rows applied since (the group being committed, the one gathered behind it, this
        group's so far). Nothing else changed: seq, idempotency keys and answers are set
        only once the row exists."""
        log.error("writer: %s of %s/%s not applied: %r", sub.kind, sub.table, sub.round, error)
        position = self.position
        durable, last = position.durable_head()[0], position.seq
        applied: dict[int, JournalRow] = {}
        # While a refused commit is sorted out (`_duplicate`) the group being committed is
        # not applied: this group's rows, numbered from the durable point, replace its.
        for group in (self.committing, self.gathering):
            if group is not None:
                applied.update((row.seq, row) for row in group.rows)
        applied.update((row.seq, row) for row in rows)
        uncommitted = position.service.uncommitted  # finalised by rows that are replayed
        position.restore()
        for seq in range(durable + 1, last + 1):
            position.replay(applied[seq])
        position.service.uncommitted = uncommitted
        return Unrecorded(f"{sub.kind} could not be recorded: an internal error; retry it")


# -- a request's entry and answer, as its kind makes them (app/state/kinds.py) ----------


def entry_of(service: FloorState, sub: Submission, now: int, rng: random.Random) -> Entry:
    """The entry a request makes, with the server time (and the seeds it draws, for bets)."""
    prepare = KINDS[sub.kind].prepare
    if prepare is None:  # finalize, expire: the writer's timer makes them, no request
        raise ValueError(f"{sub.kind} is not a request")
    return prepare(service, sub, now, rng)


def answer_of(service: FloorState, entry: Entry, result: object) -> dict[str, Any]:
    """The answer recorded with the entry: the state as the entry leaves it."""
    answer = KINDS[entry.kind].answer
    assert answer is not None  # every kind a request makes answers it
    return answer(service, entry, result)


def outcome_now(service: FloorState, sub: Submission) -> dict[str, Any]:
    """An outcome's answer with its awards as they stand now (final amounts included)."""
    return outcome_answer(service, sub.table or "", sub.round or "")


def status_of(sub: Submission) -> int:
    return KINDS[sub.kind].status
