"""Checks of the chain as it is read back: every entry follows its predecessor (the next
seq, its hash chained from the predecessor's), and a snapshot is the state after the
journal's entry at its seq. What recovery and a standby trust nothing without."""

from __future__ import annotations

from app.store.errors import BrokenChain
from app.store.journal import JournalRow, JournalSource, chain_hash


def check_follows(seq: int, head: str, row: JournalRow) -> None:
    """`row` must be entry `seq + 1`, its hash chained from `head`; else BrokenChain
    naming it."""
    if row.seq != seq + 1:
        raise BrokenChain(
            f"journal entry {row.seq} follows entry {seq}: entries {seq + 1} to {row.seq - 1}"
            " are missing",
            seq=row.seq,
        )
    if row.hash != chain_hash(head, row.entry):
        raise BrokenChain(
            f"journal entry {row.seq}: its hash {row.hash} does not chain from entry {seq}'s"
            f" {head} (the entry or its predecessor was changed)",
            seq=row.seq,
        )


async def check_base(journal: JournalSource, seq: int, head: str) -> None:
    """A snapshot at `seq` with chain head `head`: the journal must hold entry `seq` with
    that hash (a snapshot beyond the journal, or of another history, is refused)."""
    if seq == 0:
        return
    async for row in journal.read(seq - 1, batch=1):
        if row.seq == seq and row.hash == head:
            return
        break
    raise BrokenChain(
        f"the snapshot at seq {seq} (head {head}) is not the state after the journal's entry"
        f" {seq}: the journal does not hold that entry with that hash",
        seq=seq,
    )
