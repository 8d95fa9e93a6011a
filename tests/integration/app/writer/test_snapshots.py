"""Snapshots: taken aside by a forked process, exact, the base a failed commit rebuilds from,
and what a restart starts from (docs/design.md "Recovery and snapshots")."""

from __future__ import annotations

import asyncio
import gc
import os
import random
import weakref
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.commands import BetsCommand
from app.state.floor_state import FloorState
from app.state.kinds import prepare_bets
from app.state.sealing import DEMO_KEY
from app.store.journal import GENESIS
from app.store.packing import unpack_bytes
from app.store.snapshots import dump_packed_aside, dump_text
from app.writer.writer import Writer
from tests.integration.app.support import FlakyJournal, build_server
from tests.support import DEMO, Clock, bets_body, command_of, replayed

T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
ROYAL = ["AH", "KH", "QH", "JH", "TH"]
RNG = random.SystemRandom()


class SnapshotJournal(FlakyJournal):
    """A journal that stops storing snapshots when told (the writer rebases on them all
    the same): the rows after the latest stored one are what a restart replays."""

    stores_snapshots = True

    async def save_snapshot(self, seq: int, taken_at_ms: int, packed: bytes) -> None:
        if self.stores_snapshots:
            await super().save_snapshot(seq, taken_at_ms, packed)


Served = tuple[httpx.AsyncClient, Writer, SnapshotJournal, Clock]


def state(writer: Writer) -> str:
    """The writer's whole state, as a snapshot's text."""
    return dump_text(writer.service, writer.seq, writer.head)


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    clock, journal = Clock(), SnapshotJournal()
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2, snapshot_every=6)
    app, writer = server.app, server.writer
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        yield c, writer, journal, clock


async def play(served: Served, first: int, count: int) -> None:
    """Rounds at T01 (stud link) with bets and an outcome, now and then a royal flush;
    then any snapshot they started is stored."""
    client, writer, _, clock = served
    for n in range(first, first + count):
        body = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"))
        r = await client.post(f"/v1/tables/T01/rounds/S{n}/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
        cards = ROYAL if n % 4 == 0 else ["2C", "7D", "9H", "JS", "4C"]
        other = ["3S", "5S", "8D", "TC", "KD"]
        outcome = {
            "boxes": [
                {"box": 1, "dealt_at": clock.at(5), "cards": cards},
                {"box": 2, "dealt_at": clock.at(6), "cards": other},
            ]
        }
        r = await client.post(f"/v1/tables/T01/rounds/S{n}/outcome", json=outcome, headers=T01)
        assert r.status_code == 200, r.text
        clock.now += 1_000
    await settled(writer)


async def settled(writer: Writer) -> None:
    for _ in range(200):
        if writer.snapshots.task is None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the snapshot was not stored")


async def test_a_snapshot_is_the_state_its_entries_give_and_becomes_the_base(
    served: Served,
) -> None:
    _, writer, journal, _ = served
    await play(served, 0, 8)
    latest = await journal.latest_snapshot()
    assert latest is not None
    seq, packed = latest
    text = unpack_bytes(packed, seq)
    rows = [row async for row in journal.read(0)]
    assert 6 <= seq <= len(rows)
    expected = replayed(rows[:seq])
    assert text == dump_text(expected, seq, rows[seq - 1].hash)
    # The base a failed commit would rebuild from moved to the snapshot, as stored.
    assert writer.position.base == packed and writer.position.base_point == (
        seq,
        rows[seq - 1].hash,
    )
    assert [row.seq for row in writer.position.since_base] == list(range(seq + 1, len(rows) + 1))
    assert writer.durable_head() == (rows[-1].seq, rows[-1].hash)


async def test_a_failed_commit_after_a_snapshot_rebuilds_from_it(
    served: Served,
) -> None:
    client, writer, journal, clock = served
    await play(served, 0, 8)
    assert writer.position.base  # rebuilt from a snapshot, not from the empty floor
    before = state(writer)
    journal.down = True
    body = bets_body(clock, (1, "10.00", "1.00"))
    r = await client.post("/v1/tables/T02/rounds/LOST/bets", json=body, headers=T02)
    assert r.status_code == 503
    assert state(writer) == before
    journal.down = False
    await play(served, 8, 2)
    rows = [row async for row in journal.read(0)]
    assert state(writer) == dump_text(replayed(rows), rows[-1].seq, rows[-1].hash)


async def test_a_restart_from_the_snapshot_and_the_rows_after_it_is_the_same_state(
    served: Served,
) -> None:
    client, writer, journal, clock = served
    await play(served, 0, 9)
    # One more round's bets, and no snapshot after them: rows to replay after the latest.
    journal.stores_snapshots = False
    body = bets_body(clock, (1, "10.00", "1.00"))
    r = await client.post("/v1/tables/T02/rounds/AFTER/bets", json=body, headers=T02)
    assert r.status_code == 200, r.text
    await settled(writer)
    latest = await journal.latest_snapshot()
    assert latest is not None and latest[0] < writer.seq  # rows to replay after it
    again = Writer(FloorState(writer.service.config), journal)
    replayed_rows = await again.recover()
    assert replayed_rows == writer.seq - latest[0]
    assert state(again) == state(writer)


async def test_the_forked_dump_is_the_state_at_the_call_whatever_comes_after() -> None:
    config = floor_config(load_floor(DEMO), DEMO_KEY)
    service = FloorState(config)
    clock = Clock()
    entry = prepare_bets(
        service,
        "T01",
        "R1",
        command_of(BetsCommand, {"closed_at": clock.now, "boxes": [_box(1)]}),
        clock.now,
        RNG,
    )
    service.apply(entry)
    at_call = dump_text(service, 1, GENESIS)
    pending = dump_packed_aside(service, 1, GENESIS)
    later = prepare_bets(
        service,
        "T01",
        "R2",
        command_of(BetsCommand, {"closed_at": clock.now, "boxes": [_box(2)]}),
        clock.now,
        RNG,
    )
    service.apply(later)  # the writer goes on while the child serialises
    dumped = await pending
    text = unpack_bytes(dumped.packed, 1)
    assert text == at_call
    assert dumped.text_size == len(at_call.encode())
    assert dump_text(service, 1, GENESIS) != at_call


def _box(n: int) -> dict[str, Any]:
    return {"box": n, "ante": 10_000_000, "jackpot": 1_000_000, "jackpot_dealer": 0, "player": None}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
async def test_a_failed_child_is_an_error_not_a_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    config = floor_config(load_floor(DEMO), DEMO_KEY)
    service = FloorState(config)

    def broken(*args: object) -> str:
        raise RuntimeError("serialisation failed")

    monkeypatch.setattr("app.store.snapshots.dump_text", broken)
    with pytest.raises(RuntimeError, match="exited with status"):
        await dump_packed_aside(service, 0, GENESIS)


class Cycle:
    """Garbage that only the cycle collector can free (as a refused request leaves)."""

    def __init__(self) -> None:
        self.me = self


async def test_a_snapshot_frees_young_garbage_before_it_freezes_the_state(
    served: Served,
) -> None:
    # The snapshot moves every tracked object out of the collector's reach (gc.freeze):
    # garbage among them would be kept forever. Automatic collections are off here so
    # that only the snapshot's own collection can free the cycle.
    gc.disable()
    try:
        garbage = Cycle()
        alive = weakref.ref(garbage)
        del garbage
        await play(served, 1, 4)  # 8 entries: a snapshot (every 6) taken and stored
        assert served[1].position.base  # a snapshot was taken: it is the base to rebuild from
        assert alive() is None
    finally:
        gc.unfreeze()
        gc.enable()
