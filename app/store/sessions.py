"""The console's sessions and the sign-in log: a port, a memory and a PostgreSQL adapter
(tables `operator_sessions` and `signins`, alembic/versions/0005).

A session is kept by the sha256 of its id: the cookie's value is never stored. Sessions
and sign-ins are not journal entries: they change nobody's rights (the accounts do,
app/state/accounts.py) and a session's validity is checked against the account's
generation at every request. They live in the server's database so that every writer
process (a standby taking over) knows them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

import asyncpg

from app.store.database import Connections
from app.store.errors import JournalUnavailable


@dataclass(frozen=True, slots=True)
class Session:
    id_sha256: str
    account: str
    generation: int  # the account's, when it signed in (app/state/accounts.py)
    csrf: str  # the token every state-changing request of the session carries
    address: str
    created_at: int
    last_seen_at: int
    expires_at: int  # the absolute lifetime's end
    ended_at: int | None = None
    end_reason: str | None = None


@dataclass(frozen=True, slots=True)
class SignInEvent:
    """One line of the sign-in log. `event`: signin, failure, lockout, signout,
    session_end, unlock. `name`: the account, or the name typed at a failure."""

    at: int
    event: str
    name: str
    address: str
    detail: str = ""
    until: int | None = None  # a lockout's end
    scope: str = ""  # a lockout's or an unlock's: "name" or "address"
    seq: int = 0  # given by the log


@dataclass(frozen=True, slots=True)
class SignInQuery:
    start: int
    end: int
    name: str | None = None
    event: str | None = None
    limit: int = 100
    offset: int = 0


class Sessions(Protocol):
    async def open(self, session: Session) -> None: ...
    async def get(self, id_sha256: str) -> Session | None: ...
    async def touch(self, id_sha256: str, at: int) -> None: ...
    async def end(self, id_sha256: str, at: int, reason: str) -> None: ...
    async def live(self, now: int) -> list[Session]:
        """Sessions not ended and within their lifetime, newest first."""
        ...

    async def record(self, event: SignInEvent) -> None: ...
    async def recent(self, scope: str, key: str, since: int) -> list[SignInEvent]:
        """The events of a name (`scope` "name") or an address since `since`, oldest first."""
        ...

    async def events(self, query: SignInQuery) -> tuple[list[SignInEvent], int]:
        """A page of the log, oldest first, and how many match."""
        ...


def _matches(event: SignInEvent, query: SignInQuery) -> bool:
    return (
        query.start <= event.at < query.end
        and (query.name is None or event.name == query.name)
        and (query.event is None or event.event == query.event)
    )


def _keyed(event: SignInEvent, scope: str, key: str) -> bool:
    if event.event in ("lockout", "unlock"):
        return event.scope == scope and (event.name if scope == "name" else event.address) == key
    return (event.name if scope == "name" else event.address) == key


class MemorySessions:
    """For tests and a server on a memory journal."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.log: list[SignInEvent] = []

    async def open(self, session: Session) -> None:
        self.sessions[session.id_sha256] = session

    async def get(self, id_sha256: str) -> Session | None:
        return self.sessions.get(id_sha256)

    async def touch(self, id_sha256: str, at: int) -> None:
        session = self.sessions.get(id_sha256)
        if session is not None:
            last_seen = max(session.last_seen_at, at)  # never back in time
            self.sessions[id_sha256] = replace(session, last_seen_at=last_seen)

    async def end(self, id_sha256: str, at: int, reason: str) -> None:
        session = self.sessions.get(id_sha256)
        if session is not None and session.ended_at is None:
            self.sessions[id_sha256] = replace(session, ended_at=at, end_reason=reason)

    async def live(self, now: int) -> list[Session]:
        found = [s for s in self.sessions.values() if s.ended_at is None and now < s.expires_at]
        return sorted(found, key=lambda s: -s.created_at)

    async def record(self, event: SignInEvent) -> None:
        self.log.append(replace(event, seq=len(self.log) + 1))

    async def recent(self, scope: str, key: str, since: int) -> list[SignInEvent]:
        return [e for e in self.log if e.at >= since and _keyed(e, scope, key)]

    async def events(self, query: SignInQuery) -> tuple[list[SignInEvent], int]:
        found = [e for e in self.log if _matches(e, query)]
        return found[query.offset : query.offset + query.limit], len(found)


_SESSION_COLUMNS = (
    "id_sha256, account, generation, csrf, address, created_at, last_seen_at, expires_at, "
    "ended_at, end_reason"
)
_EVENT_COLUMNS = "seq, at, event, name, address, detail, until, scope"


class PostgresSessions:
    def __init__(self, pool: Connections, *, timeout: float = 10.0) -> None:
        self._pool, self._timeout = pool, timeout

    @contextlib.contextmanager
    def _unavailable(self) -> Iterator[None]:
        try:
            yield
        except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError) as error:
            raise JournalUnavailable(f"sessions: {error!r}") from error

    async def _execute(self, query: str, *args: Any) -> None:
        with self._unavailable():
            async with self._pool.acquire(timeout=self._timeout) as conn:
                await conn.execute(query, *args, timeout=self._timeout)

    async def _fetch(self, query: str, *args: Any) -> list[Any]:
        with self._unavailable():
            async with self._pool.acquire(timeout=self._timeout) as conn:
                rows: list[Any] = await conn.fetch(query, *args, timeout=self._timeout)
                return rows

    async def open(self, session: Session) -> None:
        await self._execute(
            f"INSERT INTO operator_sessions ({_SESSION_COLUMNS}) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            session.id_sha256, session.account, session.generation, session.csrf,
            session.address, session.created_at, session.last_seen_at, session.expires_at,
            session.ended_at, session.end_reason,
        )  # fmt: skip

    async def get(self, id_sha256: str) -> Session | None:
        rows = await self._fetch(
            f"SELECT {_SESSION_COLUMNS} FROM operator_sessions WHERE id_sha256 = $1", id_sha256
        )
        return Session(**dict(rows[0])) if rows else None

    async def touch(self, id_sha256: str, at: int) -> None:
        await self._execute(
            "UPDATE operator_sessions SET last_seen_at = GREATEST(last_seen_at, $2) "
            "WHERE id_sha256 = $1",
            id_sha256,
            at,
        )

    async def end(self, id_sha256: str, at: int, reason: str) -> None:
        await self._execute(
            "UPDATE operator_sessions SET ended_at = $2, end_reason = $3 "
            "WHERE id_sha256 = $1 AND ended_at IS NULL",
            id_sha256,
            at,
            reason,
        )

    async def live(self, now: int) -> list[Session]:
        rows = await self._fetch(
            f"SELECT {_SESSION_COLUMNS} FROM operator_sessions "
            "WHERE ended_at IS NULL AND expires_at > $1 ORDER BY created_at DESC",
            now,
        )
        return [Session(**dict(row)) for row in rows]

    async def record(self, event: SignInEvent) -> None:
        await self._execute(
            "INSERT INTO signins (at, event, name, address, detail, until, scope) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            event.at, event.event, event.name, event.address, event.detail, event.until,
            event.scope,
        )  # fmt: skip

    async def recent(self, scope: str, key: str, since: int) -> list[SignInEvent]:
        column = "name" if scope == "name" else "address"
        rows = await self._fetch(
            f"SELECT {_EVENT_COLUMNS} FROM signins WHERE {column} = $1 AND at >= $2 "
            "AND (event NOT IN ('lockout', 'unlock') OR scope = $3) ORDER BY seq",
            key,
            since,
            scope,
        )
        return [SignInEvent(**dict(row)) for row in rows]

    async def events(self, query: SignInQuery) -> tuple[list[SignInEvent], int]:
        where = "at >= $1 AND at < $2 AND ($3::text IS NULL OR name = $3) "
        where += "AND ($4::text IS NULL OR event = $4)"
        args = (query.start, query.end, query.name, query.event)
        rows = await self._fetch(
            f"SELECT {_EVENT_COLUMNS}, count(*) OVER () AS total FROM signins WHERE {where} "
            "ORDER BY seq LIMIT $5 OFFSET $6",
            *args,
            query.limit,
            query.offset,
        )
        total = rows[0]["total"] if rows else 0
        if not rows and query.offset:
            counted = await self._fetch(
                f"SELECT count(*) AS total FROM signins WHERE {where}", *args
            )
            total = counted[0]["total"]
        events = [
            SignInEvent(**{k: v for k, v in dict(row).items() if k != "total"}) for row in rows
        ]
        return events, int(total)
