"""Appends that outlive their leader's lease, holding the lease's row (docs/design.md
"The lease and its fence").

Every append holds the lease's row (FOR KEY SHARE) until it ends, and a takeover waits
for it (alembic/versions/0003): so every append of the old leader commits before the
takeover does. A leader frozen (SIGSTOP, a paused VM) or cut off in the middle of an
append leaves a session that waits for the rest of it with the row held, as long as the
process stays frozen or until TCP gives up; PostgreSQL's own timeouts do not end a COPY
waiting for its rows. A takeover would wait with it. So the takeover waits for appends
in flight LOCK_WAIT_MS at most; past that, while the lease is still expired, the sessions
that hold the row are ended and the takeover is tried once more. An append ended so was
never committed, so never acknowledged; its writer refuses what it held with 503.
"""

from __future__ import annotations

import logging
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

log = logging.getLogger("jackpot.lease")

Connection: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"

# How long a takeover waits for the appends in flight: a live writer's append commits
# in milliseconds.
LOCK_WAIT_MS = 500

# The sessions holding the lease's row as appends do, once the lease has expired (a
# renewal meanwhile spares them). Ending another session of the same role needs no
# privilege beyond the writers' login (docs/operations.md "Roles and privileges").
_END_HOLDERS = """
SELECT count(*) FILTER (WHERE pg_terminate_backend(l.pid)) AS ended
  FROM pg_locks l
 WHERE l.locktype = 'relation' AND l.relation = 'writer_lease'::regclass
   AND l.mode = 'RowShareLock' AND l.granted AND l.pid <> pg_backend_pid()
   AND EXISTS (SELECT 1 FROM writer_lease WHERE id = 1 AND expires_at <= clock_timestamp())
"""


async def take_lease(
    connection: Connection, statement: str, *args: object, seconds: float
) -> asyncpg.Record | None:
    """Run the takeover `statement` (an UPDATE of the lease's row), waiting for appends in
    flight LOCK_WAIT_MS at most; then ending those that outlived the lease, and trying
    again once. None: not taken (the lease is another's, or the row is still held)."""
    for attempt in (1, 2):
        try:
            async with connection.transaction():
                await connection.execute(
                    f"SET LOCAL lock_timeout = {LOCK_WAIT_MS}", timeout=seconds
                )
                record: asyncpg.Record | None = await connection.fetchrow(
                    statement, *args, timeout=seconds
                )
                return record
        except asyncpg.LockNotAvailableError:
            if attempt == 2:
                return None
        try:
            ended = await connection.fetchval(_END_HOLDERS, timeout=seconds)
        except asyncpg.InsufficientPrivilegeError as error:
            log.error("takeover: an append holds the expired lease and cannot be ended: %s", error)
            return None
        if ended:
            log.warning("takeover: %d appends held the expired lease's row; ended", ended)
    return None
