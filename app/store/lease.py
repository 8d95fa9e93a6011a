"""The writer's lease in PostgreSQL: who leads, until when by the database's clock, and
the fence every takeover sets: the epoch it increments and a random nonce it draws
(alembic/versions/0003, 0005).

Every time here is the database's (`clock_timestamp()` inside the statement), never a
host's: two writers on two machines compare nothing but what one server says. A lease
is taken only once it has expired, and the takeover increments `epoch` in the same
statement; the journal's fenced append (app/store/journal.py) refuses to commit under
any other epoch, so a deposed writer that still believes it leads writes nothing. A
database rolled back under the writers (an asynchronous replica promoted) hands an epoch
out again; the nonce it cannot repeat: renewals and appends check both.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import asyncpg

from app.store.database import Connections
from app.store.errors import JournalUnavailable
from app.store.journal import UNAVAILABLE, Fence
from app.store.stale_appends import take_lease


@dataclass(frozen=True, slots=True)
class Term:
    """A takeover: the new epoch, and the database's clock at it (ms since the epoch),
    and the nonce it drew."""

    epoch: int
    at_ms: int
    nonce: str = ""

    @property
    def fence(self) -> Fence:
        """What the journal's appends carry under this term (PostgresJournal.fence)."""
        return Fence(self.epoch, self.nonce)


@dataclass(frozen=True, slots=True)
class LeaseView:
    """The lease as it stands: its epoch, holder, and ms until it expires (< 0: expired)."""

    epoch: int
    holder: str | None
    expires_in_ms: float
    held_for_ms: float | None  # since the current holder took it


_MS = "EXTRACT(EPOCH FROM clock_timestamp()) * 1000"

# Taken only once expired (a clean release sets expires_at to -infinity); the epoch moves
# in the same statement. A takeover that waits for an append's FOR KEY SHARE re-checks
# the expiry against the clock when it gets the row (a renewal may have come meanwhile);
# it waits for a while only (app/store/stale_appends.py).
_ACQUIRE = f"""
UPDATE writer_lease
   SET epoch = epoch + 1, nonce = $3, holder = $1, acquired_at = clock_timestamp(),
       expires_at = clock_timestamp() + $2 * INTERVAL '1 millisecond'
 WHERE id = 1 AND expires_at <= clock_timestamp()
RETURNING epoch, ({_MS})::BIGINT AS at_ms
"""

# A renewal by the holder of this epoch and nonce, even after expiry while nobody took
# over (it still leads: the fence did not move). A non-key update: it never waits for an
# append.
_RENEW = """
UPDATE writer_lease SET expires_at = clock_timestamp() + $2 * INTERVAL '1 millisecond'
 WHERE id = 1 AND epoch = $1 AND nonce = $3
RETURNING epoch
"""

_RELEASE = """
UPDATE writer_lease SET expires_at = '-infinity' WHERE id = 1 AND epoch = $1 AND nonce = $2
"""

NONCE_BYTES = 16

_READ = """
SELECT epoch, holder,
       CASE WHEN expires_at = '-infinity' THEN -1e15
            ELSE EXTRACT(EPOCH FROM expires_at - clock_timestamp()) * 1000 END AS expires_in_ms,
       EXTRACT(EPOCH FROM clock_timestamp() - acquired_at) * 1000 AS held_for_ms
  FROM writer_lease WHERE id = 1
"""


class PostgresLease:
    """One contender for the lease: `holder` names it (host, pid) in the row."""

    def __init__(
        self, pool: Connections, holder: str, lease_ms: int, *, timeout: float = 5.0
    ) -> None:
        self._pool = pool
        self.holder = holder
        self.lease_ms = lease_ms
        self._timeout = timeout
        self._nonces: dict[int, str] = {}  # epoch -> the nonce our takeover at it drew

    async def _fetchrow(self, query: str, *args: object) -> asyncpg.Record | None:
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return await connection.fetchrow(query, *args, timeout=self._timeout)
        except UNAVAILABLE as error:
            raise JournalUnavailable(f"lease: {error!r}") from error

    async def acquire(self) -> Term | None:
        """Take the lease if it has expired: the new term, or None (another leads)."""
        nonce = secrets.token_hex(NONCE_BYTES)
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                record = await take_lease(
                    connection, _ACQUIRE, self.holder, self.lease_ms, nonce,
                    seconds=self._timeout,
                )  # fmt: skip
        except UNAVAILABLE as error:
            raise JournalUnavailable(f"lease: {error!r}") from error
        if record is None:
            return None
        self._nonces = {record["epoch"]: nonce}
        return Term(record["epoch"], record["at_ms"], nonce)

    def took(self, term: Term) -> None:
        """A takeover made elsewhere with this holder's name (app/store/leader_lock.py):
        renewed and released here."""
        self._nonces = {term.epoch: term.nonce}

    async def renew(self, epoch: int) -> bool:
        """Extend our lease; False if another has taken it (we are deposed), or holds
        the same epoch under another nonce (it was handed out again after a rollback)."""
        nonce = self._nonces.get(epoch)
        if nonce is None:
            return False
        return await self._fetchrow(_RENEW, epoch, self.lease_ms, nonce) is not None

    async def release(self, epoch: int) -> None:
        """On a clean stop: let a standby take over at once rather than at expiry."""
        nonce = self._nonces.get(epoch)
        if nonce is not None:
            await self._fetchrow(_RELEASE, epoch, nonce)

    async def read(self) -> LeaseView | None:
        record = await self._fetchrow(_READ)
        if record is None:
            return None
        held = record["held_for_ms"]
        return LeaseView(
            record["epoch"],
            record["holder"],
            float(record["expires_in_ms"]),
            None if held is None else float(held),
        )
