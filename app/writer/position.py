"""Where the writer stands: the state it applies entries to, the journal chain's head, and
the last durable point to rebuild the state from (a snapshot and the rows committed since)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from app.state.entries import Entry, entry_from_dict, entry_text
from app.state.floor_state import FloorConfig, FloorState
from app.store.continuity import check_follows
from app.store.journal import GENESIS, JournalRow, chain_hash
from app.store.packing import unpack_bytes
from app.store.snapshots import load_service, text_size
from jackpot.canonical import canonical_json, loads_exact

# First answers kept in memory for retries; older ones are read from the journal.
REMEMBERED = 100_000


@dataclass(slots=True)
class Position:
    """The state and its place in the chain; `restore` takes both back to the durable point."""

    service: FloorState
    seq: int = 0
    head: str = GENESIS
    # The last durable point: a snapshot, packed as stored (b"": the empty floor), its
    # (seq, head), and the rows committed since.
    base: bytes = b""
    base_point: tuple[int, str] = (0, GENESIS)
    since_base: list[JournalRow] = field(default_factory=list)
    # The base's JSON text in bytes and the text of the entries in `since_base`: what
    # `snapshot_due` weighs. The entries' (ASCII but for names) are counted in characters.
    base_size: int = 0
    since_base_size: int = 0
    # Recent first answers, as the journal's text: a dict per answer (with a dict per box)
    # would be a fifth of the writer's memory, walked by every collection of old objects.
    answers: OrderedDict[str, str] = field(default_factory=OrderedDict)
    # The floor file's configuration: what a journal without recorded parameters (or
    # before its first `config` entry) is replayed under; the entries say the rest.
    initial: FloorConfig | None = None

    def __post_init__(self) -> None:
        if self.initial is None:
            self.initial = self.service.config

    def durable_head(self) -> tuple[int, str]:
        """The last committed entry's seq and hash (rows of a group being committed are
        not counted until the journal has them)."""
        if self.since_base:
            return self.since_base[-1].seq, self.since_base[-1].hash
        return self.base_point

    def row(
        self,
        entry: Entry,
        key: str | None,
        body_sha: str | None,
        answer: dict[str, Any] | None,
    ) -> JournalRow:
        """The entry's row, next in the chain; `append` makes it the head."""
        return next_row(self.seq, self.head, entry, key, body_sha, answer)

    def append(self, rows: list[JournalRow], row: JournalRow) -> None:
        """The row joins its group and becomes the chain's head, with the awards its
        entry made leave memory: written in the same transaction (app/state/past_awards.py)."""
        leaving, self.service.leaving = self.service.leaving, []
        rows.append(replace(row, awards=tuple(leaving)) if leaving else row)
        self.seq, self.head = row.seq, row.hash

    def keep(self, rows: Iterable[JournalRow]) -> None:
        """Committed rows: the base's state is rebuilt with them (`since_base`)."""
        for row in rows:
            self.since_base.append(replace(row, awards=()) if row.awards else row)
            self.since_base_size += len(row.entry)

    def remember(self, key: str, answer: str) -> None:
        self.answers[key] = answer
        while len(self.answers) > REMEMBERED:
            self.answers.popitem(last=False)

    def start_from(self, packed: bytes) -> None:
        """The stored snapshot (b"": none) is the base, with no rows since; `restore` next."""
        self.base, self.since_base, self.since_base_size = packed, [], 0

    def rebase(self, packed: bytes, seq: int, head: str, size: int) -> None:
        """The snapshot at `seq`, of `size` bytes of text, is the new base: keep only the
        rows committed after it."""
        self.base, self.base_point, self.base_size = packed, (seq, head), size
        self.since_base = [row for row in self.since_base if row.seq > seq]
        self.since_base_size = sum(len(row.entry) for row in self.since_base)

    def restore(self) -> None:
        """The state rebuilt from the base and the rows committed since."""
        text = unpack_bytes(self.base, self.base_point[0]) if self.base else ""
        self.base_size = text_size(text)  # the next snapshot waits for as much (`snapshot_due`)
        state: dict[str, Any] = (
            loads(text, f"snapshot {self.base_point[0]}") if text else {"seq": 0, "head": GENESIS}
        )
        self.service = load_service(self.initial, state)
        self.seq, self.head = state["seq"], state["head"]
        self.base_point = (self.seq, self.head)
        for row in self.since_base:
            self.replay(row)

    def replay(self, row: JournalRow) -> object:
        """Apply a journal row's entry, as recorded, once it follows the head in the
        chain (BrokenChain if not); it becomes the head."""
        check_follows(self.seq, self.head, row)
        where = f"journal entry {row.seq}"
        result = self.service.apply(entry_from_dict(loads(row.entry, where), where))
        if row.idem_key is not None and row.body_sha256 is not None:
            self.service.idem[row.idem_key] = row.body_sha256
        self.seq, self.head = row.seq, row.hash
        return result


def next_row(
    seq: int,
    head: str,
    entry: Entry,
    key: str | None,
    body_sha: str | None,
    answer: dict[str, Any] | None,
) -> JournalRow:
    """The entry's row after (seq, head), chained by app/store/journal.py's hash (one
    definition for the writer and the auditor); the caller makes it the head."""
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


def loads(text: str, what: str = "a recorded answer") -> dict[str, Any]:
    # Exact for every integer: orjson alone reads one beyond 64 bits as a float.
    data: dict[str, Any] = loads_exact(text, what)
    return data
