"""The leader's lock: a session advisory lock that tells a standby at once that the
leading process is gone (docs/design.md "The lease and its fence").

The leader holds the lock (LOCK_CLASS, its epoch) on a connection of its own, never the
pool's. PostgreSQL ends a session as soon as its client's socket closes, which a dead
process's does at once, and the session's advisory locks go with it. A standby tries that
lock every POLL_S on its own connection; once it is granted, no session of that epoch's
leader is left, and the standby takes the lease there and then, by the same statement as
at expiry (a new epoch and nonce, the journal's fence), provided the lease is still at
that epoch and nonce.

The lock only hastens a takeover; it never fences. A frozen leader keeps its session and
its lock: it is taken over at the lease's expiry, as before, and fenced (an append it
left in the middle is ended then: app/store/stale_appends.py). A leader whose
lock session is lost while it lives is taken over by a standby within POLL_S and, like
any deposed leader, stands down at its next renewal or append; with no standby about, it
takes the lock again at its next renewal.

Session locks need a session that stays one server process: a direct connection (or a
pooler in session mode), never a transaction-mode pooler (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable

import asyncpg

from app.store.errors import JournalUnavailable
from app.store.journal import UNAVAILABLE
from app.store.lease import NONCE_BYTES, PostgresLease, Term
from app.store.stale_appends import take_lease

# Any constant: the lock's namespace (two-key form, apart from the migrations' one-key lock).
LOCK_CLASS = 0x6A6B6C64

# How often a standby tries the leader's lock: a dead leader is taken over this long after
# PostgreSQL ends its session, at most.
POLL_S = 0.05

_ERRORS: tuple[type[BaseException], ...] = (*UNAVAILABLE, asyncpg.InterfaceError)

_MS = "EXTRACT(EPOCH FROM clock_timestamp()) * 1000"  # the database's clock, as the lease's


def lock_key(epoch: int) -> int:
    """The lock's second key: the epoch, in the int4 the two-key form takes."""
    return epoch & 0x7FFFFFFF


# The lease as PostgresLease's _ACQUIRE takes it once expired, or at once from the leader of
# epoch $5 and nonce $6 when the caller holds that epoch's lock (it has no session left).
# The new epoch's lock is taken in the same statement: no standby can read the new epoch
# before its leader holds that lock.
_TAKE = f"""
UPDATE writer_lease
   SET epoch = epoch + 1, nonce = $3, holder = $1, acquired_at = clock_timestamp(),
       expires_at = clock_timestamp() + $2 * INTERVAL '1 millisecond'
 WHERE id = 1
   AND (expires_at <= clock_timestamp()
        OR ($5::BIGINT IS NOT NULL AND epoch = $5 AND nonce IS NOT DISTINCT FROM $6))
RETURNING epoch, ({_MS})::BIGINT AS at_ms,
          pg_try_advisory_lock($4, (epoch & 2147483647)::INT) AS locked
"""

_READ = "SELECT epoch, nonce FROM writer_lease WHERE id = 1"
_TRY = "SELECT pg_try_advisory_lock($1, $2)"
_UNLOCK = "SELECT pg_advisory_unlock($1, $2)"
_HELD = """
SELECT EXISTS (SELECT 1 FROM pg_locks
                WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                  AND classid = $1::OID AND objid = $2::OID AND objsubid = 2)
"""


class PostgresLeaderLock:
    """One writer process's leader lock, on a dedicated connection, beside its lease."""

    def __init__(
        self, lease: PostgresLease, dsn: Callable[[], str | None], *, timeout: float = 5.0
    ) -> None:
        self.lease = lease
        self._dsn = dsn  # known once the database is open (an embedded one starts then)
        self._timeout = timeout
        self._connection: asyncpg.Connection | None = None
        self.held: int | None = None  # the epoch whose lock our session holds

    async def _connected(self) -> asyncpg.Connection:
        if self._connection is not None and not self._connection.is_closed():
            return self._connection
        self._connection, self.held = None, None  # a lost session held nothing
        dsn = self._dsn()
        if dsn is None:
            raise JournalUnavailable("leader lock: the database is not open")
        self._connection = await asyncpg.connect(dsn, timeout=self._timeout)
        return self._connection

    async def _fetchrow(self, query: str, *args: object) -> asyncpg.Record | None:
        try:
            connection = await self._connected()
            return await connection.fetchrow(query, *args, timeout=self._timeout)
        except _ERRORS as error:
            await self.let_go()  # whatever it held is unknown: a new session next time
            raise JournalUnavailable(f"leader lock: {error!r}") from error

    async def _fetchval(self, query: str, *args: object) -> object:
        record = await self._fetchrow(query, *args)
        return None if record is None else record[0]

    async def _take(self, epoch: int | None, nonce: str | None) -> Term | None:
        drawn = secrets.token_hex(NONCE_BYTES)
        args = (self.lease.holder, self.lease.lease_ms, drawn, LOCK_CLASS, epoch, nonce)
        try:
            connection = await self._connected()
            record = await take_lease(connection, _TAKE, *args, seconds=self._timeout)
        except _ERRORS as error:
            await self.let_go()
            raise JournalUnavailable(f"leader lock: {error!r}") from error
        if record is None:
            return None
        term = Term(record["epoch"], record["at_ms"], drawn)
        self.lease.took(term)  # its renewals and release go through the pool, as before
        self.held = term.epoch if record["locked"] else None
        return term

    async def acquire(self) -> Term | None:
        """The lease once it has expired, as PostgresLease.acquire, holding the new
        epoch's lock from the same statement on: the new term, or None."""
        return await self._take(None, None)

    async def leader_gone(self, seconds: float) -> Term | None:
        """A standby's wait between two polls of the journal: for up to `seconds`, tries
        the lock of the lease's epoch every POLL_S. Granted, that epoch's leader has no
        session left: the lease is ours at once if it is still at that epoch and nonce."""
        deadline = time.monotonic() + seconds
        record = await self._fetchrow(_READ)
        if record is None or record["epoch"] == 0:  # nobody has led: taken at expiry
            await asyncio.sleep(seconds)
            return None
        epoch, nonce = record["epoch"], record["nonce"]
        while not await self._fetchval(_TRY, LOCK_CLASS, lock_key(epoch)):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            await asyncio.sleep(min(POLL_S, remaining))
        term = await self._take(epoch, nonce)
        # The old epoch's lock, taken only to learn that its leader was gone.
        with contextlib.suppress(JournalUnavailable):
            await self._fetchval(_UNLOCK, LOCK_CLASS, lock_key(epoch))
        return term

    async def keep(self, epoch: int) -> bool:
        """The leader's, at each renewal: whether its session still holds its epoch's
        lock, taking it again on a new session if the old one was lost. False: the
        database cannot be reached, or a standby holds it (it takes the lease at once)."""
        try:
            if self.held == epoch and await self._fetchval(_HELD, LOCK_CLASS, lock_key(epoch)):
                return True
            self.held = None
            if await self._fetchval(_TRY, LOCK_CLASS, lock_key(epoch)):
                self.held = epoch
                return True
        except JournalUnavailable:
            pass
        return False

    async def let_go(self) -> None:
        """Stood down or stopping: the session closed, and every lock it held with it."""
        connection, self._connection, self.held = self._connection, None, None
        if connection is None or connection.is_closed():
            return
        try:
            await connection.close(timeout=self._timeout)
        except _ERRORS:
            connection.terminate()
        except asyncio.CancelledError:
            connection.terminate()
            raise
