"""The writer with a journal whose commits a test holds at a gate or fails, and the bodies
the routes hand it (shared by the writer's tests and the reconciliation's)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.commands import Command
from app.state.floor_state import FloorState
from app.state.timefmt import format_time
from app.store.errors import JournalUnavailable
from app.store.journal import JournalRow, MemoryJournal
from app.store.lease import Term
from app.store.snapshots import dump_text
from app.writer.ports import Broadcast
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.support import DEMO, Clock, replayed, table_command, without_tiers

NOW = 1_800_000_000_000


class GatedJournal(MemoryJournal):
    """A journal whose appends wait at a gate while it is shut, and fail when told to."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail_next = False
        self.waiting = 0  # appends held at the gate
        self.appended: list[list[str]] = []  # each successful append: its rows' keys or kinds
        self.committed: list[JournalRow] = []  # every row appended, in order
        # An append whose rows this says yes to fails (nothing written).
        self.fail_on: Callable[[Sequence[JournalRow]], bool] = lambda rows: False
        self.land_next = False  # the next append is written, then fails (lost after COMMIT)

    async def append(self, rows: Sequence[JournalRow]) -> None:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        if self.fail_next:
            self.fail_next = False
            raise JournalUnavailable("connection lost")
        if self.fail_on(rows):
            raise JournalUnavailable("connection lost")
        await super().append(rows)
        self.committed.extend(rows)
        if self.land_next:
            self.land_next = False
            raise JournalUnavailable("connection lost after COMMIT")
        self.appended.append([row.idem_key or row.kind for row in rows])


def service() -> FloorState:
    """The demo floor's state, without its must-hit-by level (tests.support.without_tiers)."""
    return FloorState(floor_config(parse_floor(without_tiers(DEMO.read_text()))))


def bets(at: int = NOW) -> Command:
    """A bets body (two boxes with the jackpot wager) as the route hands it to the writer."""
    boxes = [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in (1, 2)]
    return table_command("bets", {"closed_at": format_time(at), "boxes": boxes})


async def journal_rows(journal: MemoryJournal) -> list[JournalRow]:
    return [row async for row in journal.read(0)]


async def state_is_the_journals(writer: Writer, journal: MemoryJournal) -> None:
    rows = await journal_rows(journal)
    seq, head = (rows[-1].seq, rows[-1].hash) if rows else (0, writer.head)
    assert (writer.seq, writer.head) == (seq, head)
    assert dump_text(writer.service, seq, head) == dump_text(replayed(rows), seq, head)
    assert writer.durable_head()[0] == seq


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(2_500):  # 5 s at most: a few turns of the loop on a quiet machine
        if condition():
            return
        await asyncio.sleep(0.002)
    raise AssertionError(f"never: {what}")


class Harness:
    def __init__(
        self,
        journal: GatedJournal | None = None,
        *,
        broadcast: Broadcast | None = None,
        **settings: Any,
    ) -> None:
        """A writer on `journal` (a fresh GatedJournal), the settings given as keywords
        (`WriterSettings`'s), its clock at NOW."""
        self.journal = GatedJournal() if journal is None else journal
        self.clock = Clock()
        self.clock.now = NOW
        self.writer = Writer(
            service(),
            self.journal,
            WriterSettings(clock=self.clock, **settings),
            broadcast=broadcast,
        )

    async def __aenter__(self) -> Harness:
        await self.writer.recover()
        self.writer.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.journal.gate.set()
        await self.writer.stop()

    def applied(self, round_id: str) -> bool:
        return ("T01", round_id) in self.writer.service.floor.rounds

    def post(self, round_id: str, body: Command) -> asyncio.Task[Any]:
        return asyncio.create_task(self.writer.submit("bets", "T01", round_id, body))


def royal_flush_outcome() -> Command:
    boxes = [
        {"box": 1, "dealt_at": format_time(NOW + 5), "cards": ["AH", "KH", "QH", "JH", "TH"]},
        {"box": 2, "dealt_at": format_time(NOW + 6), "cards": ["2C", "7D", "9H", "JS", "4C"]},
    ]
    return table_command("outcome", {"boxes": boxes})


def outcome_body(
    round_cards: list[str], at: int = NOW + 10, other: list[str] | None = None
) -> Command:
    hands = [{"box": 1, "dealt_at": format_time(at), "cards": round_cards}]
    if other is not None:
        hands.append({"box": 2, "dealt_at": format_time(at + 1), "cards": other})
    return table_command("outcome", {"boxes": hands})


class NoLease:
    """Never ours: the process stays a standby."""

    lease_ms = 60_000

    async def acquire(self) -> Term | None:
        return None

    async def renew(self, epoch: int) -> bool:
        return False

    async def release(self, epoch: int) -> None:
        return None
