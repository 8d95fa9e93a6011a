"""The single writer: owns all state, applies commands in order, commits them in groups.

HTTP handlers never touch state: they validate, `submit` a request and await its answer.
The writer takes every queued request at once (up to `max_batch`), applies each to the
state, appends all their journal rows in ONE transaction, and only then answers: one
fsync per group, and nothing is acknowledged before it is durable. If the commit fails,
the state is rebuilt from the last durable point (an in-memory snapshot plus the entries
committed since), every request of the group gets a 503, and nothing was acknowledged.

Applying and committing overlap: while one group is being committed, the requests that
arrive meanwhile are applied and gathered into the next group, committed as soon as the
first is (one commit in flight at a time, so the journal's order is the order of
application). Every answer waits for the commits of its own group and of all groups
before it, in order: a retry of an event still being committed waits for that commit. A
failed commit refuses its group and the one gathered behind it (applied on top of it).
What reads the state directly (GET) may see the gathered group a commit early, as it
could see a group during its commit before; displays are shown only what is committed
(`_shown`): each win `pending` once its claim is committed, `final` once the entry that
made it final is, `void` once the void that cancelled it is (if it was shown `pending`),
and the meters as the committed entries leave them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from app.state.entries import FinalizeEntry
from app.store.errors import ChainBroken, DuplicateEntry, JournalUnavailable
from app.store.journal import JournalRow
from app.writer.answers import answer_of, entry_of, outcome_now, status_of
from app.writer.chain import body_sha
from app.writer.diverged import refuse_and_rebuild
from app.writer.errors import AnswerFailed
from app.writer.group import Answer, Group, Submission
from app.writer.requests import Requests
from jackpot.errors import JackpotError
from jackpot.floor import FinalizeResult, OutcomeResult
from jackpot.records import AwardRecord
from tables.errors import TablesError

log = logging.getLogger("jackpot.writer")


class Writer(Requests):
    """The writer's loop: take a group, apply it, append its rows, answer, announce."""

    __slots__ = ()

    def start(self) -> None:
        self.queue = asyncio.Queue()
        self.task = asyncio.create_task(self._run(), name="jackpot-writer")

    async def stop(self) -> None:
        """Drain: every request already submitted is committed and answered, then stop."""
        self.stopping = True
        if self.task is not None:
            await self.queue.put(
                Submission("stop", None, None, {}, None, asyncio.get_running_loop().create_future())
            )
            await self.task
        if self.snapshot_task is not None:
            with contextlib.suppress(Exception):
                await self.snapshot_task

    async def _run(self) -> None:
        while True:
            batch = await self._next_batch()  # [] when it is time to finalise
            stop = any(s.kind == "stop" for s in batch)
            work = [s for s in batch if s.kind != "stop"]
            try:
                await self._admit(work)
            except Exception:
                # A bug must not kill the writer (every later request would hang): back
                # to the last durable state; this batch gets a 503, nothing was acked.
                log.exception("writer: unexpected error; state restored to the journal")
                await self._idle()
                self._restore()
                self.resync = True
                self._refuse(RuntimeError("internal error"), work)
            if stop:
                await self._idle()
                for s in batch:
                    if s.kind == "stop" and not s.future.done():
                        s.future.set_result((200, {}))
                return

    async def process(self, batch: list[Submission]) -> None:
        """Apply a batch and wait until it and every group before it are answered."""
        await self._admit(batch)
        await self._idle()

    async def _admit(self, batch: list[Submission]) -> None:
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
        if self.resync:
            await self._idle()
            try:
                await self._resync()
            except (JournalUnavailable, OSError) as error:
                self._refuse(error, batch)
                return
        group = self._apply(batch)
        if not (group.rows or group.done or group.refused):
            return  # the timer found nothing to finalise
        if self.gathering is None:
            self.gathering = group
        else:
            self.gathering.merge(group)
        if self.committer is None:
            self.committer = asyncio.create_task(self._commit_all(), name="jackpot-commit")
        if self.snapshot_due():
            self._snapshot()
        elif self.freeze_due():
            self._freeze()

    def _apply(self, batch: list[Submission]) -> Group:
        """Apply each request to the state (a refused one changes nothing)."""
        now = self.clock()
        group = Group()
        for sub in batch:
            try:
                outcome = self._one(sub, now, group.rows, group.claimed, group.links)
            except Exception as error:  # answered with its own status by the route
                # A round in memory has all its recorded events' keys in `idem`: only a
                # refusal for a round not in memory may be a late retry (`submit`).
                sub.may_be_recorded = (sub.table, sub.round) not in self.service.floor.rounds
                group.refused.append((sub, error))
                continue
            group.done.append((sub, outcome))
        if self._finalize_due(now):
            # Finalising is itself an entry, with the server time: replay never reads
            # the clock (DESIGN.md, the watermark).
            result = self.service.apply(entry := FinalizeEntry(now=now))
            assert isinstance(result, FinalizeResult)
            self.last_finalize = now
            self._append(group.rows, self._row(entry, None, None, None))
            group.finalized.extend(result.finalized)
            self.service.uncommitted.update(
                r.id for r in result.finalized if isinstance(r, AwardRecord)
            )
            group.links.update(r.link for r in result.finalized)
        self._expire(now, group)
        group.staged = self.metrics.take()
        return group

    def _take(self) -> Group | None:
        """The gathered group, for its commit or its refusal; the loop may gather anew."""
        group, self.gathering = self.gathering, None
        if self.room is not None:
            self.room.set_result(None)
            self.room = None
        return group

    async def _idle(self) -> None:
        """Wait until every group applied so far is committed (or refused) and answered."""
        while self.committer is not None:
            await asyncio.shield(self.committer)

    async def _commit_all(self) -> None:
        """Commit the gathered groups one at a time, in the order they were applied."""
        try:
            while (group := self._take()) is not None:
                self.committing = group
                try:
                    await self._commit(group)
                except Exception:
                    # As in `_run`: the requests of this group and of the one gathered
                    # behind it get a 503, and the state is back at the journal's.
                    log.exception("writer: unexpected error; state restored to the journal")
                    self._drop(RuntimeError("internal error"), group)
        finally:
            self.committing = self.committer = None

    async def _commit(self, group: Group) -> None:
        """Append a group's rows, answer its requests, announce it (or refuse it, rolled back)."""
        # Taken just now, before any await: nothing is applied after this group yet, so the
        # state is the one its entries leave, which its commit makes durable: what displays
        # are shown of it once committed (DESIGN.md, Broadcast).
        assert self.gathering is None
        shown = self._shown(group.links, group.claimed, group.finalized)
        if group.refused:
            self._answer_refused(group.refused)
        if not group.rows:
            self.metrics.settle(group.staged)
            self._answer_group(group)
            return
        if not await self._append_group(group):
            return  # refused, or answered from the journal (`_duplicate`)
        self._answer_group(group)
        self._show(shown, group.finalized)

    async def _append_group(self, group: Group) -> bool:
        """Append the group's rows in one transaction; True once they are durable."""
        started = time.perf_counter()
        try:
            await self.journal.append(group.rows)
        except DuplicateEntry as error:
            await self._duplicate(error, group)
            return False
        except ChainBroken as error:
            await refuse_and_rebuild(self, error, group)
            return False
        except (JournalUnavailable, OSError) as error:
            self._drop(error, group)
            return False
        self.service.uncommitted.difference_update(r.id for r in group.finalized)
        self.metrics.commit(len(group.rows), time.perf_counter() - started, group.staged)
        self.stats["batches"] += 1
        self.stats["rows"] += len(group.rows)
        self._keep(group.rows)
        self.recorded_again()
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

    def _one(
        self,
        sub: Submission,
        now: int,
        rows: list[JournalRow],
        claimed: list[AwardRecord],
        links: set[str],
    ) -> Answer:
        """Apply one request; returns how to answer it once its group is committed."""
        service = self.service
        key = sub.idem_key
        sha = body_sha(sub.body) if key else None
        if key is not None and key in service.idem:
            if service.idem[key] != sha:
                raise sub.conflict()
            self.metrics.retry(sub.kind, sub.table)
            return self._replay_answer(sub, key)
        entry = entry_of(service, sub, now, self.rng)
        # Nothing half-done (issue 16): whatever fails once the state may have changed,
        # before the entry's row exists, takes the state back (`_unapply`); a refusal by
        # the core (JackpotError, TablesError) changes nothing.
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
            row = self._row(entry, key, sha, answer)
            self.metrics.applied(sub.kind, sub.table, result)
        except Exception as error:
            raise self._unapply(sub, rows, error) from error
        self._append(rows, row)
        if key is not None and sha is not None:
            service.idem[key] = sha
            self._remember(key, row.answer or "{}")
        if isinstance(result, OutcomeResult):
            claimed.extend(result.awards)
        if isinstance(link, str):
            links.add(link)
        status = status_of(sub)
        # The state as it is when answered: `_unapply` may have replaced it meanwhile.
        # The text journaled (and remembered) is the answer's one encoding: the HTTP
        # answer sends it as it is (issue 21); an outcome's awards are those of now.
        text = row.answer or "{}"
        return lambda: (status, text if sub.kind != "outcome" else outcome_now(self.service, sub))

    def _replay_answer(self, sub: Submission, key: str) -> Answer:
        """A retry with the same body gets the first answer (an outcome: with the awards
        as they stand now, final amounts included)."""
        if sub.kind == "outcome":
            return lambda: (200, outcome_now(self.service, sub))
        remembered = self.answers.get(key)
        # Not remembered (a restart since): the route reads it from the journal.
        return lambda: (200, remembered if remembered is not None else {})

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

    async def _duplicate(self, error: DuplicateEntry, group: Group) -> None:
        """The journal's unique key refused the group: one of its events was already
        recorded, for a round no longer kept in memory (a late retry). Nothing of the
        group was written. Answer those from the journal, and apply the others again,
        with those of the group gathered behind it; nothing else is applied meanwhile."""
        # Not those answered already (its refusals, before the append).
        subs = [sub for sub in self._unwind(group) if not sub.future.done()]
        self._restore()
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
