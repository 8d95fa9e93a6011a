"""The single writer: owns all state, applies commands in order, commits them in groups.

HTTP handlers never touch state: they validate, `submit` a request and await its answer,
given once its journal row is durable (app/writer/group_commit.py). If a commit fails, the
state is rebuilt from the last durable point, every request of the group gets a 503, and
nothing was acknowledged. What reads the state directly (GET) may see a group a commit
early; displays are shown only what is committed (app/writer/announcer.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from app.state.accounts import Accounts
from app.state.commands import Command
from app.state.floor_state import FloorState
from app.store.errors import JournalUnavailable
from app.store.journal import Journal, JournalRow
from app.writer.announcer import Announcer
from app.writer.group import Reply, Submission
from app.writer.group_commit import GroupCommitter
from app.writer.journal_answers import left_memory, recorded_answer
from app.writer.opening import opening_done
from app.writer.ports import Broadcast, Uncounted, WriterMetrics
from app.writer.position import Position, loads
from app.writer.recovery import Recovery
from app.writer.refusals import Standby, Unavailable
from app.writer.snapshot_policy import SnapshotPolicy
from app.writer.timer import Liveness, Timer
from app.writer.writer_settings import WriterSettings
from jackpot.errors import JackpotError, UnknownError
from tables.errors import TablesError

log = logging.getLogger("jackpot.writer")

# Journal lookups the HTTP handlers may run at once (the pool has 10 connections: the
# writer's commit and a snapshot's save always find one free).
LOOKUPS = 4


class Writer:
    """The writer composed of its parts, each built here and handed what it uses: the
    position (state and chain), the announcer (displays), recovery, the snapshot policy,
    the timer and the group committer. It owns the request queue and the loop that feeds
    the committer; `submit` is the way in."""

    def __init__(
        self,
        service: FloorState,
        journal: Journal,
        settings: WriterSettings | None = None,
        *,
        broadcast: Broadcast | None = None,
        metrics: WriterMetrics[Any] | None = None,
    ) -> None:
        self.settings = settings = settings or WriterSettings()
        self.journal = journal
        self.metrics: WriterMetrics[Any] = metrics or Uncounted()
        self.position = position = Position(service)
        self.announcer = Announcer(position, broadcast)
        self.recovery = Recovery(position, journal, self.announcer)
        self.snapshots = SnapshotPolicy(position, journal, settings)
        self.timer = Timer(position, settings)
        self.committer = GroupCommitter(
            position,
            journal,
            settings,
            self.metrics,
            announcer=self.announcer,
            recovery=self.recovery,
            snapshots=self.snapshots,
            timer=self.timer,
        )
        self.lookups = asyncio.Semaphore(LOOKUPS)
        self.queue: asyncio.Queue[Submission] | None = None  # from `start`
        self.task: asyncio.Task[None] | None = None
        # One pending get() carried across the timer's timeouts (`_next_batch`).
        self.getter: asyncio.Future[Submission] | None = None
        self.stopping = False
        # Another writer holds the lease (app/writer/leadership.py): refuse, never record.
        self.standby = False
        # Requests the writer takes first whenever it starts leading, before any other
        # (the parameters read at start: app/writer/opening.py), and their answers.
        self.opening: list[tuple[str, Command]] = []
        self.opened: list[asyncio.Future[tuple[int, Reply]]] = []
        # The software identity checked at start (app/ops/software.py), for GET /v1/about.
        self.identity: dict[str, Any] | None = None

    # The state and where it stands, as the app reads them.

    @property
    def service(self) -> FloorState:
        """The state; replaced when a commit fails (rebuilt from the last durable point)."""
        return self.position.service

    def accounts(self) -> Accounts:
        """The accounts the journal holds now: bearer tokens and sign-ins are judged by
        them, so they are read from the state at each request (it may be replaced)."""
        return self.position.service.accounts

    @property
    def seq(self) -> int:
        return self.position.seq

    @property
    def head(self) -> str:
        return self.position.head

    def durable_head(self) -> tuple[int, str]:
        return self.position.durable_head()

    @property
    def degraded(self) -> bool:
        """The last commit, or database probe, failed: events cannot be recorded."""
        return self.announcer.degraded

    @property
    def stats(self) -> Mapping[str, int]:
        """Group commits, rows committed and failed commits, counted since start."""
        return self.committer.stats

    @property
    def clock(self) -> Callable[[], int]:
        """The server time in ms (`WriterSettings.clock`)."""
        return self.settings.clock

    def last_heard(self, table: str) -> int:
        """When the table last asked what is in play (or this writer began leading)."""
        return self.timer.liveness.last(table)

    def heard(self, table: str, now: int) -> None:
        """The table asked what is in play: its heartbeat (app/writer/timer.py)."""
        self.timer.liveness.hear(table, now)

    @property
    def outcome_wait_s(self) -> float:
        return self.settings.outcome_wait_s

    def queue_depth(self) -> int:
        """Requests waiting for the writer (none before `start`)."""
        return 0 if self.queue is None else self.queue.qsize()

    # Start, recovery and leadership.

    def use_journal(self, journal: Journal) -> None:
        """The journal opened at start-up, before `recover` (app/api/application.py)."""
        assert self.task is None, "the journal is given before the writer starts"
        self.journal = journal
        self.recovery.journal = self.snapshots.journal = self.committer.journal = journal

    async def recover(self) -> int:
        """State = latest snapshot + every journal entry after it. Returns entries replayed."""
        return await self.recovery.recover()

    def announce_recovered(self) -> None:
        self.announcer.announce_recovered()

    def cannot_record(self) -> None:
        self.announcer.cannot_record()

    def recorded_again(self) -> None:
        self.announcer.recorded_again()

    async def wait_final(self, table: str, round_id: str, wait_s: float) -> None:
        await self.announcer.wait_final(table, round_id, wait_s)

    def stand_by(self) -> None:
        """Another writer leads: refuse every request, record nothing."""
        self.standby = True

    def lead(self) -> None:
        """The lease is ours: accept requests again (once `start`ed), as able to record."""
        self.stopping, self.standby = False, False
        self.announcer.degraded = False

    async def step_down(self) -> None:
        """Deposed (`stand_by` first): drain what is held, each commit fenced out so each
        request is refused, and forget the answers remembered as the leader."""
        await self.stop()
        self.task, self.stopping = None, False
        self.forget_answers()

    def forget_answers(self) -> None:
        """Drop the first answers kept in memory: retries read them from the journal, as
        after a restart."""
        self.position.answers.clear()

    # The loop.

    def start(self) -> None:
        # Tables are heard from now on: none is silent for the time before it led.
        self.timer.liveness = Liveness(self.clock())
        self.queue = asyncio.Queue()
        self.opened = [self._first(kind, command) for kind, command in self.opening]
        self.task = asyncio.create_task(self._run(), name="jackpot-writer")

    def _first(self, kind: str, command: Command) -> asyncio.Future[tuple[int, Reply]]:
        """Queued now, before anything else can be: the first request taken."""
        assert self.queue is not None
        future: asyncio.Future[tuple[int, Reply]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(opening_done)
        self.queue.put_nowait(Submission(kind, None, None, command, None, future))
        return future

    async def stop(self) -> None:
        """Drain: every request already submitted is committed and answered, then stop."""
        self.stopping = True
        if self.task is not None:
            assert self.queue is not None
            await self.queue.put(
                Submission(
                    "stop", None, None, None, None, asyncio.get_running_loop().create_future()
                )
            )
            await self.task
        for task in (self.snapshots.task, self.snapshots.rebasing):
            if task is not None:
                with contextlib.suppress(Exception):
                    await task

    async def process(self, batch: list[Submission]) -> None:
        """Apply a batch and wait until it and every group before it are answered."""
        await self.committer.admit(batch)
        await self.committer.idle()

    async def _run(self) -> None:
        committer = self.committer
        while True:
            batch = await self._next_batch()  # [] when it is time to finalise
            stop = any(s.kind == "stop" for s in batch)
            work = [s for s in batch if s.kind != "stop"]
            try:
                await committer.admit(work)
            except Exception:
                # A bug must not kill the writer (every later request would hang): back
                # to the last durable state; this batch gets a 503, nothing was acked.
                log.exception("writer: unexpected error; state restored to the journal")
                await committer.idle()
                self.recovery.restore_unsure()
                committer.refuse(RuntimeError("internal error"), work)
            if stop:
                await committer.idle()
                for s in batch:
                    if s.kind == "stop" and not s.future.done():
                        s.future.set_result((200, {}))
                return

    async def _next_batch(self) -> list[Submission]:
        """The requests queued (up to `max_batch`), or none once the timer's entries are due."""
        queue = self.queue
        assert queue is not None
        max_batch = self.settings.max_batch
        # One pending get() carried across timeouts: cancelling a get() that completes at
        # that very moment could drop a request.
        if self.getter is None:
            self.getter = asyncio.ensure_future(queue.get())
        done, _ = await asyncio.wait({self.getter}, timeout=self.timer.sleep_s())
        if not done:
            return []  # time to finalise: the timer, not the next request
        first, self.getter = self.getter.result(), None
        if queue.qsize() < max_batch:
            # One turn of the loop first: requests already read from their sockets reach
            # the queue and join this group (docs/performance.md).
            await asyncio.sleep(0)
        batch = [first]
        while len(batch) < max_batch and not queue.empty():
            batch.append(queue.get_nowait())
        return batch

    # The way in: `submit` answers a dict; `submit_json` the answer's JSON bytes, as recorded.

    async def submit(
        self,
        kind: str,
        table: str | None,
        round_id: str | None,
        command: Command,
        by: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Hand a request to the writer; returns (HTTP status, answer) once it is durable."""
        status, answer = await self._submit(kind, table, round_id, command, by)
        return status, loads(answer) if isinstance(answer, str) else answer

    async def submit_json(
        self, kind: str, table: str | None, round_id: str | None, command: Command
    ) -> tuple[int, bytes]:
        """As `submit`, the answer as JSON bytes: the text the journal records with the
        entry, sent as it is to a first post and to its retries."""
        status, answer = await self._submit(kind, table, round_id, command, None)
        return status, answer.encode() if isinstance(answer, str) else orjson.dumps(answer)

    async def _submit(
        self,
        kind: str,
        table: str | None,
        round_id: str | None,
        command: Command,
        by: str | None,
    ) -> tuple[int, Reply]:
        if self.stopping or self.standby or self.queue is None:
            raise self._closed()
        future: asyncio.Future[tuple[int, Reply]] = asyncio.get_running_loop().create_future()
        sub = Submission(kind, table, round_id, command, by, future)
        await self.queue.put(sub)
        try:
            status, answer = await future
        except (JackpotError, TablesError) as error:
            if not sub.may_be_recorded or sub.idem_key is None:
                raise
            return await self._late_retry(sub, error)
        if not answer and sub.idem_key is not None:
            # A retry whose first answer is no longer remembered: the journal's.
            row = await self.lookup(sub.idem_key)
            if row is not None and row.answer is not None:
                answer = row.answer
        return status, answer

    async def _late_retry(
        self, sub: Submission, error: JackpotError | TablesError
    ) -> tuple[int, Reply]:
        """A late retry of an event recorded for a round no longer in memory (bets closed
        long ago, say) is refused by the state, but the journal has its first answer.
        Asked here, after the refusal: a table flooding events for unknown rounds must not
        hold up the commits of the others. With the journal unreachable, that is a 503: it
        may well be recorded."""
        assert sub.idem_key is not None
        try:
            row = await self.lookup(sub.idem_key)
            unknown = row is None and isinstance(error, UnknownError)
            left = await left_memory(sub, self.lookup) if unknown else None
        except JournalUnavailable:
            self.metrics.unavailable([(sub.kind, sub.table)])
            raise
        if row is None:
            self.metrics.event(sub.kind, sub.table, "refused")
            if left is not None:
                raise left from None
            raise error
        return recorded_answer(sub, row, self.metrics)

    async def lookup(self, idem_key: str) -> JournalRow | None:
        """The journal's row of an event, for the HTTP handlers. At most `LOOKUPS` at a
        time: a flood of them must not take every pooled connection, or the writer's
        commits would queue behind them for one."""
        async with self.lookups:
            return await self.journal.lookup(idem_key)

    def _closed(self) -> Unavailable:
        """Why a request is refused now: a standby, or a writer shutting down (503)."""
        if self.standby:
            return Standby("this writer is a standby: another one leads; retry (through the proxy)")
        return Unavailable("the server is shutting down")
