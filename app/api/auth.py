"""Bearer tokens, stored hashed: who is calling, and what they may do (DESIGN.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.api.problems import AuthError
from app.config.floor_file import Floor, token_hash


@dataclass(frozen=True, slots=True)
class Principal:
    kind: str  # "table", "operator" or "supervisor"
    name: str  # the table id, or the operator's name


@dataclass(frozen=True, slots=True)
class Tokens:
    by_hash: Mapping[str, Principal]

    def principal(self, authorization: str | None) -> Principal:
        if not authorization or not authorization.lower().startswith("bearer "):
            raise AuthError(401, "a bearer token is required")
        # Only hashes are stored; looking up the hash of the presented token leaks nothing
        # about other tokens.
        # Only the header's own whitespace (SP, HTAB, RFC 9110) is stripped: str.strip
        # would take U+00A0 and other Unicode spaces off the token too.
        principal = self.by_hash.get(token_hash(authorization[7:].strip(" \t")))
        if principal is None:
            raise AuthError(401, "the token is not valid")
        return principal

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
        allowed = {"operator": ("operator", "supervisor"), "supervisor": ("supervisor",)}[role]
        if principal.kind not in allowed:
            raise AuthError(403, f"this needs the {role} role")
        return principal


def floor_tokens(floor: Floor) -> Tokens:
    """The floor file's table and operator tokens (stored as their SHA-256)."""
    principals = {t.token_sha256: Principal("table", t.id) for t in floor.tables}
    for op in floor.operators:
        principals[op.token_sha256] = Principal(op.role, op.name)
    return Tokens(principals)
