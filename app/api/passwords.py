"""Passwords, hashed with argon2id (argon2-cffi's recommended parameters, RFC 9106's
second recommendation), off the event loop: a hash costs tens of milliseconds and 64 MiB."""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# At least this long: a passphrase, not a PIN (docs/operations.md "Accounts").
MIN_LENGTH = 12
MAX_LENGTH = 256

# A hash nobody's password matches, to verify against when the name is unknown: a sign-in
# takes as long whether the name or the password was wrong.
_DUMMY_PASSWORD = "no account has this password"


class Passwords:
    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self.hasher = hasher or PasswordHasher()
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self.hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> bool:
        """Whether `password` is the one `stored` hashes; with None (no account, or none
        set) the same work is done and the answer is no."""
        if stored is None:
            if self._dummy is None:
                self._dummy = await self.hash(_DUMMY_PASSWORD)
            await asyncio.to_thread(self._check, self._dummy, password)
            return False
        return await asyncio.to_thread(self._check, stored, password)

    def _check(self, stored: str, password: str) -> bool:
        try:
            return self.hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False


def password_problem(password: str) -> str | None:
    """Why a new password is refused, or None."""
    if len(password) < MIN_LENGTH:
        return f"must be at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    if password.strip() != password or not password.strip():
        return "must not start or end with spaces"
    return None
