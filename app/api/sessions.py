"""Sign-in and the console's sessions (docs/design.md "Sign-in and sessions"): a name and
a password open a session held by its cookie; the session gate admits a request by it,
with a CSRF token and an `Origin` check for every state change; failed sign-ins are
slowed and locked out per name and per address.

The cookie's value is a random id whose sha256 alone is stored (app/store/sessions.py).
A session is valid while it is not ended, within its absolute lifetime and its idle
timeout, and its account is active in the generation it signed in with: disabling the
account, changing its password or its role ends it at once, on every writer.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any, Literal, NoReturn, Protocol

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.auth import SESSION, Principal
from app.api.passwords import Passwords
from app.api.problems import problem
from app.config.floor_file import FloorFile
from app.state.accounts import Account, Accounts
from app.store.sessions import Session, Sessions, SignInEvent

COOKIE = "jackpot_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The routes a request without a session reaches to open one: no CSRF token yet.
SIGN_IN_PATH = "/v1/signin"
# last_seen_at is written at most this often per session: the idle timeout is minutes.
TOUCH_EVERY_MS = 5_000
# A refused token is logged at most this often per name and reason.
REFUSAL_EVERY_MS = 60_000
# Sessions past their end are swept into the log this often.
SWEEP_EVERY_S = 30.0

# The session of the request (for sign-out and `GET /v1/session`), set by the gate.
CURRENT: ContextVar[Session | None] = ContextVar("jackpot_current_session", default=None)


@dataclass(frozen=True, slots=True)
class SignInPolicy:
    """The floor file's sign-in settings; `slowdown_ms` per recent failure, capped."""

    idle_ms: int = 1_800_000
    lifetime_ms: int = 43_200_000
    failures_per_name: int = 5
    failures_per_address: int = 20
    window_ms: int = 900_000
    lockout_ms: int = 900_000
    slowdown_ms: int = 250
    max_slowdown_ms: int = 3_000

    @classmethod
    def of(cls, floor: FloorFile) -> SignInPolicy:
        return cls(
            idle_ms=floor.session_idle_ms,
            lifetime_ms=floor.session_lifetime_ms,
            failures_per_name=floor.signin_failures_per_name,
            failures_per_address=floor.signin_failures_per_address,
            window_ms=floor.signin_window_ms,
            lockout_ms=floor.signin_lockout_ms,
        )


class SignInRefused(Exception):
    """401 (name or password), or 429 while locked out (`retry_after_s`)."""

    def __init__(self, status: int, detail: str, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.retry_after_s = status, detail, retry_after_s


WRONG = "the name or the password is not right"
LOCKED = "too many failed sign-ins: try again later, or ask a supervisor to lift the lockout"


def id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Opened:
    session_id: str  # the cookie's value: given once, never stored
    session: Session
    account: Account


class SignIns:
    """The sign-in desk: opens, checks and ends sessions; keeps the log and the lockouts."""

    def __init__(
        self,
        sessions: Sessions,
        accounts: Callable[[], Accounts],
        passwords: Passwords,
        policy: SignInPolicy,
        clock: Callable[[], int],
    ) -> None:
        self.sessions, self.accounts, self.passwords = sessions, accounts, passwords
        self.policy, self.clock = policy, clock
        # Counted for /metrics: sign-ins by result, lockouts by scope.
        self.results: dict[tuple[str], int] = {}
        self.lockouts: dict[tuple[str], int] = {}
        self._refusals: dict[tuple[str, str], int] = {}
        self._logging: set[asyncio.Task[None]] = set()
        # The app's loop (set when it starts): a refusal seen in a worker thread logs there.
        self.loop: asyncio.AbstractEventLoop | None = None

    def _count(self, counts: dict[tuple[str], int], label: str) -> None:
        counts[(label,)] = counts.get((label,), 0) + 1

    # -- lockouts ----------------------------------------------------------------------

    async def _standing(self, scope: str, key: str, now: int) -> tuple[int | None, int]:
        """(the end of a lockout in force, or None; failures counted towards the next)."""
        policy = self.policy
        events = await self.sessions.recent(scope, key, now - policy.window_ms - policy.lockout_ms)
        since, locked_until = now - policy.window_ms, None
        for event in events:
            if event.event == "lockout" and event.until is not None:
                locked_until = event.until
                since = max(since, event.until)
            elif event.event == "unlock" or (event.event == "signin" and scope == "name"):
                locked_until = None
                since = max(since, event.at + 1)
        if locked_until is not None and locked_until > now:
            return locked_until, 0
        failures = sum(1 for e in events if e.event == "failure" and e.at >= since)
        return None, failures

    async def _lock_if_due(self, scope: str, key: str, address: str, now: int) -> int:
        """After a failure: the failures counted, a lockout journaled in the log at the limit."""
        _, failures = await self._standing(scope, key, now)
        limit = (
            self.policy.failures_per_name if scope == "name" else self.policy.failures_per_address
        )
        if failures >= limit:
            until = now + self.policy.lockout_ms
            name = key if scope == "name" else ""
            await self.sessions.record(
                SignInEvent(
                    now, "lockout", name, address, f"{failures} failed sign-ins", until, scope
                )  # fmt: skip
            )
            self._count(self.lockouts, scope)
        return failures

    async def unlock(self, scope: str, key: str, by: str, address: str) -> None:
        name, where = (key, address) if scope == "name" else ("", key)
        await self.sessions.record(
            SignInEvent(self.clock(), "unlock", name, where, f"by {by}", None, scope)
        )

    async def locked_until(self, scope: str, key: str) -> int | None:
        return (await self._standing(scope, key, self.clock()))[0]

    # -- sign-in, sign-out ---------------------------------------------------------------

    async def sign_in(self, name: str, password: str, address: str) -> Opened:
        now = self.clock()
        for scope, key in (("name", name), ("address", address)):
            until, _ = await self._standing(scope, key, now)
            if until is not None:
                await self.sessions.record(SignInEvent(now, "failure", name, address, "locked out"))
                self._count(self.results, "locked")
                raise SignInRefused(429, LOCKED, max(1, -(-(until - now) // 1000)))
        account = self.accounts().by_name.get(name)
        stored = account.password if account is not None else None
        right = await self.passwords.verify(stored, password)
        if account is None or not right or not account.active:
            why = (
                "unknown name" if account is None
                else "no password set" if stored is None
                else "wrong password" if not right
                else "account disabled"
            )  # fmt: skip
            await self._failed(name, address, why)
        return await self._open(account, address)

    async def _failed(self, name: str, address: str, why: str) -> NoReturn:
        """The log says why; the answer never says whether the name or the password."""
        now = self.clock()
        await self.sessions.record(SignInEvent(now, "failure", name, address, why))
        self._count(self.results, "failure")
        by_name = await self._lock_if_due("name", name, address, now)
        by_address = await self._lock_if_due("address", address, address, now)
        # Slower with every recent failure (the hash itself costs tens of milliseconds).
        delay = min(self.policy.max_slowdown_ms, self.policy.slowdown_ms * max(by_name, by_address))
        await asyncio.sleep(delay / 1000)
        raise SignInRefused(401, WRONG)

    async def _open(self, account: Account, address: str) -> Opened:
        now = self.clock()
        session_id = secrets.token_urlsafe(32)
        session = Session(
            id_sha256=id_hash(session_id),
            account=account.name,
            generation=account.generation,
            csrf=secrets.token_urlsafe(32),
            address=address,
            created_at=now,
            last_seen_at=now,
            expires_at=now + self.policy.lifetime_ms,
        )
        await self.sessions.open(session)
        await self.sessions.record(SignInEvent(now, "signin", account.name, address))
        self._count(self.results, "ok")
        return Opened(session_id, session, account)

    async def sign_out(self, session: Session, address: str) -> None:
        now = self.clock()
        await self.sessions.end(session.id_sha256, now, "signout")
        await self.sessions.record(SignInEvent(now, "signout", session.account, address))

    async def end(self, session: Session, reason: str, by: str, address: str) -> None:
        """A session ended by a supervisor (or found invalid): logged as `session_end`."""
        now = self.clock()
        await self.sessions.end(session.id_sha256, now, reason)
        await self.sessions.record(
            SignInEvent(now, "session_end", session.account, address, f"{reason} ({by})")
        )

    # -- a request's session -------------------------------------------------------------

    def _why_over(self, session: Session, account: Account | None, now: int) -> str | None:
        """Why a session no longer holds, or None."""
        if now >= session.expires_at:
            return "lifetime reached"
        if now - session.last_seen_at >= self.policy.idle_ms:
            return "idle"
        if account is None or not account.active:
            return "account disabled"
        if account.generation != session.generation:
            return "password or role changed"
        return None

    async def resolve(self, session_id: str, address: str) -> tuple[Session, Account] | None:
        """The session and its account if it is valid; an invalid one is ended (once)."""
        session = await self.sessions.get(id_hash(session_id))
        if session is None or session.ended_at is not None:
            return None
        now = self.clock()
        account = self.accounts().by_name.get(session.account)
        reason = self._why_over(session, account, now)
        if reason is not None or account is None:
            await self.end(session, reason or "account disabled", "server", address)
            return None
        if now - session.last_seen_at >= TOUCH_EVERY_MS:
            await self.sessions.touch(session.id_sha256, now)
        return session, account

    async def sweep(self) -> int:
        """End (and log) every open session that no longer holds, as its next request
        would: a session that idles out is in the log at its end, not at a later request."""
        now, ended = self.clock(), 0
        accounts = self.accounts().by_name
        for session in await self.sessions.live(-(2**62)):
            reason = self._why_over(session, accounts.get(session.account), now)
            if reason is not None:
                await self.end(session, reason, "server", session.address)
                ended += 1
        return ended

    # -- tokens that no longer work ------------------------------------------------------

    def token_refused(self, name: str, detail: str) -> None:
        """A token that once worked, refused (expired, revoked, its account disabled, a
        table's replaced one past its grace): logged as `token_refused`, at most once a
        minute per name and reason (a table controller retries many times a second)."""
        now = self.clock()
        key = (name, detail)
        if now - self._refusals.get(key, -(2**62)) < REFUSAL_EVERY_MS:
            return
        self._refusals[key] = now
        record = self.sessions.record(SignInEvent(now, "token_refused", name, "", detail))
        try:
            task = asyncio.get_running_loop().create_task(record)
        except RuntimeError:  # a route's dependency, run in a worker thread
            if self.loop is None:
                record.close()
                return
            asyncio.run_coroutine_threadsafe(record, self.loop)
            return
        self._logging.add(task)
        task.add_done_callback(self._logging.discard)


def _cookie(headers: Headers) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    try:
        jar = SimpleCookie(raw)
    except CookieError:
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None and morsel.value else None


def own_origin(scope: Scope, headers: Headers) -> str:
    """This server's origin as the browser sees it: the scheme (uvicorn takes it from a
    trusted proxy's X-Forwarded-Proto) and the Host header."""
    scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"), scope["scheme"])
    return f"{scheme}://{headers.get('host', '')}"


def origin_problem(scope: Scope, headers: Headers, *, required: bool) -> str | None:
    """Why the request's Origin is refused, or None."""
    origin = headers.get("origin")
    if origin is None:
        return "a state change by a session needs the Origin header" if required else None
    if origin != own_origin(scope, headers):
        return f"origin {origin} is not this server's"
    return None


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


class SessionGate:
    """ASGI middleware: a request with the session cookie and no `Authorization` header
    is the session's account (app/api/auth.py SESSION); a state change by it needs the
    session's CSRF token in `X-CSRF-Token` and this server's `Origin` (403 otherwise)."""

    def __init__(self, app: ASGIApp, signins: SignIns) -> None:
        self.app, self.signins = app, signins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        session_id = _cookie(headers)
        if session_id is None or "authorization" in headers:
            await self.app(scope, receive, send)
            return
        resolved = await self.signins.resolve(session_id, client_address(scope))
        if resolved is None:
            await self.app(scope, receive, send)
            return
        session, account = resolved
        refusal = self._refusal(scope, headers, session)
        if refusal is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4403, "reason": refusal[:120]})
                return
            await problem(403, "Forbidden", refusal)(scope, receive, send)
            return
        principal = SESSION.set(Principal(account.role, account.name))
        current = CURRENT.set(session)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT.reset(current)
            SESSION.reset(principal)

    def _refusal(self, scope: Scope, headers: Headers, session: Session) -> str | None:
        if scope["type"] == "websocket":
            # A websocket carries the cookie from any page: only this server's (CSWSH).
            return origin_problem(scope, headers, required=True)
        # A sign-in checks its Origin itself and needs no token yet (another account may
        # sign in from a browser whose session is still open).
        if scope["method"] in SAFE_METHODS or scope["path"] == SIGN_IN_PATH:
            return None
        problem_ = origin_problem(scope, headers, required=True)
        if problem_ is not None:
            return problem_
        token = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(token.encode(), session.csrf.encode()):
            return "a state change by a session needs its CSRF token in X-CSRF-Token"
        return None


class _Readings(Protocol):
    def read(
        self,
        name: str,
        help_text: str,
        read: Callable[[], Any],
        *,
        labels: tuple[str, ...] = (),
        kind: Literal["gauge", "counter"] = "gauge",
    ) -> None: ...


def watch_signins(metrics: _Readings, signins: SignIns) -> None:
    """Sign-ins by result and lockouts by scope, read at scrape time (docs/operations.md)."""
    metrics.read(
        "jackpot_signins", "Console sign-ins by result: ok, failure, locked (refused while "
        "locked out)", lambda: dict(signins.results), labels=("result",), kind="counter",
    )  # fmt: skip
    metrics.read(
        "jackpot_signin_lockouts", "Lockouts after too many failed sign-ins, by scope: name, "
        "address", lambda: dict(signins.lockouts), labels=("scope",), kind="counter",
    )  # fmt: skip
