"""Operator accounts as the journal leaves them: who may sign in, with which role, and the
credentials that act for them (docs/design.md "Accounts").

Every change is an entry (app/state/entries/accounts.py) applied here by its kind
(app/state/account_kinds.py); recovery, the standby and `jackpot verify` rebuild the same
accounts from the journal alone. A refusal (unknown account, the last supervisor) raises
before anything changes.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from jackpot.errors import StateConflictError, UnknownError


class AccountRole(StrEnum):
    operator = "operator"  # reads the floor, reports
    supervisor = "supervisor"  # changes meters, manages accounts and table keys
    auditor = "auditor"  # reads reports, the audit log, the journal and the sign-in log


class Account(msgspec.Struct, kw_only=True):
    name: str
    display_name: str
    role: str
    active: bool = True
    # An argon2id hash in its PHC string form ("$argon2id$v=19$..."); None: this account
    # signs in with tokens only (imported from the floor file) until one is set.
    password: str | None = None
    # Incremented whenever every session of the account must end (disabled, password
    # changed): a session remembers the generation it was opened in.
    generation: int = 0
    # With dual control, a supervisor role granted by one supervisor and not yet
    # approved by another: the grant and who made it.
    pending_role: str | None = None
    pending_by: str | None = None
    created_at: int = 0
    created_by: str = ""


class PersonalToken(msgspec.Struct, kw_only=True):
    """A token an operator made for scripts: it acts with its account's current role."""

    id: str
    account: str
    name: str
    sha256: str
    created_at: int
    expires_at: int | None  # None: never (a floor file's token, taken over)
    revoked_at: int | None = None


class TableKey(msgspec.Struct, kw_only=True):
    """A table's token set at run time: the previous one works until `grace_until`."""

    sha256: str
    previous: str | None
    grace_until: int
    changed_at: int
    changed_by: str


class Accounts(msgspec.Struct, kw_only=True):
    by_name: dict[str, Account] = msgspec.field(default_factory=dict)
    tokens: dict[str, PersonalToken] = msgspec.field(default_factory=dict)
    table_keys: dict[str, TableKey] = msgspec.field(default_factory=dict)
    # Whether the floor file's [[operators]] were taken over (once, before the first
    # account change): from then on the accounts alone say who is an operator.
    imported: bool = False

    def empty(self) -> bool:
        return not (self.by_name or self.tokens or self.table_keys or self.imported)

    @property
    def held(self) -> bool:
        """Whether accounts, not the floor file, say who the operators are."""
        return self.imported or bool(self.by_name)

    def account(self, name: str) -> Account:
        account = self.by_name.get(name)
        if account is None:
            raise UnknownError(f"no account {name!r}", ("path", "name"))
        return account

    def active_supervisors(self) -> list[str]:
        return sorted(
            a.name for a in self.by_name.values() if a.active and a.role == AccountRole.supervisor
        )

    def check_not_last_supervisor(self, name: str, what: str) -> None:
        """docs/design.md "Accounts": the floor always keeps an active supervisor."""
        if self.active_supervisors() == [name]:
            raise StateConflictError(
                f"{name} is the last active supervisor: {what} would leave the floor with "
                "none; make another supervisor first"
            )


def dump_accounts(accounts: Accounts) -> dict[str, object]:
    data: dict[str, object] = msgspec.to_builtins(accounts)
    return data


def load_accounts(data: object) -> Accounts:
    if data is None:
        return Accounts()
    return msgspec.convert(data, Accounts, strict=True)
