"""The accounts' entries: operator accounts, their personal tokens and the tables' keys
(docs/journal.md "Account entries"). A password is its argon2id hash, never the password;
a token is its sha256, never the token (docs/design.md "Accounts")."""

from __future__ import annotations

from typing import ClassVar, TypeAlias

from app.state.entries.base import Base, Part


class ImportedOperator(Part, frozen=True):
    """One of the floor file's [[operators]] as it was taken over."""

    name: str
    role: str
    token_sha256: str


class OperatorsImportEntry(Base, tag="operators_import", kw_only=True, frozen=True):
    kind: ClassVar[str] = "operators_import"
    by: str
    operators: list[ImportedOperator]


class AccountCreateEntry(Base, tag="account_create", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_create"
    by: str
    name: str
    display_name: str
    role: str
    password: str | None
    # With dual control, a supervisor created by a supervisor starts as an operator with
    # the supervisor role pending a second supervisor's approval (`account_grant`).
    pending_role: str | None


class AccountDisableEntry(Base, tag="account_disable", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_disable"
    by: str
    name: str
    reason: str


class AccountEnableEntry(Base, tag="account_enable", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_enable"
    by: str
    name: str
    reason: str


class AccountPasswordEntry(Base, tag="account_password", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_password"
    by: str
    name: str
    password: str


class AccountRoleEntry(Base, tag="account_role", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_role"
    by: str
    name: str
    role: str
    pending: bool  # dual control: granted by `by`, applied once another approves


class AccountGrantEntry(Base, tag="account_grant", kw_only=True, frozen=True):
    kind: ClassVar[str] = "account_grant"
    by: str
    name: str
    approve: bool


class TokenCreateEntry(Base, tag="token_create", kw_only=True, frozen=True):
    kind: ClassVar[str] = "token_create"
    by: str
    id: str
    account: str
    name: str
    sha256: str
    expires_at: int


class TokenRevokeEntry(Base, tag="token_revoke", kw_only=True, frozen=True):
    kind: ClassVar[str] = "token_revoke"
    by: str
    id: str


class TableTokenEntry(Base, tag="table_token", kw_only=True, frozen=True):
    kind: ClassVar[str] = "table_token"
    by: str
    table: str
    sha256: str
    grace_until: int  # the table's previous token works until then


AccountEntry: TypeAlias = (
    OperatorsImportEntry
    | AccountCreateEntry
    | AccountDisableEntry
    | AccountEnableEntry
    | AccountPasswordEntry
    | AccountRoleEntry
    | AccountGrantEntry
    | TokenCreateEntry
    | TokenRevokeEntry
    | TableTokenEntry
)
