"""Leadership among writers on one database: lead while holding the lease, else follow.

The lease in PostgreSQL (app/store/lease.py) says which `jackpot serve --role writer`
process writes. A standby follows the journal as it is committed and takes over once the
lease expires (a new epoch, set as the journal's fence), or at once when the leader's lock
(app/store/leader_lock.py) says that its process is gone; a leader that finds another epoch
refuses what it holds with 503, rebuilds its state from the journal and follows again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Protocol

from app.store.errors import BrokenChain, JournalUnavailable
from app.store.journal import PostgresJournal
from app.store.lease import Term
from app.writer.writer import Writer

log = logging.getLogger("jackpot.leadership")

# A standby polls the journal's tail and the lease this often (at most): a takeover comes
# within this of the lease's expiry, and the tail it replays is this long at most.
POLL_S = 0.2


class Lease(Protocol):
    lease_ms: int

    async def acquire(self) -> Term | None: ...
    async def renew(self, epoch: int) -> bool: ...
    async def release(self, epoch: int) -> None: ...


class LeaderLock(Protocol):
    """What tells a standby at once that the leader's process is gone (optional): the
    lease is still taken by its fenced statement, only sooner."""

    held: int | None  # the epoch whose lock this process holds

    async def acquire(self) -> Term | None: ...
    async def leader_gone(self, seconds: float) -> Term | None: ...
    async def keep(self, epoch: int) -> bool: ...
    async def let_go(self) -> None: ...


class Leadership:
    """Runs one writer process as the leader or as a hot standby, as the lease decides."""

    def __init__(
        self,
        writer: Writer,
        journal: PostgresJournal,
        lease: Lease,
        *,
        on_lead: Callable[[Term], None] = lambda term: None,
        on_standby: Callable[[], None] = lambda: None,
        lock: LeaderLock | None = None,
        on_crash: Callable[[BaseException], None] = lambda error: None,
    ) -> None:
        self.writer, self.journal, self.lease, self.lock = writer, journal, lease, lock
        self.lock_lost = False  # the lock could not be had, as last found (said once)
        # What displays are shown on a takeover (a fresh snapshot, the pending awards),
        # and told on a step-down (nothing more from here): app/api/application.py.
        self.on_lead, self.on_standby = on_lead, on_standby
        # What ends the process when this loop ends with an error no branch expects: a
        # standby whose loop died would never take over, yet /health would say "standby".
        self.on_crash = on_crash
        self.leading = False
        self.epoch = 0
        self.takeovers = 0  # by this process
        self.renewed_at: float | None = None  # monotonic, when the last renewal was sent
        self.task: asyncio.Task[None] | None = None
        writer.stand_by()  # until the lease is ours: refuse, never record

    @property
    def lease_s(self) -> float:
        return self.lease.lease_ms / 1000

    def lease_age_s(self) -> float | None:
        """Seconds since the last renewal we sent (None as a standby)."""
        if not self.leading or self.renewed_at is None:
            return None
        return time.monotonic() - self.renewed_at

    def lock_held(self) -> bool:
        """Whether we lead holding our epoch's lock (a standby learns at once if we die)."""
        return self.leading and self.lock is not None and self.lock.held == self.epoch

    def may_announce(self) -> bool:
        """Whether displays may take our messages: leading, and renewed within the
        lease by our own clock. Redis is not fenced by the database; a leader paused
        past its lease (SIGSTOP, a frozen VM) stops publishing before it learns that it
        was deposed, so it never writes over the new leader's display states."""
        age = self.lease_age_s()
        return age is not None and age < self.lease_s

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="jackpot-leadership")
        self.task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        log.critical(
            "leadership stopped by an unexpected error: this process can neither lead nor"
            " take over, so it stops (its supervisor starts it again)",
            exc_info=error,
        )
        self.writer.stand_by()  # records nothing more
        self.on_crash(error)

    async def stop(self) -> None:
        """SIGTERM: stop following or renewing; a leader drains (every accepted request
        committed and answered), then releases the lease so a standby takes over now."""
        if self.task is not None:
            self.task.cancel()
            # An error that ended it was logged when it did (`_ended`).
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
            self.task = None
        await self.writer.stop()
        if self.leading:
            with contextlib.suppress(JournalUnavailable, OSError):
                await self.lease.release(self.epoch)
        if self.lock is not None:
            await self.lock.let_go()

    async def _run(self) -> None:
        while True:
            if self.leading:
                await asyncio.sleep(self.lease_s / 3)
                await self._renew()
                if self.leading and self.lock is not None:
                    await self._keep_lock(self.lock)
            else:
                await self._follow_or_take_over()

    async def _follow_or_take_over(self) -> None:
        try:
            await self.follow()
            sent = time.monotonic()
            term = await self._acquire()
            if term is None and self.lock is not None:
                sent = time.monotonic()
                term = await self._leader_gone(self.lock)
        except BrokenChain as error:
            log.error("standby: the journal's chain is broken, refusing to lead: %s", error)
            await asyncio.sleep(POLL_S)
            return
        except (JournalUnavailable, OSError) as error:
            log.warning("standby: the database cannot be read: %s", error)
            await asyncio.sleep(POLL_S)
            return
        if term is None:
            if self.lock is None:
                await asyncio.sleep(POLL_S)
            return
        self.renewed_at = sent
        await self._take_over(term)

    async def _acquire(self) -> Term | None:
        """The lease once expired: on the lock's session, holding the new epoch's lock
        from the same statement; through the pool if that session cannot be had."""
        if self.lock is not None:
            try:
                return await self.lock.acquire()
            except (JournalUnavailable, OSError) as error:
                self._lock_lost(error)
        return await self.lease.acquire()

    async def _leader_gone(self, lock: LeaderLock) -> Term | None:
        """Between two polls, the leader's lock: the lease at once if its process is gone."""
        try:
            term = await lock.leader_gone(POLL_S)
        except (JournalUnavailable, OSError) as error:
            self._lock_lost(error)
            await asyncio.sleep(POLL_S)
            return None
        if self.lock_lost:
            log.warning("leader lock: watched again")
        self.lock_lost = False
        return term

    async def _keep_lock(self, lock: LeaderLock) -> None:
        if await lock.keep(self.epoch):
            if self.lock_lost:
                log.warning("leader lock held again at epoch %d", self.epoch)
            self.lock_lost = False
        else:
            self._lock_lost(f"not held at epoch {self.epoch}")

    def _lock_lost(self, why: object) -> None:
        # Said once per loss. A leader without its lock is taken over at its lease's
        # expiry, or at once by a standby that holds the lock (deposed: stands down).
        if not self.lock_lost:
            log.warning("leader lock: %s; takeovers wait for the lease meanwhile", why)
        self.lock_lost = True

    async def follow(self) -> int:
        """Apply the entries committed since our seq, as recovery does. Returns how many."""
        writer, applied = self.writer, 0
        position, snapshots = writer.position, writer.snapshots
        async for row in self.journal.read(position.seq):
            position.replay(row)  # as recovery does (app/writer/recovery.py)
            position.keep((row,))
            applied += 1
        if len(position.since_base) > writer.settings.snapshot_every:
            await self._rebase()
        if snapshots.freeze_due():
            snapshots.freeze()  # as the leader does: what it follows stays out of the collector
        return applied

    async def _rebase(self) -> None:
        """Keep the rows to rebuild from bounded, as the leader's snapshots do for it: the
        latest stored snapshot we have applied becomes our base (fetched once it is a newer
        one, checked against our chain: app/writer/snapshot_policy.py)."""
        try:
            await self.writer.snapshots.rebase_on_stored()
        except ValueError as error:  # not the journal's state: our rows stay the base's
            log.error("standby: a stored snapshot refused: %s", error)

    async def _take_over(self, term: Term) -> None:
        # From here our appends commit only under this epoch; the old leader's cannot.
        self.journal.fence, self.epoch = term.fence, term.epoch
        try:
            # Every append of the old leader committed before our takeover did (its
            # fence held the row): the tail read now is the whole journal.
            tail = await self.follow()
        except (JournalUnavailable, OSError, BrokenChain) as error:
            log.error(
                "takeover at epoch %d: the journal's tail cannot be read: %s", term.epoch, error
            )
            await self._resign()
            return
        self.leading = True
        self.takeovers += 1
        self.writer.lead()
        self.on_lead(term)
        self.writer.start()  # the watermark's and expiry's timers run from here
        log.warning(
            "leading at epoch %d: %d entries replayed at takeover, head seq %d",
            term.epoch, tail, self.writer.seq,
        )  # fmt: skip

    async def _renew(self) -> None:
        sent = time.monotonic()
        try:
            renewed = await self.lease.renew(self.epoch)
        except (JournalUnavailable, OSError) as error:
            # Nothing commits meanwhile either; once the database is back, the renewal
            # says whether another took over.
            log.warning("lease not renewed: %s", error)
            return
        if renewed:
            self.renewed_at = sent
        else:
            await self._step_down()

    async def _step_down(self) -> None:
        """Deposed: refuse what we hold, drop our state, follow the journal again."""
        log.error("deposed: another writer holds the lease after epoch %d; standing by", self.epoch)
        self.leading = False
        self.writer.stand_by()  # `submit` refuses from now on
        self.on_standby()
        # Drains the queue: each commit is fenced out (Deposed), so each request held is
        # refused with 503 and none is acknowledged.
        await self.writer.step_down()
        await self._resign()

    async def _resign(self) -> None:
        """Back to a standby's state: the journal's, rebuilt from its latest snapshot."""
        self.leading = False
        self.writer.stand_by()
        if self.lock is not None:
            await self.lock.let_go()  # our epoch's lock, for a standby's sake
        while True:
            try:
                await self.writer.recover()
                return
            except (JournalUnavailable, OSError, BrokenChain) as error:
                log.warning("standby: the journal cannot be read: %s", error)
                await asyncio.sleep(POLL_S)
