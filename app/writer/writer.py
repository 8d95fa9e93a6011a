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
import gc
import hashlib
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.state.floor_state import Service
from app.state.timefmt import format_time
from app.state.views import award_row, bets_answer, meters, outcome_answer, void_answer
from app.store.errors import DuplicateEntry, JournalUnavailable
from app.store.journal import Journal, JournalRow, unpack_bytes
from app.store.snapshots import dump_packed_aside, load_service
from app.writer.errors import Conflict, Unavailable, Unrecorded
from app.writer.ports import Broadcast, Metrics, Staged, Uncounted
from jackpot.errors import JackpotError, StateConflictError, UnknownError
from jackpot.floor import FinalizeResult, OutcomeResult, VoidResult
from jackpot.records import FINAL, PENDING, VOID, AwardRecord, ResetRecord
from jackpot.snapshot import canonical_json, loads_exact
from tables.errors import TablesError

log = logging.getLogger("jackpot.writer")

GENESIS = "0" * 64
EXPIRE_BATCH = 1_000  # rounds named by one expire entry
# Journal lookups the HTTP handlers may run at once (the pool has 10 connections: the
# writer's commit and a snapshot's save always find one free).
LOOKUPS = 4


@dataclass(frozen=True, slots=True)
class Shown:
    """What displays are shown of a commit: its wins and each link's meter values."""

    wins: list[tuple[str, dict[str, object]]]  # (link, win message)
    meters: dict[str, dict[str, str]]  # link -> meter -> value


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class Submission:
    kind: str
    table: str | None
    round: str | None
    body: dict[str, Any]
    by: str | None
    future: asyncio.Future[tuple[int, dict[str, Any]]]
    # Refused, for a round not in memory: it may be a late retry of a recorded event,
    # which `submit` asks the journal about (the commit loop never waits for that).
    may_be_recorded: bool = False

    @property
    def idem_key(self) -> str | None:
        if self.table is None or self.round is None:
            return None
        return f"{self.table}|{self.round}|{self.kind}"


Answer = Callable[[], tuple[int, dict[str, Any]]]


@dataclass(slots=True)
class Group:
    """Requests applied to the state, answered once their journal rows are committed."""

    rows: list[JournalRow] = field(default_factory=list)
    done: list[tuple[Submission, Answer]] = field(default_factory=list)
    refused: list[tuple[Submission, Exception]] = field(default_factory=list)
    claimed: list[AwardRecord] = field(default_factory=list)
    finalized: list[AwardRecord | ResetRecord] = field(default_factory=list)
    links: set[str] = field(default_factory=set)
    staged: Staged | None = None  # the metrics' counts, taken once the group is applied
    # Resolved True once committed, False if not (a snapshot of the state with these rows
    # applied is kept only if they are committed); made when a snapshot asks for it.
    committed: asyncio.Future[bool] | None = None

    def subs(self) -> list[Submission]:
        return [sub for sub, _ in self.done] + [sub for sub, _ in self.refused]

    def merge(self, later: Group) -> None:
        self.rows += later.rows
        self.done += later.done
        self.refused += later.refused
        self.claimed += later.claimed
        self.finalized += later.finalized
        self.links |= later.links
        if self.staged is None:
            self.staged = later.staged
        elif later.staged is not None:
            self.staged.merge(later.staged)
        assert later.committed is None  # asked for only of the groups waiting to commit

    def outcome(self) -> asyncio.Future[bool]:
        if self.committed is None:
            self.committed = asyncio.get_running_loop().create_future()
        return self.committed

    def resolve(self, committed: bool) -> None:
        if self.committed is not None and not self.committed.done():
            self.committed.set_result(committed)


@dataclass(slots=True)
class Writer:
    service: Service
    journal: Journal
    broadcast: Broadcast | None = None
    max_batch: int = 512
    snapshot_every: int = 20_000
    clock: Callable[[], int] = wall_clock_ms
    rng: random.Random = field(default_factory=random.SystemRandom)
    # Advance the watermark at least this often while events are pending, so that
    # contributions are folded into the meters and the heap stays small.
    finalize_every_ms: int = 1_000
    # The outcome answer waits this long for its pending meter awards (API.md).
    outcome_wait_s: float = 10.0

    queue: asyncio.Queue[Submission] = field(init=False)
    seq: int = 0
    head: str = GENESIS
    # Recent first answers, as the journal's text: a dict per answer (with a dict per box)
    # would be a fifth of the writer's memory, walked by every collection of old objects.
    answers: OrderedDict[str, str] = field(default_factory=OrderedDict)
    degraded: bool = False
    waiters: dict[tuple[str, str], list[asyncio.Future[None]]] = field(default_factory=dict)
    last_finalize: int = 0
    # The last durable point, to rebuild from when a commit fails: a snapshot, packed as
    # stored (b"": the empty floor), its (seq, head), and the rows committed since.
    base: bytes = b""
    base_point: tuple[int, str] = (0, GENESIS)
    since_base: list[JournalRow] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    # The group applied while another is being committed, the one being committed, the
    # task committing them, and what the loop waits for before it applies anything more:
    # a refused commit being sorted out (`_duplicate`), or a full gathered group.
    gathering: Group | None = None
    committing: Group | None = None
    committer: asyncio.Task[None] | None = None
    paused: asyncio.Future[None] | None = None
    room: asyncio.Future[None] | None = None  # resolved when the gathered group is taken
    getter: asyncio.Future[Submission] | None = None
    snapshot_task: asyncio.Task[None] | None = None
    stopping: bool = False
    resync: bool = False  # a commit failed: check the journal's head before the next one
    stats: dict[str, int] = field(default_factory=lambda: {"batches": 0, "rows": 0, "failed": 0})
    metrics: Metrics[Any] = field(default_factory=Uncounted)
    lookups: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(LOOKUPS))
    # Awards displays were shown `pending` and no end of yet: a void of one is shown to
    # them (DESIGN.md, the watermark: "jackpot pending" ends); screens know no other.
    on_screens: set[str] = field(default_factory=set)

    def queue_depth(self) -> int:
        """Requests waiting for the writer (none before `start`)."""
        queue = getattr(self, "queue", None)  # set by `start`
        return 0 if queue is None else queue.qsize()

    def durable_head(self) -> tuple[int, str]:
        """The last committed entry's seq and hash (rows of a group being committed are
        not counted until the journal has them)."""
        if self.since_base:
            return self.since_base[-1].seq, self.since_base[-1].hash
        return self.base_point

    # -- life cycle -----------------------------------------------------------------

    async def recover(self) -> int:
        """State = latest snapshot + every journal entry after it. Returns entries replayed."""
        snapshot = await self.journal.latest_snapshot()
        # The snapshot is also the base to rebuild from if a commit fails: no second
        # dump of the whole state at start.
        self.base, self.since_base = (b"" if snapshot is None else snapshot[1]), []
        # Recovery builds many long-lived objects and no garbage cycles: the cyclic
        # collector would walk the growing heap again and again for nothing.
        gc.disable()
        try:
            self._restore()
            replayed = 0
            async for row in self.journal.read(self.seq):
                self._replay(row)
                self.since_base.append(row)
                replayed += 1
        finally:
            gc.enable()
        return replayed

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

    # -- requests -------------------------------------------------------------------

    async def submit(
        self,
        kind: str,
        table: str | None,
        round_id: str | None,
        body: dict[str, Any],
        by: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Hand a request to the writer; returns (HTTP status, answer) once it is durable."""
        if self.stopping:
            raise Unavailable("the server is shutting down")
        future: asyncio.Future[tuple[int, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        sub = Submission(kind, table, round_id, body, by, future)
        await self.queue.put(sub)
        try:
            status, answer = await future
        except (JackpotError, TablesError) as error:
            if not sub.may_be_recorded or sub.idem_key is None:
                raise
            # A late retry of an event recorded for a round no longer in memory (bets
            # closed long ago, say) is refused by the state, but the journal has its first
            # answer. Asked here, after the refusal: a table flooding events for unknown
            # rounds must not hold up the commits of the others (issue 17, item 6). With
            # the journal unreachable, that is a 503: it may well be recorded.
            try:
                row = await self.lookup(sub.idem_key)
                unknown = row is None and isinstance(error, UnknownError)
                left = await self._left_memory(sub) if unknown else None
            except JournalUnavailable:
                self.metrics.unavailable([(sub.kind, sub.table)])
                raise
            if row is None:
                self.metrics.event(sub.kind, sub.table, "refused")
                if left is not None:
                    raise left from None
                raise
            return self._recorded(sub, row)
        if not answer and sub.idem_key is not None:
            row = await self.lookup(sub.idem_key)
            if row is not None and row.answer is not None:
                answer = _loads(row.answer)
        return status, answer

    async def _left_memory(self, sub: Submission) -> StateConflictError | None:
        """An outcome or void of a round whose bets are recorded but which has left memory
        (retain_ms after it settled, was void or expired): a 409 that says so, not "no
        bets were recorded". DESIGN.md, voids: past that, an audited operator correction."""
        if sub.kind == "bets" or sub.table is None or sub.round is None:
            return None
        key = f"{sub.table}|{sub.round}|"
        if await self.lookup(key + "bets") is None:
            return None
        other = "void" if sub.kind == "outcome" else "outcome"
        row = await self.lookup(key + other)
        if row is None:
            state = "expired (open longer than expire_after with no outcome or void)"
        else:
            done = "was void" if other == "void" else "settled"
            state = f"{done} at {format_time(row.recorded_at_ms)}"
        what = f"round {sub.round!r} at table {sub.table!r} has left memory: it {state}"
        if sub.kind == "void":
            return StateConflictError(
                f"{what}, so it can no longer be voided by its table; a supervisor's audited "
                "correction of the meter (POST /v1/links/{link}/meters/{meter}/corrections) "
                "is the remedy"
            )
        return StateConflictError(f"{what}, so its outcome can no longer be recorded")

    async def lookup(self, idem_key: str) -> JournalRow | None:
        """The journal's row of an event, for the HTTP handlers. At most `LOOKUPS` at a
        time: a flood of them must not take every pooled connection, or the writer's
        commits would queue behind them for one."""
        async with self.lookups:
            return await self.journal.lookup(idem_key)

    async def wait_final(self, table: str, round_id: str, timeout: float) -> None:
        """Wait until the round has no pending meter award, or the timeout."""
        from app.state.views import has_pending

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while has_pending(self.service, table, round_id):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            future: asyncio.Future[None] = loop.create_future()
            self.waiters.setdefault((table, round_id), []).append(future)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(future, remaining)

    # -- the loop -------------------------------------------------------------------

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

    async def _next_batch(self) -> list[Submission]:
        timeout = self._sleep_s()
        # One pending get() carried across timeouts: cancelling a get() that completes at
        # that very moment could drop a request.
        if self.getter is None:
            self.getter = asyncio.ensure_future(self.queue.get())
        done, _ = await asyncio.wait({self.getter}, timeout=timeout)
        if not done:
            return []  # time to finalise: the timer, not the next request
        first, self.getter = self.getter.result(), None
        if self.queue.qsize() < self.max_batch:
            # One turn of the loop first: requests already read from their sockets reach
            # the queue and join this group (measured: +12 % bets/s at 64 connections).
            await asyncio.sleep(0)
        batch = [first]
        while len(batch) < self.max_batch and not self.queue.empty():
            batch.append(self.queue.get_nowait())
        return batch

    def _sleep_s(self) -> float | None:
        now = self.clock()
        floor = self.service.floor
        due = floor.due_at()
        if any(link.timeline.heap for link in floor.links.values()):
            periodic = self.last_finalize + self.finalize_every_ms
            due = periodic if due is None else min(due, periodic)
        if floor.done:
            prune = floor.done[0][0] + floor.retain_ms + 1
            due = prune if due is None else min(due, prune)
        expiry = floor.expire_due()
        if expiry is not None:
            due = expiry if due is None else min(due, expiry)
        if due is None:
            return None
        return max(0.0, (due - now) / 1000)

    async def _process(self, batch: list[Submission]) -> None:
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
        if self.seq - self.base_point[0] >= self.snapshot_every and self.snapshot_task is None:
            self._snapshot()

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
            entry = {"kind": "finalize", "now": now}
            result = self.service.apply(entry)
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
        """Append a group's rows, then answer its requests (or refuse them, rolled back)."""
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
        started = time.perf_counter()
        try:
            await self.journal.append(group.rows)
        except DuplicateEntry as error:
            await self._duplicate(error, group)
            return
        except (JournalUnavailable, OSError) as error:
            self._drop(error, group)
            return
        self.service.uncommitted.difference_update(r.id for r in group.finalized)
        self.metrics.commit(len(group.rows), time.perf_counter() - started, group.staged)
        self.stats["batches"] += 1
        self.stats["rows"] += len(group.rows)
        self.since_base.extend(group.rows)
        self.recorded_again()
        self._answer_group(group)
        self._show(shown, group.finalized)

    def _answer_group(self, group: Group) -> None:
        for sub, answer in group.done:
            if not sub.future.done():
                sub.future.set_result(answer())
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
        body_sha = _sha(sub.body) if key else None
        idem = service.idem
        if key is not None and key in idem:
            if idem[key] != body_sha:
                raise _conflict(sub)
            self.metrics.retry(sub.kind, sub.table)
            return self._replay_answer(sub, key)
        if sub.kind == "bets":
            assert sub.table is not None and sub.round is not None
            entry = service.prepare_bets(sub.table, sub.round, sub.body, now, self.rng)
        elif sub.kind == "outcome":
            assert sub.table is not None and sub.round is not None
            entry = service.prepare_outcome(sub.table, sub.round, sub.body, now)
        elif sub.kind == "void":
            assert sub.table is not None and sub.round is not None
            entry = service.prepare_void(sub.table, sub.round, sub.body, now)
        else:  # operator changes: seed, reset, correct, and dual control's propose/approve/reject
            entry = {"kind": sub.kind, "now": now, "by": sub.by, **sub.body}
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
            answer = self._answer(sub, result)
            link = getattr(result, "link", None) or (
                service.floor.rounds[(sub.table, sub.round)].link
                if sub.table and sub.round
                else None
            )
            row = self._row(entry, key, body_sha, answer)
            self.metrics.applied(sub.kind, sub.table, result)
        except Exception as error:
            raise self._unapply(sub, rows, error) from error
        self._append(rows, row)
        if key is not None and body_sha is not None:
            idem[key] = body_sha
            self._remember(key, row.answer or "{}")
        if isinstance(result, OutcomeResult):
            claimed.extend(result.awards)
        if isinstance(link, str):
            links.add(link)
        status = 201 if sub.kind in ("bets", "outcome") else 200
        # The state as it is when answered: `_unapply` may have replaced it meanwhile.
        return lambda: (
            status,
            answer
            if sub.kind != "outcome"
            else outcome_answer(self.service, sub.table or "", sub.round or ""),
        )

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

    def _answer(self, sub: Submission, result: object) -> dict[str, Any]:
        service = self.service
        if sub.kind == "bets":
            return bets_answer(service, sub.table or "", sub.round or "")
        if sub.kind == "outcome":
            return outcome_answer(service, sub.table or "", sub.round or "")
        if sub.kind == "void":
            assert isinstance(result, VoidResult)
            return void_answer(service, sub.table or "", sub.round or "", list(result.reversed))
        from app.state.operator_views import operator_answer

        return operator_answer(service, sub.kind, result)

    def _replay_answer(self, sub: Submission, key: str) -> Answer:
        """A retry with the same body gets the first answer (an outcome: with the awards
        as they stand now, final amounts included)."""
        if sub.kind == "outcome":
            return lambda: (200, outcome_answer(self.service, sub.table or "", sub.round or ""))
        remembered = self.answers.get(key)
        # Not remembered (a restart since): the route reads it from the journal.
        return lambda: (200, _loads(remembered) if remembered is not None else {})

    def _remember(self, key: str, answer: str) -> None:
        self.answers[key] = answer
        while len(self.answers) > 100_000:
            self.answers.popitem(last=False)

    def _row(
        self,
        entry: dict[str, Any],
        key: str | None,
        body_sha: str | None,
        answer: dict[str, Any] | None,
    ) -> JournalRow:
        """The entry's row, next in the chain; the caller makes it the head."""
        # Hash chain (issue 9): each row's hash covers the previous hash and its entry.
        text = canonical_json(entry)
        return JournalRow(
            seq=self.seq + 1,
            recorded_at_ms=entry["now"],
            kind=entry["kind"],
            idem_key=key,
            body_sha256=body_sha,
            entry=text,
            answer=None if answer is None else canonical_json(answer),
            hash=hashlib.sha256((self.head + text).encode()).hexdigest(),
        )

    def _append(self, rows: list[JournalRow], row: JournalRow) -> None:
        """The row joins its group and becomes the chain's head."""
        rows.append(row)
        self.seq, self.head = row.seq, row.hash

    def _expire(self, now: int, group: Group) -> None:
        """Rounds open longer than expire_after leave the open set (jackpot/expiry.py): an
        entry naming them, with the server time, so replay never reads the clock. At most
        EXPIRE_BATCH an entry; the timer comes back at once for the rest."""
        rounds = self.service.floor.expirable(now, EXPIRE_BATCH)
        if rounds:
            entry = {"kind": "expire", "now": now, "rounds": [list(key) for key in rounds]}
            self.service.apply(entry)
            self._append(group.rows, self._row(entry, None, None, None))

    def _finalize_due(self, now: int) -> bool:
        floor = self.service.floor
        due = floor.due_at()
        if due is not None and now >= due:
            return True
        if floor.done and floor.done[0][0] < now - floor.retain_ms:
            return True  # settled rounds to prune
        pending = any(link.timeline.heap for link in floor.links.values())
        return pending and now - self.last_finalize >= self.finalize_every_ms

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
        next group, `_resync` reads the journal's head and replays what it holds beyond
        ours. Those requests got a 503 for an event that was recorded; their retries are
        answered from the idempotency key, so nothing is counted twice.
        """
        log.error("journal append failed, %d requests refused: %s", len(subs), error)
        self.stats["failed"] += 1
        self._restore()
        self.resync = True
        self._refuse(error, subs)

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
            sub.future.set_result(self._recorded(sub, row))
        except Conflict as error:
            sub.future.set_exception(error)

    def _recorded(self, sub: Submission, row: JournalRow) -> tuple[int, dict[str, Any]]:
        if row.body_sha256 != _sha(sub.body):
            self.metrics.event(sub.kind, sub.table, "refused")
            raise _conflict(sub)
        self.metrics.event(sub.kind, sub.table, "retry")
        return 200, _loads(row.answer or "{}")

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

    def _restore(self) -> None:
        state: dict[str, Any] = (
            _loads(unpack_bytes(self.base, self.base_point[0]), f"snapshot {self.base_point[0]}")
            if self.base
            else {"seq": 0, "head": GENESIS}
        )
        self.service = load_service(self.service.config, state)
        self.seq, self.head = state["seq"], state["head"]
        self.base_point = (self.seq, self.head)
        for row in self.since_base:
            self._replay(row)

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
                self.since_base.append(row)
            self._announce(set(self.service.floor.links), landed.claimed, landed.finalized)
        self.resync = False

    def _refuse(self, error: BaseException, subs: list[Submission]) -> None:
        self.metrics.unavailable((sub.kind, sub.table) for sub in subs)
        for sub in subs:
            if not sub.future.done():
                sub.future.set_exception(
                    Unavailable("events cannot be recorded: the database is unavailable")
                )
        self.cannot_record()

    def cannot_record(self) -> None:
        """A commit failed, or the database probe did (app/api/health.py): say so once, to
        displays (DESIGN.md: tables void unseen rounds, 5.17) and to /health."""
        if not self.degraded:
            self.degraded = True
            if self.broadcast is not None:
                self.broadcast.status(None, "degraded", "jackpot system cannot record events")

    def recorded_again(self) -> None:
        """A commit succeeded, or the probe did (with no traffic, no commit would come)."""
        if self.degraded:
            self.degraded = False
            if self.broadcast is not None:
                self.broadcast.status(None, "ok", "events are recorded again")

    def _replay(self, row: JournalRow) -> object:
        result = self.service.apply(_loads(row.entry, f"journal entry {row.seq}"))
        if row.idem_key is not None and row.body_sha256 is not None:
            self.service.idem[row.idem_key] = row.body_sha256
        self.seq, self.head = row.seq, row.hash
        return result

    def _snapshot(self) -> None:
        """Snapshot the state as it is now, with every row up to `seq` applied: a forked
        process serialises it while the writer goes on; once those rows are committed, it
        becomes the base to rebuild from and is stored (if they are not, it is dropped)."""
        seq, head, now = self.seq, self.head, self.clock()
        last = self.gathering or self.committing  # the group of the last row applied
        committed = None if last is None else last.outcome()
        # The state is long-lived and makes no garbage cycles (a cycle collection under
        # load frees nothing): taking it out of the collector's generations keeps every
        # collection to the young objects, which would otherwise walk the whole floor
        # (pauses of half a second on a large one). Pruned rounds are still freed, by
        # reference counting. It also spares the forked child's pages from the collector.
        # The young generation is collected first: a refused request leaves cyclic garbage
        # (exception, traceback, frames, the request), which a freeze would keep forever
        # (measured: 2,105 uvicorn request cycles kept after 20 s of refused requests with a
        # snapshot every 2,000 entries; 182 with this collection, the ones still in flight).
        gc.collect(0)
        gc.freeze()
        packed = dump_packed_aside(self.service, seq, head)

        async def store() -> None:
            try:
                state = await packed
                if committed is not None and not await committed:
                    log.info("snapshot at %d dropped: its last rows were not committed", seq)
                    return
                self._rebase(state, seq, head)
                await self.journal.save_snapshot(seq, now, self.base)
            except Exception as error:  # a missed snapshot only slows the next start
                log.warning("snapshot at %d not saved: %s", seq, error)
            finally:
                self.snapshot_task = None

        self.snapshot_task = asyncio.create_task(store())

    def _rebase(self, packed: bytes, seq: int, head: str) -> None:
        """The snapshot at `seq` is the new base: keep only the rows committed after it."""
        self.base, self.base_point = packed, (seq, head)
        self.since_base = [row for row in self.since_base if row.seq > seq]

    def announce_recovered(self) -> None:
        """After recovery: show displays every link's meters and the awards still pending
        (DESIGN.md, the watermark: screens show "jackpot pending" while one is)."""
        floor = self.service.floor
        pending = [award for link in floor.links for award in floor.pending_awards(link)]
        self._announce(set(floor.links), pending, [])

    def _announce(
        self,
        links: set[str],
        claimed: list[AwardRecord],
        finalized: list[AwardRecord | ResetRecord],
    ) -> None:
        """Show displays entries that are committed, the state being the one they leave."""
        self._show(self._shown(links, claimed, finalized), finalized)

    def _shown(
        self,
        links: set[str],
        claimed: list[AwardRecord],
        finalized: list[AwardRecord | ResetRecord],
    ) -> Shown:
        """What displays are to be shown of these entries, with the state as they leave it:
        an award claimed here `pending`, one made final here `final` (DESIGN.md, Broadcast:
        each once, so a claim made final by the same entries is shown only `final`)."""
        if self.broadcast is None:
            return Shown([], {})
        # Claimed and final here: shown below, once. Claimed and void here: never shown.
        wins = [(a.link, _win(a)) for a in claimed if a.state == PENDING]
        wins += [
            (r.link, _win(r)) for r in finalized if isinstance(r, AwardRecord) and r.state == FINAL
        ]
        # Shown pending, void now (5.20: paid to nobody): "jackpot pending" ends on screens.
        awards = self.service.floor.awards
        voided = (awards.get(award_id) for award_id in sorted(self.on_screens))
        wins += [(a.link, _win(a)) for a in voided if a is not None and a.state == VOID]
        values = {
            link: {m["meter"]: m["value"] for m in meters(self.service, link)} for link in links
        }
        return Shown(wins, values)

    def _show(self, shown: Shown, finalized: list[AwardRecord | ResetRecord]) -> None:
        rounds = {(a.table, a.round) for a in finalized if isinstance(a, AwardRecord)}
        for key in rounds:
            for future in self.waiters.pop(key, []):
                if not future.done():
                    future.set_result(None)
        if self.broadcast is None:
            return
        for link, win in shown.wins:
            if win["state"] == PENDING:
                self.on_screens.add(str(win["award_id"]))
            else:
                self.on_screens.discard(str(win["award_id"]))
            self.broadcast.win(link, win)
        for link, values in shown.meters.items():
            self.broadcast.meters(link, values)


def _win(award: AwardRecord) -> dict[str, object]:
    row = award_row(award)
    return {
        "state": award.state,
        "award_id": award.id,
        "table": award.table,
        "round": award.round,
        "box": award.box,
        "meter": award.meter,
        "hand": award.hand,
        **({"amount": row["amount"]} if "amount" in row else {}),
        "dealt_at": row["dealt_at"],
    }


def _conflict(sub: Submission) -> Conflict:
    return Conflict(f"{sub.kind} of round {sub.round!r} was already posted with a different body")


def _sha(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def _loads(text: str, what: str = "a recorded answer") -> dict[str, Any]:
    # Exact for every integer: orjson alone reads one beyond 64 bits as a float.
    data: dict[str, Any] = loads_exact(text, what)
    return data
