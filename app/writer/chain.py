"""The writer's journal rows, chained by app/store/chain.py's hash (one definition for the
writer and the auditor)."""

from __future__ import annotations

from typing import Any

from app.state.entries import Entry, entry_text
from app.store.chain import GENESIS, body_sha256, chain_hash
from app.store.journal import JournalRow
from jackpot.snapshot import canonical_json, loads_exact

__all__ = ["GENESIS", "body_sha", "loads", "next_row"]


def next_row(
    seq: int,
    head: str,
    entry: Entry,
    key: str | None,
    body_sha: str | None,
    answer: dict[str, Any] | None,
) -> JournalRow:
    """The entry's row after (seq, head); the caller makes it the head."""
    # Hash chain (issue 9): each row's hash covers the previous hash and its entry.
    text = entry_text(entry)  # written once, from the typed entry (the hot path: bets)
    return JournalRow(
        seq=seq + 1,
        recorded_at_ms=entry.now,
        kind=entry.kind,
        idem_key=key,
        body_sha256=body_sha,
        entry=text,
        answer=None if answer is None else canonical_json(answer),
        hash=chain_hash(head, text),
    )


def body_sha(body: dict[str, Any]) -> str:
    """The request body's hash: a retry with another body is a 409."""
    return body_sha256(body)


def loads(text: str, what: str = "a recorded answer") -> dict[str, Any]:
    # Exact for every integer: orjson alone reads one beyond 64 bits as a float.
    data: dict[str, Any] = loads_exact(text, what)
    return data
