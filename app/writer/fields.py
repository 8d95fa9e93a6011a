"""What the writer owns: the state, the chain's head, the last durable point, its groups."""

from __future__ import annotations

import asyncio
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from app.state.entries import Entry
from app.state.floor_state import Service
from app.store.journal import Journal, JournalRow
from app.writer.chain import GENESIS, next_row
from app.writer.errors import Standby, Unavailable
from app.writer.group import Group, Submission
from app.writer.ports import Broadcast, Metrics, Uncounted

# Journal lookups the HTTP handlers may run at once (the pool has 10 connections: the
# writer's commit and a snapshot's save always find one free).
LOOKUPS = 4
# First answers kept in memory for retries; older ones are read from the journal.
REMEMBERED = 100_000
# A snapshot is due once the journal's text since the base is at least this many times
# the base's own text (and `snapshot_every` entries): docs/performance.md "Snapshots".
SNAPSHOT_GROWTH = 1
# The state is frozen out of the cyclic collector every this many entries applied
# (app/writer/snapshots.py `_freeze`): docs/performance.md "The cyclic collector".
FREEZE_EVERY = 1_000


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class WriterFields:
    """The writer's fields; the steps that use them are its subclasses, one module each."""

    service: Service
    journal: Journal
    broadcast: Broadcast | None = None
    max_batch: int = 512
    snapshot_every: int = 20_000
    clock: Callable[[], int] = wall_clock_ms
    rng: random.Random = field(default_factory=random.SystemRandom)
    # Advance the watermark at least this often while events are pending, so that
    # contributions are folded into the meters and the heap stays small.
    finalize_every_ms: int = 1_000
    # The outcome answer waits this long for its pending meter awards (API.md).
    outcome_wait_s: float = 10.0

    queue: asyncio.Queue[Submission] = field(init=False)
    seq: int = 0
    head: str = GENESIS
    # Recent first answers, as the journal's text: a dict per answer (with a dict per box)
    # would be a fifth of the writer's memory, walked by every collection of old objects.
    answers: OrderedDict[str, str] = field(default_factory=OrderedDict)
    degraded: bool = False
    waiters: dict[tuple[str, str], list[asyncio.Future[None]]] = field(default_factory=dict)
    last_finalize: int = 0
    # The last durable point, to rebuild from when a commit fails: a snapshot, packed as
    # stored (b"": the empty floor), its (seq, head), and the rows committed since.
    base: bytes = b""
    base_point: tuple[int, str] = (0, GENESIS)
    since_base: list[JournalRow] = field(default_factory=list)
    # The base's JSON text in bytes and the text of the entries in `since_base`: what
    # `snapshot_due` weighs. The entries' (ASCII but for names) are counted in characters.
    base_size: int = 0
    since_base_size: int = 0
    # 0: a snapshot every `snapshot_every` entries whatever the state's size (tests that
    # need many snapshots of a growing state).
    snapshot_growth: int = SNAPSHOT_GROWTH
    freeze_every: int = FREEZE_EVERY
    frozen_at: int = 0  # the seq of the last `_freeze`
    task: asyncio.Task[None] | None = None
    # The group applied while another is being committed, the one being committed, the
    # task committing them, and what the loop waits for before it applies anything more:
    # a refused commit being sorted out (`_duplicate`), or a full gathered group.
    gathering: Group | None = None
    committing: Group | None = None
    committer: asyncio.Task[None] | None = None
    paused: asyncio.Future[None] | None = None
    room: asyncio.Future[None] | None = None  # resolved when the gathered group is taken
    getter: asyncio.Future[Submission] | None = None
    snapshot_task: asyncio.Task[None] | None = None
    stopping: bool = False
    # Another writer holds the lease (app/writer/follower.py): refuse, never record.
    standby: bool = False
    resync: bool = False  # a commit failed: check the journal's head before the next one
    stats: dict[str, int] = field(default_factory=lambda: {"batches": 0, "rows": 0, "failed": 0})
    metrics: Metrics[Any] = field(default_factory=Uncounted)
    lookups: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(LOOKUPS))
    # Awards displays were shown `pending` and no end of yet: a void of one is shown to
    # them (DESIGN.md, the watermark: "jackpot pending" ends); screens know no other.
    on_screens: set[str] = field(default_factory=set)

    def queue_depth(self) -> int:
        """Requests waiting for the writer (none before `start`)."""
        queue = getattr(self, "queue", None)  # set by `start`
        return 0 if queue is None else queue.qsize()

    def closed(self) -> Unavailable:
        """Why a request is refused now: a standby, or a writer shutting down (503)."""
        if self.standby:
            return Standby("this writer is a standby: another one leads; retry (through the proxy)")
        return Unavailable("the server is shutting down")

    def durable_head(self) -> tuple[int, str]:
        """The last committed entry's seq and hash (rows of a group being committed are
        not counted until the journal has them)."""
        if self.since_base:
            return self.since_base[-1].seq, self.since_base[-1].hash
        return self.base_point

    def snapshot_due(self) -> bool:
        """Whether to take a snapshot now. One bounds start-up's replay and costs as much
        as the state is large: after `snapshot_every` entries, it waits until the journal
        has grown by the base's size, so that a large state is snapshotted in proportion
        to the work appended (amortised, as log compaction does), a small one as before."""
        return (
            self.snapshot_task is None
            and self.seq - self.base_point[0] >= self.snapshot_every
            and self.since_base_size >= self.snapshot_growth * self.base_size
        )

    def freeze_due(self) -> bool:
        """Whether `freeze_every` entries were applied since the last freeze."""
        return self.seq - self.frozen_at >= self.freeze_every

    def _keep(self, rows: Iterable[JournalRow]) -> None:
        """Committed rows: the base's state is rebuilt with them (`since_base`)."""
        for row in rows:
            self.since_base.append(row)
            self.since_base_size += len(row.entry)

    def _row(
        self,
        entry: Entry,
        key: str | None,
        body_sha: str | None,
        answer: dict[str, Any] | None,
    ) -> JournalRow:
        """The entry's row, next in the chain; `_append` makes it the head."""
        return next_row(self.seq, self.head, entry, key, body_sha, answer)

    def _append(self, rows: list[JournalRow], row: JournalRow) -> None:
        """The row joins its group and becomes the chain's head."""
        rows.append(row)
        self.seq, self.head = row.seq, row.hash

    def _remember(self, key: str, answer: str) -> None:
        self.answers[key] = answer
        while len(self.answers) > REMEMBERED:
            self.answers.popitem(last=False)
