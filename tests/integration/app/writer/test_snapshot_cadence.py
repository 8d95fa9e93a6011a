"""When the writer snapshots: after `snapshot_every` entries, and once the journal
has grown since the base by as much text as the base's own, so that a large state is
snapshotted in proportion to the work appended; and, with or without snapshots, the state
is frozen out of the cyclic collector every `freeze_every` entries."""

from __future__ import annotations

import gc
import weakref

from app.state.commands import Command
from app.state.floor_state import FloorState
from app.store.journal import JournalRow
from app.store.packing import unpack_bytes
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import (
    Harness,
    bets,
    journal_rows,
    outcome_body,
    state_is_the_journals,
)

LOSING = ["2C", "7D", "9H", "JS", "4C"]
OTHER = ["3S", "5S", "8D", "TC", "KD"]
RETAIN_MS = 900_000  # the demo floor's: a settled round is kept in memory this long


async def post(h: Harness, kind: str, round_id: str, body: Command) -> None:
    """One request, answered; then any snapshot it started is stored."""
    status, _ = await h.writer.submit(kind, "T01", round_id, body)
    assert status in (200, 201)
    if h.writer.snapshots.task is not None:
        await h.writer.snapshots.task


async def snapshot_texts(h: Harness) -> dict[int, str]:
    """Every stored snapshot's text, by seq."""
    texts = {}
    for seq in await h.journal.snapshot_seqs():
        text = await h.journal.snapshot_at(seq)
        assert text is not None
        texts[seq] = text
    return texts


def text_between(rows: list[JournalRow], after: int, upto: int) -> int:
    """The entries' text in (after, upto]."""
    return sum(len(row.entry) for row in rows if after < row.seq <= upto)


async def test_a_large_base_postpones_the_next_snapshot_until_as_much_text_is_appended() -> None:
    # Every round stays open, so the state (a snapshot's text) grows with every entry and
    # soon outweighs `snapshot_every` entries: snapshots come rarer than every 3 entries.
    async with Harness(snapshot_every=3) as h:
        for n in range(60):
            await post(h, "bets", f"R{n}", bets(h.clock.now))
        rows = await journal_rows(h.journal)
        texts = await snapshot_texts(h)
        seqs = sorted(texts)
        assert seqs[0] == 3  # the empty floor as the base: the every-3 cadence
        assert len(seqs) >= 3
        for base, taken in zip(seqs, seqs[1:], strict=False):
            size = len(texts[base].encode())
            assert taken - base > 3  # postponed
            # Taken once the text committed since the base reached the base's size (the
            # entry that took it was not committed yet), and not before.
            assert text_between(rows, base, taken - 1) >= size
            assert text_between(rows, base, taken - 2) < size
        await state_is_the_journals(h.writer, h.journal)


async def test_a_small_state_keeps_the_every_n_cadence() -> None:
    # Each round is settled and, a retention later, pruned: the state stays the meters and
    # a round or two, far less text than `snapshot_every` entries.
    every = 20
    async with Harness(snapshot_every=every) as h:
        for n in range(40):
            await post(h, "bets", f"R{n}", bets(h.clock.now))
            await post(h, "outcome", f"R{n}", outcome_body(LOSING, h.clock.now + 10, OTHER))
            h.clock.now += RETAIN_MS + 1_000
        texts = await snapshot_texts(h)
        seqs = sorted(texts)
        rows = await journal_rows(h.journal)
        assert len(seqs) >= 3
        assert max(len(text.encode()) for text in texts.values()) < text_between(rows, 0, every)
        for base, taken in zip(seqs, seqs[1:], strict=False):
            # The entry that reaches `every` takes it (a finalize may come in its group).
            assert every <= taken - base <= every + 1
        await state_is_the_journals(h.writer, h.journal)


async def test_a_restart_knows_its_base_snapshots_size_and_keeps_postponing() -> None:
    async with Harness(snapshot_every=3) as h:
        for n in range(30):
            await post(h, "bets", f"R{n}", bets(h.clock.now))
        latest = await h.journal.latest_snapshot()
        assert latest is not None
        size = len(unpack_bytes(latest[1], latest[0]).encode())
        again = Writer(
            FloorState(h.writer.service.config), h.journal, WriterSettings(snapshot_every=3)
        )
        await again.recover()
        assert again.position.base_size == size
        rows = await journal_rows(h.journal)
        assert again.position.since_base_size == text_between(rows, latest[0], again.seq)


def frozen(obj: object) -> bool:
    """Out of the collector's generations (`gc.freeze`): tracked, yet in none of them."""
    return gc.is_tracked(obj) and not any(each is obj for each in gc.get_objects())


class Cycle:
    """Garbage only the cycle collector frees (as a refused request leaves)."""

    def __init__(self) -> None:
        self.me = self


async def test_the_state_is_frozen_every_n_entries_without_any_snapshot() -> None:
    # Automatic collections are off: only the writer's own collection may free the cycle,
    # and only its freeze may move anything out of the collector's generations.
    gc.disable()
    gc.unfreeze()
    try:
        async with Harness(snapshot_every=10**9, freeze_every=5) as h:
            garbage = Cycle()
            alive = weakref.ref(garbage)
            # It survives a young collection while in use (as a request in flight does),
            # and is garbage by the freeze: a freeze after only a generation-0 collection
            # would keep it forever.
            gc.collect(0)
            del garbage
            rounds = iter(range(100))
            first = [alive]  # tracked by the collector, alive: moved by a freeze
            while h.writer.seq < 5:  # a bets entry each, and a finalize now and then
                assert not frozen(first) and alive() is not None
                await post(h, "bets", f"R{next(rounds)}", bets(h.clock.now))
            assert await h.journal.snapshot_seqs() == []
            assert frozen(first)
            assert alive() is None
            second, at = [alive], h.writer.seq
            while h.writer.seq < at + 5:  # not at every entry
                assert not frozen(second)
                await post(h, "bets", f"R{next(rounds)}", bets(h.clock.now))
            assert frozen(second)
    finally:
        gc.unfreeze()
        gc.enable()
