"""The reconciliation: from snapshots and the entries after them, away from the writer's
event loop, one at a time, kept by period and journal head."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from app.api.schemas import CorrectionRequest
from app.audit.reconciliation import Reports, reconciliation
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.commands import VoidCommand
from app.state.floor_state import FloorConfig, FloorState
from app.store.journal import JournalRow, MemoryJournal
from app.store.packing import pack
from app.store.snapshots import dump_text
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from jackpot.reconcile import Ledger, reconcile
from tests.integration.app.writer.support import NOW, bets, outcome_body
from tests.support import DEMO, Clock, replayed, without_tiers

ROYAL = ["AH", "KH", "QH", "JH", "TH"]
UNBOUNDED = 2**62


def config() -> FloorConfig:
    """The demo floor's, without its must-hit-by level (as tests.support.replayed's)."""
    return floor_config(parse_floor(without_tiers(DEMO.read_text())))


def full_replay(rows: list[JournalRow], start: int, end: int) -> dict[tuple[str, str], Any]:
    """The reference: every entry from the first, as the report was computed before."""
    service = FloorState(config())
    opening = None
    for row in rows:
        if row.recorded_at_ms >= end:
            break
        if opening is None and row.recorded_at_ms >= start:
            opening = ledgers(service)
        service.apply(json.loads(row.entry))
    closing = ledgers(service)
    opening = opening or closing
    return {key: reconcile(opening[key], closing[key]) for key in closing}


def ledgers(service: FloorState) -> dict[tuple[str, str], Ledger]:
    return {
        (link.id, c.id): Ledger.of(m)
        for link in service.floor.links.values()
        for m, c in zip(link.meters, link.config.meters, strict=True)
    }


async def played() -> tuple[MemoryJournal, list[JournalRow]]:
    """A journal of bets, a royal flush (a meter won and reset), more bets, a void and a
    correction, one entry time apart from the next."""
    journal = MemoryJournal()
    clock = Clock()
    clock.now = NOW
    writer = Writer(FloorState(config()), journal, WriterSettings(clock=clock))
    await writer.recover()
    writer.start()
    try:
        for n in range(6):
            clock.now += 1_000
            await writer.submit("bets", "T01", f"R{n}", bets(clock.now))
            clock.now += 500
            cards = ROYAL if n == 2 else ["3S", "8H", "9D", "JC", "KS"]
            hands = outcome_body(cards, clock.now - 100, ["2S", "7D", "9C", "JS", "KD"])
            await writer.submit("outcome", "T01", f"R{n}", hands)
        clock.now += 5_000
        for n in range(6, 10):
            clock.now += 1_000
            await writer.submit("bets", "T01", f"R{n}", bets(clock.now))
        clock.now += 1_000
        await writer.submit("void", "T01", "R9", VoidCommand("misdeal (5.8)"))
        clock.now += 1_000
        change = CorrectionRequest(
            kind="adjust", amount="-0.07", reason="dispute", reason_code="error_correction"
        )
        await writer.submit("correct", None, None, change.command("stud", "major"), by="sam")
    finally:
        await writer.stop()
    return journal, [row async for row in journal.read(0)]


async def snapshot_every(journal: MemoryJournal, rows: list[JournalRow], every: int) -> None:
    for row in rows[every - 1 :: every]:
        state = replayed(rows[: row.seq])
        await journal.save_snapshot(
            row.seq, row.recorded_at_ms, pack(dump_text(state, row.seq, row.hash))
        )


class Reads(MemoryJournal):
    """Records where each read starts, and in which process it runs."""

    def __init__(self, pids: Path | None = None) -> None:
        super().__init__()
        self.starts: list[int] = []
        self.pids = pids

    async def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        self.starts.append(after_seq)
        if self.pids is not None:
            with self.pids.open("a") as out:
                out.write(f"{os.getpid()}\n")
        async for row in super().read(after_seq, batch):
            yield row


J = TypeVar("J", bound=MemoryJournal)


async def copy(rows: list[JournalRow], journal: J) -> J:
    await journal.append(rows)
    return journal


async def test_from_snapshots_the_report_is_the_full_replays_for_every_period() -> None:
    """Every period bounded at, between, before and after entries: the same figures as
    replaying the whole journal, with snapshots every 3 entries."""
    journal, rows = await played()
    assert len(rows) > 12 and any(r.kind == "void" for r in rows)
    await snapshot_every(journal, rows, 3)
    times = sorted({r.recorded_at_ms for r in rows})
    bounds = [-UNBOUNDED, times[0] - 1, *times[::2], *(t + 1 for t in times[1::3]), UNBOUNDED]
    periods = [(a, b) for a in bounds for b in bounds if a < b]
    assert len(periods) > 50
    whole, _ = await reconciliation(journal, config(), -UNBOUNDED, UNBOUNDED)
    major = next(m for m in whole["meters"] if (m["link"], m["meter"]) == ("stud", "major"))
    assert major["awards"] != "0.00" and major["corrections"] == "-0.07"  # all kinds of flow
    for start, end in periods:
        report, closed = await reconciliation(journal, config(), start, end)
        expected = full_replay(rows, start, end)
        for row in report["meters"]:
            want = expected[(row["link"], row["meter"])]
            assert row["balanced"] is True
            for name, value in row["exact"].items():
                assert value == f"{getattr(want, name) / 1_000_000:.6f}", (start, end, name)
        assert closed == any(r.recorded_at_ms >= end for r in rows)
        last = [r for r in rows if r.recorded_at_ms < end]
        assert report["journal"]["seq"] == (last[-1].seq if last else 0)


async def test_a_period_after_a_snapshot_reads_only_the_entries_after_it() -> None:
    journal, rows = await played()
    reads = await copy(rows, Reads())
    await snapshot_every(reads, rows, 5)
    start = rows[11].recorded_at_ms  # after the snapshots at 5 and 10
    report, _ = await reconciliation(reads, config(), start, UNBOUNDED)
    assert min(reads.starts) == 10
    reference, _ = await reconciliation(
        await copy(rows, MemoryJournal()), config(), start, UNBOUNDED
    )
    assert report == reference


async def test_the_report_is_computed_in_another_process(tmp_path: Path) -> None:
    journal, rows = await played()
    pids = tmp_path / "pids"
    reads = await copy(rows, Reads(pids))
    report = await Reports(config()).reconciliation(reads, -UNBOUNDED, UNBOUNDED, rows[-1].seq)
    assert report["journal"]["seq"] == rows[-1].seq
    read_in = {int(line) for line in pids.read_text().split()}
    assert read_in and os.getpid() not in read_in


async def test_one_computation_at_a_time_kept_by_period_and_head() -> None:
    journal, rows = await played()
    reports = Reports(config())
    head = rows[-1].seq
    open_period = (rows[3].recorded_at_ms, UNBOUNDED)
    first, *others = await asyncio.gather(
        *(reports.reconciliation(journal, *open_period, head) for _ in range(3))
    )
    assert reports.computed == 1 and all(o == first for o in others)
    again = await reports.reconciliation(journal, *open_period, head - 1)  # another head
    assert reports.computed == 2 and again["journal"]["seq"] == head - 1
    # A period that ended before the head is the same for every later head: kept.
    closed = (rows[0].recorded_at_ms, rows[5].recorded_at_ms)
    await reports.reconciliation(journal, *closed, head - 1)
    assert reports.computed == 3
    await reports.reconciliation(journal, *closed, head)
    assert reports.computed == 3


@pytest.mark.parametrize("upto", [4, 9])
async def test_entries_after_the_head_are_not_in_the_report(upto: int) -> None:
    journal, rows = await played()
    await snapshot_every(journal, rows, 3)
    report, closed = await reconciliation(journal, config(), -UNBOUNDED, UNBOUNDED, upto)
    assert report["journal"] == {"seq": upto, "entries": upto, "head": rows[upto - 1].hash}
    assert closed is False
