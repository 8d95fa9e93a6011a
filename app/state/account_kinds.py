"""The account entries' kinds: how each is made from a request, applied to the accounts and
answered (registered in the table of kinds, app/state/kinds.py).

Every check is made in `apply`, before anything changes, so that the writer and every
replay refuse or accept an entry alike; `by` is not checked here (the routes checked the
caller's role, and the journal records who it was).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import to_builtins

from app.state.accounts import Account, AccountRole, PersonalToken, TableKey
from app.state.entries import Entry, entry_from_dict
from app.state.entries.accounts import (
    AccountCreateEntry,
    AccountDisableEntry,
    AccountEnableEntry,
    AccountGrantEntry,
    AccountPasswordEntry,
    AccountRoleEntry,
    OperatorsImportEntry,
    TableTokenEntry,
    TokenCreateEntry,
    TokenRevokeEntry,
)
from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.errors import InvalidCommandError, StateConflictError, UnknownError

ROLES = frozenset(AccountRole)


def prepare_account(service: FloorData, request: Any, now: int, rng: Any) -> Entry:
    """The command's fields (the route checked them), when and who."""
    fields = to_builtins(request.command)
    return entry_from_dict(
        {"kind": request.kind, "now": now, "by": request.by, **fields}, "request"
    )


def _audit(
    service: FloorData,
    entry: Entry,
    action: str,
    account: str,
    before: Any,
    after: Any,
    reason: str = "",
) -> None:
    """Who, when, what, before, after, why: as every operator action (docs/api.md, audit)."""
    service.audit.append({
        "id": len(service.audit) + 1, "at": entry.now, "who": getattr(entry, "by", ""),
        "action": action, "account": account, "before": before, "after": after,
        "reason": reason,
    })  # fmt: skip


def _role(role: str) -> str:
    if role not in ROLES:
        raise InvalidCommandError(f"role {role!r} is not one of {sorted(ROLES)}", ("role",))
    return role


def _active(service: FloorData, name: str) -> Account:
    account = service.accounts.account(name)
    if not account.active:
        raise StateConflictError(f"account {name} is disabled")
    return account


# -- accounts ----------------------------------------------------------------------


def apply_import(service: FloorData, entry: OperatorsImportEntry) -> Account | None:
    """The floor file's [[operators]] become accounts, once: their bearer tokens go on
    as personal tokens that never expire; they have no password until one is set."""
    accounts = service.accounts
    if accounts.held:
        raise StateConflictError("the floor file's operators were already taken over")
    for op in entry.operators:
        _role(op.role)
        if op.name in accounts.by_name:
            raise StateConflictError(f"operator {op.name!r} is listed twice")
    for op in entry.operators:
        accounts.by_name[op.name] = Account(
            name=op.name, display_name=op.name, role=op.role, created_at=entry.now,
            created_by=entry.by,
        )  # fmt: skip
        token_id = f"floor-{op.name}"
        accounts.tokens[token_id] = PersonalToken(
            id=token_id, account=op.name, name="floor file", sha256=op.token_sha256,
            created_at=entry.now, expires_at=None,
        )  # fmt: skip
    accounts.imported = True
    names = [op.name for op in entry.operators]
    _audit(service, entry, "account:import", ",".join(names), None, {"accounts": names})
    return None


def apply_create(service: FloorData, entry: AccountCreateEntry) -> Account:
    accounts = service.accounts
    if entry.name in accounts.by_name:
        raise StateConflictError(f"account {entry.name} already exists", ("name",))
    _role(entry.role)
    if entry.pending_role is not None:
        _role(entry.pending_role)
    account = Account(
        name=entry.name, display_name=entry.display_name, role=entry.role,
        password=entry.password, pending_role=entry.pending_role,
        pending_by=None if entry.pending_role is None else entry.by,
        created_at=entry.now, created_by=entry.by,
    )  # fmt: skip
    accounts.by_name[entry.name] = account
    accounts.imported = True  # the floor file's operators no longer count
    _audit(service, entry, "account:create", entry.name, None, _summary(account))
    return account


def apply_disable(service: FloorData, entry: AccountDisableEntry) -> Account:
    account = _active(service, entry.name)
    if account.role == AccountRole.supervisor:
        service.accounts.check_not_last_supervisor(entry.name, "disabling it")
    account.active = False
    account.generation += 1  # every session of the account ends
    _audit(service, entry, "account:disable", entry.name, {"active": True}, {"active": False},
           entry.reason)  # fmt: skip
    return account


def apply_enable(service: FloorData, entry: AccountEnableEntry) -> Account:
    account = service.accounts.account(entry.name)
    if account.active:
        raise StateConflictError(f"account {entry.name} is already active")
    account.active = True
    _audit(service, entry, "account:enable", entry.name, {"active": False}, {"active": True},
           entry.reason)  # fmt: skip
    return account


def apply_password(service: FloorData, entry: AccountPasswordEntry) -> Account:
    account = service.accounts.account(entry.name)
    account.password = entry.password
    account.generation += 1  # every session of the account ends
    _audit(service, entry, "account:password", entry.name, None, None)
    return account


def apply_role(service: FloorData, entry: AccountRoleEntry) -> Account:
    account = _active(service, entry.name)
    _role(entry.role)
    before = {"role": account.role}
    if entry.pending:
        # Dual control: a second supervisor approves (or either rejects) the grant.
        account.pending_role, account.pending_by = entry.role, entry.by
        _audit(service, entry, "account:grant", entry.name, before, {"pending_role": entry.role})
        return account
    if account.role == AccountRole.supervisor and entry.role != AccountRole.supervisor:
        service.accounts.check_not_last_supervisor(entry.name, "taking its role")
    account.role = entry.role
    account.pending_role = account.pending_by = None
    account.generation += 1  # sessions opened under the old role end
    _audit(service, entry, "account:role", entry.name, before, {"role": entry.role})
    return account


def apply_grant(service: FloorData, entry: AccountGrantEntry) -> Account:
    account = _active(service, entry.name)
    if account.pending_role is None:
        raise StateConflictError(f"account {entry.name} has no role grant to decide")
    if entry.approve and entry.by == account.pending_by:
        raise StateConflictError("dual control: a different supervisor must approve this grant")
    before = {"role": account.role, "pending_role": account.pending_role}
    if entry.approve:
        account.role = account.pending_role
        account.generation += 1
    account.pending_role = account.pending_by = None
    action = "account:approve" if entry.approve else "account:reject"
    _audit(service, entry, action, entry.name, before, {"role": account.role})
    return account


# -- personal tokens, tables' keys ---------------------------------------------------


def apply_token_create(service: FloorData, entry: TokenCreateEntry) -> PersonalToken:
    _active(service, entry.account)
    if entry.id in service.accounts.tokens:
        raise StateConflictError(f"token {entry.id} already exists")
    token = PersonalToken(
        id=entry.id, account=entry.account, name=entry.name, sha256=entry.sha256,
        created_at=entry.now, expires_at=entry.expires_at,
    )  # fmt: skip
    service.accounts.tokens[entry.id] = token
    after = {"token": entry.id, "name": entry.name, "expires_at": format_time(entry.expires_at)}
    _audit(service, entry, "token:create", entry.account, None, after)
    return token


def apply_token_revoke(service: FloorData, entry: TokenRevokeEntry) -> PersonalToken:
    token = service.accounts.tokens.get(entry.id)
    if token is None:
        raise UnknownError(f"no token {entry.id!r}", ("path", "token"))
    if token.revoked_at is not None:
        raise StateConflictError(f"token {entry.id} is already revoked")
    token.revoked_at = entry.now
    _audit(service, entry, "token:revoke", token.account, {"token": entry.id}, None)
    return token


def apply_table_token(service: FloorData, entry: TableTokenEntry) -> TableKey:
    # The route refused an unknown table; the replay does not ask the floor file, which
    # may no longer list it (docs/design.md: entries replay under a changed floor file).
    old = service.accounts.table_keys.get(entry.table)
    key = TableKey(
        sha256=entry.sha256,
        # None: the floor file's token is the previous one.
        previous=None if old is None else old.sha256,
        grace_until=entry.grace_until,
        changed_at=entry.now,
        changed_by=entry.by,
    )
    service.accounts.table_keys[entry.table] = key
    _audit(service, entry, "table:token", entry.table, None,
           {"grace_until": format_time(entry.grace_until)})  # fmt: skip
    return key


# -- answers ---------------------------------------------------------------------------


def _summary(account: Account) -> dict[str, Any]:
    return {"role": account.role, "active": account.active, "pending_role": account.pending_role}


def account_view(account: Account) -> dict[str, Any]:
    """An account as the API shows it: never its password's hash."""
    return {
        "name": account.name,
        "display_name": account.display_name,
        "role": account.role,
        "active": account.active,
        "pending_role": account.pending_role,
        "pending_by": account.pending_by,
        "has_password": account.password is not None,
        "created_at": format_time(account.created_at),
        "created_by": account.created_by,
    }


def token_view(token: PersonalToken) -> dict[str, Any]:
    """A personal token as listed: never the token, nor its hash."""
    return {
        "id": token.id,
        "account": token.account,
        "name": token.name,
        "created_at": format_time(token.created_at),
        "expires_at": None if token.expires_at is None else format_time(token.expires_at),
        "revoked_at": None if token.revoked_at is None else format_time(token.revoked_at),
    }


def table_key_view(table: str, key: TableKey) -> dict[str, Any]:
    return {
        "table": table,
        "grace_until": format_time(key.grace_until),
        "changed_at": format_time(key.changed_at),
        "changed_by": key.changed_by,
    }


def answer_account(service: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    if isinstance(result, Account):
        return account_view(result)
    if isinstance(result, PersonalToken):
        return token_view(result)
    if isinstance(result, TableKey):
        assert isinstance(entry, TableTokenEntry)
        return table_key_view(entry.table, result)
    return {"accounts": sorted(service.accounts.by_name)}


Apply = Callable[[FloorData, Any], Any]

# kind -> its apply; each is prepared by `prepare_account` and answered by `answer_account`.
ACCOUNT_KINDS: dict[str, Apply] = {
    "operators_import": apply_import,
    "account_create": apply_create,
    "account_disable": apply_disable,
    "account_enable": apply_enable,
    "account_password": apply_password,
    "account_role": apply_role,
    "account_grant": apply_grant,
    "token_create": apply_token_create,
    "token_revoke": apply_token_revoke,
    "table_token": apply_table_token,
}
