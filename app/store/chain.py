"""The journal's hash chain and request-body hashes (docs/journal.md): one definition for
the writer that appends rows and the auditor's replay that checks them."""

from __future__ import annotations

import hashlib
from typing import Any

from jackpot.canonical import canonical_json

GENESIS = "0" * 64  # the previous hash of entry 1


def chain_hash(previous: str, entry_text: str) -> str:
    """A row's hash: sha256(previous hash || canonical entry text)."""
    return hashlib.sha256((previous + entry_text).encode()).hexdigest()


def body_sha256(body: dict[str, Any]) -> str:
    """The sha256 of a request body's canonical JSON: a retry with another body conflicts."""
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()
