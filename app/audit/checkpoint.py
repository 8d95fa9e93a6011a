"""Checkpoints: where a clean run of `jackpot verify` left the journal verified, and the
stored snapshots a run starts from or checks its replay against (docs/journal.md)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from app.config.floor_file import SHA256_RE
from app.store.journal import JournalSource


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a clean run left the journal verified: entry `seq`, its chained hash `head`,
    and the sha256 of the snapshot stored after it, which that run's replay arrived at
    byte for byte. The next run may start there (`jackpot verify --since`) and replay
    only the entries after it: the head commits to every entry up to `seq` (changing
    one changes every hash after it), the sha256 to the state. An auditor keeps the
    line, as they keep the head hash (docs/journal.md, "Checkpoints")."""

    seq: int
    head: str
    snapshot_sha256: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.head}:{self.snapshot_sha256}"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        parts = text.strip().split(":")
        if (
            len(parts) != 3
            or not parts[0].isdigit()
            or int(parts[0]) < 1
            or not all(SHA256_RE.fullmatch(p) for p in parts[1:])
        ):
            raise ValueError(
                f"{text!r} is not a checkpoint: SEQ:HEAD:SNAPSHOT_SHA256 as a clean run of "
                "`jackpot verify` prints it (a seq from 1, two sha256 in lower-case hex)"
            )
        return cls(int(parts[0]), parts[1], parts[2])


def snapshot_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def stored_snapshot(journal: JournalSource, seq: int) -> str | None:
    """The snapshot stored after entry `seq`; one that cannot even be unpacked comes back
    as its error's text, which is no JSON: the checks name it (unreadable, sha256)."""
    try:
        return await journal.snapshot_at(seq)
    except ValueError as error:
        return f"({error})"
