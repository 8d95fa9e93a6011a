"""Account changes as the routes and the server's local command make them: the floor file's
operators taken over first (once), passwords hashed off the writer, dual control decided,
each change one journal entry through the writer (docs/design.md "Accounts")."""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass
from typing import Any

from app.api.auth import Tokens, token_hash
from app.api.passwords import Passwords
from app.state.account_commands import (
    AccountCommand,
    AccountCreateCommand,
    AccountDisableCommand,
    AccountEnableCommand,
    AccountGrantCommand,
    AccountPasswordCommand,
    AccountRoleCommand,
    ImportedOperatorCommand,
    OperatorsImportCommand,
    TableTokenCommand,
    TokenCreateCommand,
    TokenRevokeCommand,
)
from app.state.accounts import AccountRole
from app.writer.writer import Writer
from jackpot.errors import StateConflictError

# Tokens say what they are to whoever finds one in a script or a log.
TOKEN_PREFIX = "jpt_"
TABLE_TOKEN_PREFIX = "jptable_"

# `by` of a change made with `jackpot operators ...` on the server's machine.
LOCAL = "local"


DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class NewToken:
    """A token made now: `token` is shown once, only its sha256 is kept."""

    token: str
    answer: dict[str, Any]


class AccountChanges:
    def __init__(
        self,
        writer: Writer,
        tokens: Tokens,
        passwords: Passwords,
        table_token_grace_ms: int = 3_600_000,
    ) -> None:
        self.writer, self.tokens, self.passwords = writer, tokens, passwords
        self.table_token_grace_ms = table_token_grace_ms

    async def submit(self, command: AccountCommand, by: str) -> tuple[int, dict[str, Any]]:
        await self.take_over_floor_operators(by)
        return await self.writer.submit(command.kind, None, None, command, by=by)

    async def take_over_floor_operators(self, by: str) -> None:
        """Before the first account change, the floor file's [[operators]] become
        accounts: one entry, once; the tokens they hold go on working."""
        operators = [
            ImportedOperatorCommand(name=name, role=role, token_sha256=digest)
            for name, role, digest in self.tokens.floor_operators()
        ]
        if self.writer.service.accounts.held or not operators:
            return
        # Another request may have taken them over first: then this one is refused.
        with contextlib.suppress(StateConflictError):
            await self.writer.submit(
                "operators_import", None, None, OperatorsImportCommand(operators=operators), by=by
            )

    def _dual(self, by: str, role: str) -> bool:
        """Whether granting `role` waits for a second supervisor: with dual control, a
        supervisor granted by a supervisor. The server's machine grants it at once (the
        first supervisors come from there, as the floor file's did)."""
        return (
            role == AccountRole.supervisor
            and by != LOCAL
            and self.writer.service.config.dual_control
        )

    async def create(
        self, by: str, name: str, display_name: str, role: str, password: str
    ) -> dict[str, Any]:
        digest = await self.passwords.hash(password)
        pending = self._dual(by, role)
        command = AccountCreateCommand(
            name=name,
            display_name=display_name,
            role=AccountRole.operator if pending else role,
            password=digest,
            pending_role=role if pending else None,
        )
        return (await self.submit(command, by))[1]

    async def disable(self, by: str, name: str, reason: str) -> dict[str, Any]:
        return (await self.submit(AccountDisableCommand(name=name, reason=reason), by))[1]

    async def enable(self, by: str, name: str, reason: str) -> dict[str, Any]:
        return (await self.submit(AccountEnableCommand(name=name, reason=reason), by))[1]

    async def set_password(self, by: str, name: str, password: str) -> dict[str, Any]:
        self.writer.service.accounts.account(name)  # 404 before the hash's work
        digest = await self.passwords.hash(password)
        return (await self.submit(AccountPasswordCommand(name=name, password=digest), by))[1]

    async def set_role(self, by: str, name: str, role: str) -> tuple[int, dict[str, Any]]:
        """The answer, 202 when the grant waits for a second supervisor."""
        pending = self._dual(by, role)
        _, answer = await self.submit(AccountRoleCommand(name=name, role=role, pending=pending), by)
        return (202 if pending else 200), answer

    async def decide(self, by: str, name: str, approve: bool) -> dict[str, Any]:
        return (await self.submit(AccountGrantCommand(name=name, approve=approve), by))[1]

    # -- tokens ------------------------------------------------------------------------

    async def create_token(self, by: str, account: str, name: str, days: int) -> NewToken:
        """A personal token of `account` for scripts: it acts with the account's role."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        command = TokenCreateCommand(
            id=f"tok-{secrets.token_hex(6)}",
            account=account,
            name=name,
            sha256=token_hash(token),
            expires_at=self.writer.clock() + days * DAY_MS,
        )
        return NewToken(token, (await self.submit(command, by))[1])

    async def revoke_token(self, by: str, token_id: str) -> dict[str, Any]:
        return (await self.submit(TokenRevokeCommand(id=token_id), by))[1]

    async def new_table_token(self, by: str, table: str) -> NewToken:
        """The table's token from now on; its previous one works for the grace period."""
        self.writer.service.table(table)  # 404 before anything is made
        token = TABLE_TOKEN_PREFIX + secrets.token_urlsafe(32)
        command = TableTokenCommand(
            table=table,
            sha256=token_hash(token),
            grace_until=self.writer.clock() + self.table_token_grace_ms,
        )
        return NewToken(token, (await self.submit(command, by))[1])
