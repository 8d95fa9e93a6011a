"""Who is calling, and what they may do (docs/design.md "Who may do what"): a bearer token
(stored hashed: the floor file's, a personal token, a table's key set at run time) or the
console's session cookie, checked by app/api/sessions.py before the route runs."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

from app.api.problems import AuthError
from app.config.floor_file import FloorFile
from app.state.accounts import Accounts
from app.state.timefmt import wall_clock_ms


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str  # "table", "operator", "supervisor" or "auditor"
    name: str  # the table id, or the operator's name


# The principal of the request's session cookie (app/api/sessions.py), when it has no
# bearer token: set for the request's task by the session middleware.
SESSION: ContextVar[Principal | None] = ContextVar("jackpot_session", default=None)

# Which principals each role check admits: an auditor reads what operators read, and the
# sign-in log, but changes nothing.
ADMITS: Mapping[str, tuple[str, ...]] = {
    "operator": ("operator", "supervisor", "auditor"),
    "supervisor": ("supervisor",),
    "auditor": ("supervisor", "auditor"),
}

NO_ACCOUNTS = Accounts()


def token_hash(token: str) -> str:
    """What is stored of a bearer token (the floor file's, an account's): its SHA-256,
    never the token in clear."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Tokens:
    """The floor file's tokens (`by_hash`) and the live accounts (`accounts`: the writer's
    state, which the journal rebuilds): once accounts are held, they alone name the
    operators; a table's key set at run time replaces its floor file token after a grace."""

    by_hash: Mapping[str, Principal]
    accounts: Callable[[], Accounts] = field(default=lambda: NO_ACCOUNTS)
    clock: Callable[[], int] = wall_clock_ms
    # Told (name, why) of a token that once worked and no longer does (the sign-in log).
    refused: list[Callable[[str, str], None]] = field(default_factory=list)

    def _refuse(self, name: str, why: str) -> None:
        for tell in self.refused:
            tell(name, why)

    def principal(self, authorization: str | None) -> Principal:
        if not authorization or not authorization.lower().startswith("bearer "):
            session = SESSION.get()
            if session is not None and authorization is None:
                return session
            raise AuthError(401, "a bearer token is required")
        # Only hashes are stored; looking up the hash of the presented token leaks nothing
        # about other tokens.
        # Only the header's own whitespace (SP, HTAB, RFC 9110) is stripped: str.strip
        # would take U+00A0 and other Unicode spaces off the token too.
        principal = self.by_token_hash(token_hash(authorization[7:].strip(" \t")))
        if principal is None:
            raise AuthError(401, "the token is not valid")
        return principal

    def by_token_hash(self, digest: str) -> Principal | None:
        accounts = self.accounts()
        found = self.by_hash.get(digest)
        if found is not None and found.kind == "table":
            if self._floor_key_valid(accounts, found.name):
                return found
            self._refuse(found.name, "the table's floor file token, replaced, past its grace")
            return None
        if accounts.empty():
            return found
        if found is not None and not accounts.held:
            return found  # the floor file's operators, until accounts are held
        return self._run_time_token(accounts, digest)

    def _floor_key_valid(self, accounts: Accounts, table: str) -> bool:
        """A table's floor file token, unless a key set since has outlived its grace."""
        key = accounts.table_keys.get(table)
        return key is None or (key.previous is None and self.clock() < key.grace_until)

    def _run_time_token(self, accounts: Accounts, digest: str) -> Principal | None:
        now = self.clock()
        for table, key in accounts.table_keys.items():
            if key.sha256 == digest:
                return Principal("table", table)
            if key.previous == digest and key.previous is not None:
                if now < key.grace_until:
                    return Principal("table", table)
                self._refuse(table, "the table's replaced token, past its grace")
                return None
        for token in accounts.tokens.values():
            if token.sha256 != digest:
                continue
            account = accounts.by_name.get(token.account)
            why = (
                "its account is disabled" if account is None or not account.active
                else "revoked" if token.revoked_at is not None
                else "expired" if token.expires_at is not None and now >= token.expires_at
                else None
            )  # fmt: skip
            if why is not None or account is None:
                self._refuse(token.account, f"personal token {token.id} ({token.name}): {why}")
                return None
            return Principal(account.role, account.name)
        return None

    def table(self, authorization: str | None, table: str) -> Principal:
        """A table controller may post events for its own table only."""
        return self.allow_table(self.principal(authorization), table)

    def allow_table(self, principal: Principal, table: str) -> Principal:
        if principal.kind != "table":
            raise AuthError(403, "only a table controller may post round events")
        if principal.name != table:
            raise AuthError(403, f"this token is for table {principal.name}, not {table}")
        return principal

    def reader(self, authorization: str | None, table: str | None = None) -> Principal:
        """Operators read everything; a table reads its own rounds."""
        principal = self.principal(authorization)
        if principal.kind == "table" and principal.name != table:
            raise AuthError(403, "a table controller may read its own rounds only")
        return principal

    def role(self, authorization: str | None, role: str) -> Principal:
        principal = self.principal(authorization)
        if principal.kind not in ADMITS[role]:
            raise AuthError(403, f"this needs the {role} role")
        return principal

    def floor_operators(self) -> list[tuple[str, str, str]]:
        """The floor file's operators as (name, role, token sha256), by name."""
        return sorted(
            (p.name, p.kind, digest) for digest, p in self.by_hash.items() if p.kind != "table"
        )


def floor_tokens(
    floor: FloorFile,
    accounts: Callable[[], Accounts] | None = None,
    clock: Callable[[], int] = wall_clock_ms,
) -> Tokens:
    """The floor file's table and operator tokens (stored as their SHA-256), and the
    accounts the journal holds (`accounts`: None, none); `clock` judges expiries."""
    principals = {t.token_sha256: Principal("table", t.id) for t in floor.tables}
    for op in floor.operators:
        principals[op.token_sha256] = Principal(op.role, op.name)
    if accounts is None:
        return Tokens(principals)
    return Tokens(principals, accounts, clock)
