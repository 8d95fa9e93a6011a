"""Rows for the store's tests: journal rows that carry past awards, without a writer."""

from __future__ import annotations

import hashlib

from app.state.past_award import PastAward
from app.store.journal import JournalRow


def row(seq: int, *awards: PastAward) -> JournalRow:
    """A finalize row at `seq` carrying `awards` (its text and hash made up, unique a seq)."""
    text = f'{{"kind":"finalize","n":{seq}}}'
    return JournalRow(
        seq=seq,
        recorded_at_ms=1_795_000_000_000 + seq,
        kind="finalize",
        idem_key=None,
        body_sha256=None,
        entry=text,
        answer=None,
        hash=hashlib.sha256(f"{seq}:{text}".encode()).hexdigest(),
        awards=awards,
    )
