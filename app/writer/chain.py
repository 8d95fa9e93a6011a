"""Journal rows and their hash chain; the body hash that idempotency keys are checked with."""

from __future__ import annotations

import hashlib
from typing import Any

from app.store.journal import JournalRow
from jackpot.snapshot import canonical_json, loads_exact

GENESIS = "0" * 64


def next_row(
    seq: int,
    head: str,
    entry: dict[str, Any],
    key: str | None,
    body_sha: str | None,
    answer: dict[str, Any] | None,
) -> JournalRow:
    """The entry's row after (seq, head); the caller makes it the head."""
    # Hash chain (issue 9): each row's hash covers the previous hash and its entry.
    text = canonical_json(entry)
    return JournalRow(
        seq=seq + 1,
        recorded_at_ms=entry["now"],
        kind=entry["kind"],
        idem_key=key,
        body_sha256=body_sha,
        entry=text,
        answer=None if answer is None else canonical_json(answer),
        hash=hashlib.sha256((head + text).encode()).hexdigest(),
    )


def body_sha(body: dict[str, Any]) -> str:
    """The request body's hash: a retry with another body is a 409."""
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def loads(text: str, what: str = "a recorded answer") -> dict[str, Any]:
    # Exact for every integer: orjson alone reads one beyond 64 bits as a float.
    data: dict[str, Any] = loads_exact(text, what)
    return data
