"""The commands of account changes, personal tokens and table keys: decoded at the edge
(app/api/account_routes.py), made entries by their kinds (app/state/account_kinds.py).
Their fields are their entries' besides `now` and `by`."""

from __future__ import annotations

from typing import ClassVar, TypeAlias

import msgspec


class _AccountCommand(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    kind: ClassVar[str]


class ImportedOperatorCommand(_AccountCommand, frozen=True, kw_only=True):
    name: str
    role: str
    token_sha256: str


class OperatorsImportCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "operators_import"
    operators: list[ImportedOperatorCommand]


class AccountCreateCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_create"
    name: str
    display_name: str
    role: str
    password: str | None  # its argon2id hash
    pending_role: str | None = None


class AccountDisableCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_disable"
    name: str
    reason: str


class AccountEnableCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_enable"
    name: str
    reason: str


class AccountPasswordCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_password"
    name: str
    password: str  # its argon2id hash


class AccountRoleCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_role"
    name: str
    role: str
    pending: bool = False


class AccountGrantCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "account_grant"
    name: str
    approve: bool


class TokenCreateCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "token_create"
    id: str
    account: str
    name: str
    sha256: str
    expires_at: int


class TokenRevokeCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "token_revoke"
    id: str


class TableTokenCommand(_AccountCommand, frozen=True, kw_only=True):
    kind: ClassVar[str] = "table_token"
    table: str
    sha256: str
    grace_until: int


AccountCommand: TypeAlias = (
    OperatorsImportCommand
    | AccountCreateCommand
    | AccountDisableCommand
    | AccountEnableCommand
    | AccountPasswordCommand
    | AccountRoleCommand
    | AccountGrantCommand
    | TokenCreateCommand
    | TokenRevokeCommand
    | TableTokenCommand
)
