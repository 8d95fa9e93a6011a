"""`jackpot verify` and `jackpot export`: a clean journal verifies, a changed entry is named.

Histories are written by the real single writer (`Writer.process`, the step the writer
task runs for every group of requests) with a clock the test moves, into the journal
port (memory, and PostgreSQL for the store-level tests).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import random
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.audit.checkpoint import Checkpoint
from app.audit.export import export_line
from app.audit.findings import Report, first_difference, format_report
from app.audit.reconciliation import reconciliation
from app.audit.replay_check import Verifier
from app.audit.segments import plan_segments
from app.audit.verify_run import verify
from app.cli.audit import main_verify
from app.state.floor_state import FloorConfig, FloorState, TableConfig
from app.state.views import round_view
from app.store.journal import JournalRow, MemoryJournal, PostgresJournal
from app.store.packing import pack
from app.store.snapshots import dump_service
from app.writer.group import Submission
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from jackpot.canonical import canonical_json
from jackpot.commands import SEMANTICS
from jackpot.config import LinkConfig, MeterConfig, Timing
from jackpot.money import Money, parse_money, parse_rate
from tables.bets import TableSettings
from tables.cards import DECK
from tables.games import game
from tests.integration.app.support import build_server, running
from tests.support import ROOT, as_command, rewrite_history

START = 1_800_000_000_000
T = TypeVar("T")


def m(text: str) -> Money:
    return parse_money(text)


def floor_config(*, dual_control: bool = False) -> FloorConfig:
    stud = LinkConfig(
        "stud",
        (
            MeterConfig("major", m("10000.00"), parse_rate("0.25"), parse_rate("0.05")),
            # a low ceiling: contributions overflow to the reserve
            MeterConfig("minor", m("500.00"), parse_rate("0.05"), parse_rate("0.01"), m("501.00")),
        ),
    )
    tcp = LinkConfig(
        "tcp", (MeterConfig("major", m("5000.00"), parse_rate("0.20"), parse_rate("0.05")),)
    )
    one = m("1.00")
    tables = {
        "T01": TableConfig("T01", "stud", TableSettings(game("casino_stud"), one, 7)),
        "T02": TableConfig("T02", "stud", TableSettings(game("multi_link_casino_stud"), one, 7)),
        "T03": TableConfig("T03", "tcp", TableSettings(game("three_card_poker"), one, 7)),
        "T04": TableConfig("T04", "stud", TableSettings(game("singapore_stud"), one, 7)),
        "T05": TableConfig("T05", None, TableSettings(game("western_stud"), m("0"), 7)),
    }
    return FloorConfig("SGD", Timing(), (stud, tcp), tables, dual_control)


CONFIG = floor_config()
HAND_SIZE = {"T01": 5, "T02": 5, "T03": 3, "T04": 5, "T05": 5}
WINNERS = {
    5: ("AS KS QS JS TS", "9H 8H 7H 6H 5H", "2C 2D 2H 2S 9C", "3D 3H 3S 8D 8H"),
    3: ("AS KS QS", "AH KH QH", "5D 6D 7D", "9C 9D 9S"),
}


class Floor:
    """The writer with a clock of our own; requests are grouped as they would arrive."""

    def __init__(
        self,
        config: FloorConfig = CONFIG,
        journal: Any = None,
        seed: int = 1,
        *,
        snapshot_every: int = 20_000,  # the writer's own, as is `snapshot_growth`
        snapshot_growth: int = 1,
    ) -> None:
        self.now = START
        self.journal = journal if journal is not None else MemoryJournal()
        settings = WriterSettings(
            clock=lambda: self.now,
            rng=random.Random(seed),
            snapshot_every=snapshot_every,
            snapshot_growth=snapshot_growth,
        )
        self.writer = Writer(FloorState(config), self.journal, settings)
        self.batch: list[Submission] = []

    def submit(
        self, kind: str, table: str | None, round_id: str | None, body: dict[str, Any],
        by: str | None = None,
    ) -> Submission:  # fmt: skip
        """`body`: the command's fields (money in micro-units, times in ms)."""
        future = asyncio.get_running_loop().create_future()
        sub = Submission(kind, table, round_id, as_command(kind, body), by, future)
        self.batch.append(sub)
        return sub

    async def flush(self) -> None:
        batch, self.batch = self.batch, []
        await self._process(batch)

    async def _process(self, batch: list[Submission]) -> None:
        await self.writer.process(batch)
        if self.writer.snapshots.task is not None:  # stored before the next request
            await self.writer.snapshots.task
        for sub in batch:  # refused requests are part of a history too: not our concern
            if sub.future.done() and not sub.future.cancelled():
                sub.future.exception()

    async def post(
        self, kind: str, table: str | None, round_id: str | None, body: dict[str, Any],
        by: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        sub = self.submit(kind, table, round_id, body, by)
        await self.flush()
        answer = sub.future.result()[1]  # a first answer: the text journaled
        return json.loads(answer) if isinstance(answer, str) else answer

    async def later(self, ms: int) -> None:
        """Time passes; the writer finalises what is due (its timer)."""
        self.now += ms
        await self._process([])


def box(n: int, ante: str = "10.00", jackpot: str = "1.00", dealer: str = "0",
        player: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {"box": n, "ante": m(ante), "jackpot": m(jackpot), "jackpot_dealer": m(dealer),
            "player": player}  # fmt: skip


def hand(n: int, cards: str, dealt_at: int, folded: bool = False) -> dict[str, Any]:
    return {"box": n, "dealt_at": dealt_at, "cards": cards.split(), "folded": folded}


async def rows_of(journal: MemoryJournal) -> list[JournalRow]:
    return [row async for row in journal.read(0)]


def verify_rows(rows: list[JournalRow], config: FloorConfig = CONFIG) -> Verifier:
    verifier = Verifier(config)
    for row in rows:
        verifier.feed(row)
    return verifier


# -- a small history with every kind of entry ---------------------------------------------


async def small_history(floor: Floor) -> dict[str, int]:
    """Returns the seq of a few entries the tamper tests change."""
    t0 = floor.now
    await floor.post("bets", "T01", "R1", {"closed_at": t0, "boxes": [box(1), box(2), box(3)]})
    await floor.post("bets", "T03", "R1", {"closed_at": t0 + 5, "boxes": [box(1), box(2)]})
    floor.now += 400
    # T02's bets arrive after T01's outcome is already in: arrival order is not event order
    royal = await floor.post(
        "outcome", "T01", "R1",
        {"boxes": [hand(1, "AS KS QS JS TS", t0 + 300), hand(2, "2C 3D 4D 7S 9C", t0 + 310),
                   hand(3, "9H 8H 7H 6H 5H", t0 + 320)], "dealer": None},
    )  # fmt: skip
    await floor.post("bets", "T02", "R7", {"closed_at": t0 + 100, "boxes": [box(4), box(5)]})
    await floor.post(
        "outcome",
        "T03",
        "R1",
        {"boxes": [hand(1, "AH KH QH", t0 + 350), hand(2, "2S 3D 5C", t0 + 360)], "dealer": None},
    )
    floor.now += 300
    await floor.post(
        "outcome", "T02", "R7",
        {"boxes": [hand(4, "AD KD QD JD TD", t0 + 200), hand(5, "4C 4D 4H 4S 2D", t0 + 210,
                                                             folded=True)], "dealer": None},
    )  # fmt: skip
    await floor.post(
        "bets", "T04", "R1", {"closed_at": floor.now, "boxes": [box(1, "10.00", "2.00", "1.00")]}
    )
    await floor.post(
        "bets", "T05", "R1", {"closed_at": floor.now, "boxes": [box(2, "5.00", "5.00")]}
    )
    await floor.post("void", "T04", "R1", {"reason": "misdeal (5.8)", "boxes": None})
    await floor.post(
        "outcome", "T05", "R1", {"boxes": [hand(2, "8S 6D 5C 3H 2D", floor.now)], "dealer": None}
    )
    await floor.post("seed", None, None,
                     {"link": "stud", "meter": "major", "seed": m("12000.00"), "reason": "promo",
                      "version": SEMANTICS},  # as the route writes it
                     by="sam")  # fmt: skip
    await floor.later(5_000)
    await floor.post("reset", None, None, {"link": "stud", "meter": "minor", "reason": "audit",
                      "reason_code": "malfunction"},
                     by="sam")  # fmt: skip
    await floor.post(
        "correct", None, None,
        {"correction": "adjust", "link": "tcp", "meter": "major", "amount": -m("3.00"),
         "reset": True, "table": None, "round": None, "reason": "5.24",
         "reason_code": "error_correction"},
        by="sam",
    )  # fmt: skip
    await floor.later(5_000)
    rows = await rows_of(floor.journal)
    seq = {
        f"{json.loads(r.entry).get('table')}/{json.loads(r.entry).get('round')}/{r.kind}": r.seq
        for r in rows
    }
    assert royal["awards"][0]["state"] == "pending"
    return seq


async def test_an_untouched_journal_verifies_and_replays_the_same_state() -> None:
    floor = Floor()
    await small_history(floor)
    rows = await rows_of(floor.journal)
    verifier = verify_rows(rows)
    report = verifier.report()
    assert report.ok, format_report(report)
    assert (report.entries, report.head) == (floor.writer.seq, floor.writer.head)
    assert report.meter_awards == 3  # T01 royal + straight flush, T02 royal (in deal order)
    assert {"bets", "outcome", "void", "finalize", "seed", "reset", "correct"} <= set(report.kinds)
    assert canonical_json(dump_service(verifier.service, 0, "")) == canonical_json(
        dump_service(floor.writer.service, 0, "")
    )
    # verify() over the port gives the same report, and says the journal records no
    # parameters: it was replayed under the floor file given, as before
    over_port = await verify(floor.journal, CONFIG)
    assert dataclasses.replace(over_port, notes=()) == report
    assert "first entry is not a config entry" in over_port.notes[0]
    text = format_report(report)
    assert "OK" in text and report.head in text and "link stud meter major" in text


def _tamper(rows: list[JournalRow], seq: int, change: Any, *, rechain: bool = False) -> None:
    """Change one stored entry in place; with `rechain`, also forge every hash after it
    (an insider who rewrote the chain): then only the rules can tell."""
    i = seq - 1
    entry = json.loads(rows[i].entry)
    change(entry)
    rows[i] = dataclasses.replace(rows[i], entry=canonical_json(entry))
    if rechain:
        head = rows[i - 1].hash if i else "0" * 64
        for j in range(i, len(rows)):
            head = hashlib.sha256((head + rows[j].entry).encode()).hexdigest()
            rows[j] = dataclasses.replace(rows[j], hash=head)


def _seqs(report: Report) -> set[int]:
    return {d.seq for d in report.discrepancies}


def _set_card(entry: dict[str, Any]) -> None:
    entry["boxes"][0]["cards"][4] = "9S"  # the royal flush is now a straight flush


def _set_ante(entry: dict[str, Any]) -> None:
    entry["boxes"][1]["ante"] = 0  # box 2 had no ante: its jackpot wager is returned (5.4)


def _set_dealt_at(entry: dict[str, Any]) -> None:
    entry["boxes"][0]["dealt_at"] -= 250


def _set_claim_share(entry: dict[str, Any]) -> None:
    entry["claims"][0]["share"] = 10_000  # a straight flush claimed as 100 %


def _seed_above_ceiling(entry: dict[str, Any]) -> None:
    entry["meter"] = "minor"  # its ceiling is 501.00: the writer refuses such a seed
    entry["seed"] = m("12000.00")


@pytest.mark.parametrize(
    ("target", "change", "what"),
    [
        ("T01/R1/outcome", _set_card, "claims"),
        ("T01/R1/bets", _set_ante, "decisions"),
        ("T02/R7/outcome", _set_dealt_at, "claims"),
        ("T01/R1/outcome", _set_claim_share, "claims"),
        ("None/None/seed", _seed_above_ceiling, "entry"),
    ],
)
@pytest.mark.parametrize("rechain", [False, True])
async def test_a_changed_entry_is_named_and_fails(
    target: str, change: Any, what: str, rechain: bool
) -> None:
    floor = Floor()
    seqs = await small_history(floor)
    rows = await rows_of(floor.journal)
    seq = seqs[target]
    if change is _set_claim_share:
        # the straight flush (box 3) is the second claim of T01's outcome
        def change(entry: dict[str, Any]) -> None:
            entry["claims"][1]["share"] = 10_000

    _tamper(rows, seq, change, rechain=rechain)
    report = verify_rows(rows).report()
    assert not report.ok
    first = report.discrepancies[0]
    assert first.seq == seq  # nothing before it is blamed
    whats = [d.what for d in report.discrepancies if d.seq == seq]
    assert any(w.startswith("hash") for w in whats) != rechain
    assert any(w.startswith(what) for w in whats), whats
    assert f"seq {seq} (" in format_report(report)


async def test_a_recorded_answer_that_the_rules_do_not_give_is_named() -> None:
    floor = Floor()
    seqs = await small_history(floor)
    rows = await rows_of(floor.journal)
    i = seqs["T01/R1/bets"] - 1
    answer = json.loads(rows[i].answer or "")
    answer["boxes"][0]["contribution"] = "0.35"
    rows[i] = dataclasses.replace(rows[i], answer=canonical_json(answer))
    report = verify_rows(rows).report()
    assert [(d.seq, d.what, d.recorded, d.expected) for d in report.discrepancies] == [
        (i + 1, "answer.boxes[0].contribution", "0.35", "0.30")
    ]


async def test_a_missing_entry_breaks_the_chain_at_the_next() -> None:
    floor = Floor()
    await small_history(floor)
    rows = await rows_of(floor.journal)
    del rows[3]
    report = verify_rows(rows).report()
    assert report.discrepancies[0].seq == 5
    assert report.discrepancies[0].what.startswith("seq")


async def test_dual_control_proposals_replay() -> None:
    config = floor_config(dual_control=True)
    floor = Floor(config)
    change = {"kind": "seed", "link": "tcp", "meter": "major", "seed": m("6000.00"),
              "reason": "promo"}  # fmt: skip
    reset = {**{k: v for k, v in change.items() if k != "seed"}, "reason_code": "closure"}
    proposal = await floor.post("propose", None, None, {"change": change}, by="sam")
    await floor.post("approve", None, None, {"id": proposal["id"]}, by="sue")
    other = await floor.post(
        "propose", None, None, {"change": {**reset, "kind": "reset"}}, by="sam"
    )
    await floor.post("reject", None, None, {"id": other["id"], "reason": "no"}, by="sue")
    report = verify_rows(await rows_of(floor.journal), config).report()
    assert report.ok, format_report(report)
    assert report.kinds == {"propose": 2, "approve": 1, "reject": 1}


def test_first_difference_names_the_path() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == (".a[1].b", 2, 3)
    assert first_difference({"a": 1}, {"a": 1, "c": 2}) == (".c", "(absent)", 2)
    assert first_difference([1], [1, 2]) == ("", [1], [1, 2])


# -- random histories ------------------------------------------------------------------------


class History:
    """A busy floor: rounds at five tables interleaved, outcomes out of deal order, voids
    of rounds and boxes, late bets, seed changes, resets and corrections."""

    def __init__(self, floor: Floor, rng: random.Random) -> None:
        self.floor, self.rng = floor, rng
        self.open: dict[str, tuple[str, int, list[dict[str, Any]]]] = {}
        self.done: list[tuple[str, str, list[int]]] = []
        self.rounds = 0

    async def run(self, steps: int) -> None:
        rng, floor = self.rng, self.floor
        for _ in range(steps):
            r = rng.random()
            idle = [t for t in HAND_SIZE if t not in self.open]
            if r < 0.35 and idle:
                self.bets(rng.choice(idle))
            elif r < 0.75 and self.open:
                self.outcome(rng.choice(sorted(self.open)))
            elif r < 0.83:
                self.void()
            elif r < 0.9:
                self.operator()
            floor.now += rng.choice((0, 1, 40, 300, 1_500, 2_500))
            if rng.random() < 0.6:
                await floor.flush()
        await floor.flush()
        await floor.later(200_000)  # every round done or stale: every award final

    def bets(self, table: str) -> None:
        rng, floor = self.rng, self.floor
        self.rounds += 1
        # mostly within the hold; sometimes late (more than 2 s after closing)
        closed_at = floor.now - rng.choice((0, 0, 100, 1_500, 2_500, 20_000))
        boxes = []
        for n in sorted(rng.sample(range(1, 8), rng.randint(1, 5))):
            ante = rng.choice(("10.00", "10.00", "10.00", "0"))
            if table == "T04":
                b = box(n, ante, rng.choice(("0", "1.00", "3.00")), rng.choice(("0", "0", "2.00")))
            elif table == "T05":
                b = box(n, ante, rng.choice(("0", "1.50", "10.00")) if ante != "0" else "0")
            else:
                b = box(n, ante, rng.choice(("0", "1.00", "1.00")), player=rng.choice((None, "p")))
            boxes.append(b)
        round_id = f"R{self.rounds}"
        floor.submit("bets", table, round_id, {"closed_at": closed_at, "boxes": boxes})
        self.open[table] = (round_id, closed_at, boxes)

    def outcome(self, table: str) -> None:
        rng, floor = self.rng, self.floor
        round_id, closed_at, boxes = self.open.pop(table)
        size = HAND_SIZE[table]
        deck = [str(c) for c in DECK]
        rng.shuffle(deck)
        winner = rng.choice(boxes)["box"] if rng.random() < 0.4 else None
        winning = rng.choice(WINNERS[size]).split()
        deck = [c for c in deck if c not in winning]
        dealt = sorted(rng.randint(closed_at, max(closed_at, floor.now)) for _ in boxes)
        hands = []
        for b, at in zip(boxes, dealt, strict=True):
            folded = rng.random() < 0.1
            n = size - 1 if folded and table == "T05" else size
            cards = winning if b["box"] == winner else [deck.pop() for _ in range(n)]
            hands.append({"box": b["box"], "dealt_at": at, "cards": cards[:n], "folded": folded})
        dealer = None
        if table == "T04":
            dealer = {"cards": [deck.pop() for _ in range(5)], "dealt_at": dealt[-1]}
        floor.submit("outcome", table, round_id, {"boxes": hands, "dealer": dealer})
        self.done.append((table, round_id, [b["box"] for b in boxes]))

    def void(self) -> None:
        rng = self.rng
        if self.open and rng.random() < 0.5:
            table = rng.choice(sorted(self.open))
            round_id, _, boxes = self.open[table]
            numbers = [b["box"] for b in boxes]
            if rng.random() < 0.6:
                del self.open[table]
        elif self.done:
            table, round_id, numbers = rng.choice(self.done)
        else:
            return
        some = None if rng.random() < 0.6 else rng.sample(numbers, 1)
        self.floor.submit("void", table, round_id, {"reason": "5.19", "boxes": some})

    def operator(self) -> None:
        rng = self.rng
        link, meter = rng.choice((("stud", "major"), ("stud", "minor"), ("tcp", "major")))
        kind = rng.choice(("seed", "reset", "correct"))
        body: dict[str, Any] = {"link": link, "meter": meter, "reason": "test"}
        if kind != "seed":  # both lower the meter (jackpot/reduction_reasons.py)
            body["reason_code"] = "jackpot_paid"
        if kind == "seed":
            body["seed"] = m(rng.choice(("400.00", "500.00", "9000.00", "12000.00")))
        elif kind == "correct":
            body.update(correction=rng.choice(("adjust", "hand_paid")), amount=m("2.00"),
                        reset=rng.random() < 0.5, table=None, round=None)  # fmt: skip
        self.floor.submit(kind, None, None, body, by="sam")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(20, 160))
def test_random_histories_verify_clean(rng: random.Random, steps: int) -> None:
    async def scenario() -> tuple[Floor, list[JournalRow]]:
        floor = Floor(seed=rng.randrange(2**32))
        await History(floor, rng).run(steps)
        return floor, await rows_of(floor.journal)

    floor, rows = asyncio.run(scenario())
    verifier = verify_rows(rows)
    report = verifier.report()
    assert report.ok, format_report(report)
    assert report.entries == floor.writer.seq and report.head == floor.writer.head
    assert canonical_json(dump_service(verifier.service, 0, "")) == canonical_json(
        dump_service(floor.writer.service, 0, "")
    )


async def test_a_long_random_history_verifies_clean_and_tampering_anywhere_is_named() -> None:
    rng = random.Random(2026)
    floor = Floor(seed=3)
    history = History(floor, rng)
    await history.run(3_000)
    rows = await rows_of(floor.journal)
    report = verify_rows(rows).report()
    assert report.ok, format_report(report)
    assert report.meter_awards > 10 and report.void_rounds > 10
    assert report.kinds["finalize"] > 10 and report.kinds["seed"] and report.kinds["reset"]
    outcomes = [r.seq for r in rows if r.kind == "outcome"]
    for seq in rng.sample(outcomes, 5):
        forged = list(rows)

        def change(entry: dict[str, Any]) -> None:
            entry["boxes"][0]["dealt_at"] += 1

        _tamper(forged, seq, change)
        assert _seqs(verify_rows(forged).report()) == {seq}


# -- the stored journal: PostgreSQL, the CLI entry points, export ----------------------------


FLOOR_TOML = """
currency = "SGD"
[[links]]
id = "stud"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.25"
  reserve_rate = "0.05"
  [[links.meters]]
  id = "minor"
  seed = "500.00"
  rate = "0.05"
  reserve_rate = "0.01"
  ceiling = "501.00"
[[links]]
id = "tcp"
  [[links.meters]]
  id = "major"
  seed = "5000.00"
  rate = "0.20"
  reserve_rate = "0.05"
"""
GAMES = (("T01", "casino_stud", "stud"), ("T02", "multi_link_casino_stud", "stud"),
         ("T03", "three_card_poker", "tcp"), ("T04", "singapore_stud", "stud"))  # fmt: skip


@pytest.fixture
def floor_file(tmp_path: Path) -> Path:
    """The floor of these tests as a floor file (verify reads its rules from one)."""
    text = FLOOR_TOML
    for i, (table, name, link) in enumerate(GAMES):
        text += (f'[[tables]]\nid = "{table}"\ngame = "{name}"\nlink = "{link}"\nboxes = 7\n'
                 f'jackpot_wager = "1.00"\ntoken_sha256 = "{i:064x}"\n')  # fmt: skip
    text += f'[[tables]]\nid = "T05"\ngame = "western_stud"\nboxes = 7\ntoken_sha256 = "{9:064x}"\n'
    # A table whose straight flush pays the minor: a meter no row pays is refused.
    text += ('[[tables]]\nid = "T06"\ngame = "casino_stud"\nlink = "stud"\nboxes = 7\n'
             'jackpot_wager = "1.00"\npay_table = { straight_flush = "minor:0.10" }\n'
             f'token_sha256 = "{8:064x}"\n')  # fmt: skip
    path = tmp_path / "floor.toml"
    path.write_text(text)
    return path


def _write_to_postgres(
    dsn: str,
    floor_file: Path,
    history: Callable[[Floor], Awaitable[T]],
    snapshot_every: int = 20_000,
) -> T:
    """`history` played into a journal in PostgreSQL, by the writer with our clock."""
    from app.cli.audit import load_config

    async def write() -> T:
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
        try:
            journal = PostgresJournal(pool)
            floor = Floor(load_config(floor_file), journal, snapshot_every=snapshot_every)
            return await history(floor)
        finally:
            await pool.close()

    return asyncio.run(write())


def _args(dsn: str, floor_file: Path, **extra: Any) -> argparse.Namespace:
    base = {"config": floor_file, "data_dir": None, "database_url": dsn, "progress": False,
            "from_": None, "to": None, "output": None}  # fmt: skip
    return argparse.Namespace(**{**base, **extra})


def _execute(dsn: str, statement: str, *args: Any) -> None:
    """A change to the store, as an insider with the owner's SQL access would make it (the
    journal's append-only trigger told so: tests.support.rewrite_history)."""

    async def run() -> None:
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
        try:
            await rewrite_history(pool, statement, *args)
        finally:
            await pool.close()

    asyncio.run(run())


def test_verify_against_postgresql_names_an_entry_changed_in_the_store(
    fresh_dsn: str, floor_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seqs = _write_to_postgres(fresh_dsn, floor_file, small_history)
    assert main_verify(_args(fresh_dsn, floor_file)) == 0
    out = capsys.readouterr().out
    assert "OK" in out and "link stud meter major" in out
    seq = seqs["T01/R1/outcome"]
    # A card changed in the store, as an insider with SQL access would.
    _execute(fresh_dsn, "UPDATE journal SET entry = replace(entry, '\"TS\"', '\"9S\"') "
             "WHERE seq = $1", seq)  # fmt: skip
    assert main_verify(_args(fresh_dsn, floor_file)) == 1
    out = capsys.readouterr().out
    assert f"seq {seq} (outcome): hash" in out
    assert f"seq {seq} (outcome): claims" in out and "FAILED" in out


def test_export_writes_the_period_with_hashes_that_recompute(
    fresh_dsn: str, floor_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.audit.export import main_export
    from app.state.timefmt import format_time

    _write_to_postgres(fresh_dsn, floor_file, small_history)
    whole = tmp_path / "all.jsonl"
    assert main_export(_args(fresh_dsn, floor_file, output=whole)) == 0
    lines = [json.loads(line) for line in whole.read_text().splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, len(lines) + 1))
    prev = "0" * 64
    for line in lines:
        # docs/journal.md: the canonical encoding of `entry` gives back the hashed bytes
        text = json.dumps(line["entry"], sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)  # fmt: skip
        assert line["prev_hash"] == prev
        assert hashlib.sha256((prev + text).encode()).hexdigest() == line["hash"]
        prev = line["hash"]
    assert list(lines[0]) == ["seq", "recorded_at", "kind", "idem_key", "body_sha256", "entry",
                              "answer", "hash", "prev_hash"]  # fmt: skip
    # a period: [from, to) on recorded_at
    start = format_time(START + 400)
    end = format_time(START + 700)
    part = tmp_path / "part.jsonl"
    assert main_export(_args(fresh_dsn, floor_file, from_=start, to=end, output=part)) == 0
    chosen = [json.loads(line) for line in part.read_text().splitlines()]
    expected = [x for x in lines if start <= x["recorded_at"] < end]
    assert chosen == expected and 0 < len(chosen) < len(lines)
    assert f"{len(chosen)} entries exported" in capsys.readouterr().err
    assert main_export(_args(fresh_dsn, floor_file, from_="yesterday")) == 2


def test_an_export_of_the_whole_journal_verifies_away_from_the_database(
    fresh_dsn: str, floor_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export is enough to re-run the verification. `verify --file` on it
    gives the report the database gives; an amount edited in the file is named; a
    file that does not start at entry 1 is refused (exit 2)."""
    from app.audit.export import main_export

    seqs = _write_to_postgres(fresh_dsn, floor_file, small_history)
    assert main_verify(_args(fresh_dsn, floor_file)) == 0
    from_database = capsys.readouterr().out
    whole = tmp_path / "all.jsonl"
    assert main_export(_args(fresh_dsn, floor_file, output=whole)) == 0
    capsys.readouterr()
    assert main_verify(_args("postgresql://nowhere.invalid/x", floor_file, file=whole)) == 0
    from_file = capsys.readouterr().out
    assert from_file == from_database and "OK" in from_file  # no snapshots here: no checkpoint
    # The first box's ante of the first bets, a dollar more, in the file.
    lines = whole.read_text().splitlines()
    seq = seqs["T01/R1/bets"]
    line = json.loads(lines[seq - 1])
    line["entry"]["boxes"][0]["ante"] += 1_000_000
    lines[seq - 1] = json.dumps(line)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    assert main_verify(_args(fresh_dsn, floor_file, file=edited)) == 1
    out = capsys.readouterr().out
    assert f"seq {seq} (bets): hash" in out and "FAILED" in out
    # Not from entry 1; not an export line; --since with a file.
    (tmp_path / "tail.jsonl").write_text("\n".join(lines[3:]) + "\n")
    (tmp_path / "junk.jsonl").write_text(lines[0] + "\n{not json\n")
    for name, extra, says in (
        ("tail.jsonl", {}, "starts at entry 4"),
        ("junk.jsonl", {}, "last line: not an export line"),
        ("all.jsonl", {"since": f"3:{'a' * 64}:{'b' * 64}"}, "--since"),
    ):
        assert main_verify(_args(fresh_dsn, floor_file, file=tmp_path / name, **extra)) == 2
        assert says in capsys.readouterr().err  # fmt: skip


def test_export_line_of_a_row() -> None:
    row = JournalRow(1, START, "finalize", None, None, '{"kind":"finalize","now":1}', None, "ab")
    assert json.loads(export_line(row, "0" * 64)) == {
        "seq": 1, "recorded_at": "2027-01-15T08:00:00.000Z", "kind": "finalize",
        "idem_key": None, "body_sha256": None, "entry": {"kind": "finalize", "now": 1},
        "answer": None, "hash": "ab", "prev_hash": "0" * 64,
    }  # fmt: skip


def test_verify_joins_the_embedded_server_under_data_dir_while_it_runs(
    pg_folder: Path, floor_file: Path
) -> None:
    """`jackpot verify --data-dir` in a process of its own, beside the running server."""
    import os
    import subprocess
    import sys

    from app.store.database import migrate, start_embedded
    from tests.conftest import run_blocking

    embedded = run_blocking(start_embedded(pg_folder))  # the server's PostgreSQL
    try:
        run_blocking(migrate(embedded.dsn))
        _write_to_postgres(embedded.dsn, floor_file, small_history)
        command = [sys.executable, "-m", "app.cli", "verify", "--config", str(floor_file),
                   "--data-dir", str(pg_folder), "--progress"]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        root = ROOT
        done = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "OK" in done.stdout
        # Rich's bar: through a pipe (no terminal) it is drawn once, at the end.
        assert "verifying" in done.stderr and "100%" in done.stderr, done.stderr
        # Without --progress, stderr no terminal: plain text, no bar.
        plain = subprocess.run(
            command[:-1], cwd=root, env=env, capture_output=True, text=True, timeout=120
        )
        assert plain.returncode == 0 and "OK" in plain.stdout, plain.stdout + plain.stderr
        assert "verifying" not in plain.stderr and "\x1b" not in plain.stdout + plain.stderr
        run_blocking(_ping(embedded.dsn))  # verify left the server's PostgreSQL running
    finally:
        run_blocking(embedded.stop())


async def _ping(dsn: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        assert await connection.fetchval("SELECT count(*) FROM journal") > 10
    finally:
        await connection.close()


# -- segments: verified side by side, each from the snapshot the one before must reach ------


async def _history_with_snapshots(journal: Any = None, steps: int = 2_000) -> Floor:
    # A snapshot every 300 entries, however large the state grows.
    floor = Floor(journal=journal, seed=5, snapshot_every=300, snapshot_growth=0)
    await History(floor, random.Random(11)).run(steps)
    return floor


async def test_segments_from_snapshots_give_the_report_of_one_replay() -> None:
    floor = await _history_with_snapshots()
    journal = floor.journal
    snapshots = await journal.snapshot_seqs()
    last = floor.writer.seq
    assert len(plan_segments(snapshots, last, 4)) == 3  # four segments
    whole = await verify(journal, CONFIG)
    parts = await verify(journal, CONFIG, jobs=4)
    assert whole.ok, format_report(whole)
    assert parts == whole
    assert whole.entries == last and whole.meter_awards > 5


async def test_a_stored_snapshot_is_checked_not_trusted() -> None:
    floor = await _history_with_snapshots()
    journal = floor.journal
    last = floor.writer.seq
    cut = plan_segments(await journal.snapshot_seqs(), last, 2)[0]
    stored = await journal.snapshot_at(cut)
    assert stored is not None
    state = json.loads(stored)
    state["floor"]["links"]["stud"]["meters"][0]["value"] += 10_000  # one cent more
    journal._snapshots[cut] = (0, pack(canonical_json(state)))
    report = await verify(journal, CONFIG, jobs=2)
    assert not report.ok
    assert [d.kind for d in report.discrepancies][0] == "snapshot"
    assert report.discrepancies[0].seq == cut
    # From the entries alone (one segment) nothing is wrong: the snapshot is what lied.
    assert (await verify(journal, CONFIG)).ok


async def test_an_entry_changed_in_a_later_segment_is_named() -> None:
    floor = await _history_with_snapshots()
    journal = floor.journal
    rows = await rows_of(journal)
    cut = plan_segments(await journal.snapshot_seqs(), floor.writer.seq, 2)[0]
    seq = next(r.seq for r in rows if r.kind == "outcome" and r.seq > cut + 10)

    def change(entry: dict[str, Any]) -> None:
        entry["boxes"][0]["dealt_at"] += 1

    _tamper(rows, seq, change)
    forged = MemoryJournal()
    await forged.append(rows)
    for snapshot_seq in await journal.snapshot_seqs():
        text = await journal.snapshot_at(snapshot_seq)
        assert text is not None
        await forged.save_snapshot(snapshot_seq, 0, pack(text))
    report = await verify(forged, CONFIG, jobs=2)
    assert _seqs(report) == {seq}


def test_plan_segments_cuts_at_snapshots_near_equal_parts() -> None:
    assert plan_segments([100, 200, 300, 400, 500], 600, 3) == [200, 400]
    assert plan_segments([100], 600, 3) == [100]  # one snapshot: two segments
    assert plan_segments([], 600, 4) == []
    assert plan_segments([600, 700], 600, 2) == []  # at or after the end: no cut


def test_jobs_in_processes_against_postgresql(
    fresh_dsn: str, floor_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`jackpot verify --jobs 2`: segments in processes of their own, each reading its
    entries from PostgreSQL; a snapshot changed in the store is named."""

    async def history(floor: Floor) -> int:
        await History(floor, random.Random(11)).run(1_000)
        return floor.writer.seq

    last = _write_to_postgres(fresh_dsn, floor_file, history, snapshot_every=300)
    assert main_verify(_args(fresh_dsn, floor_file, jobs=2)) == 0
    out = capsys.readouterr().out
    assert f"seq 1..{last:,}" in out and "OK" in out
    cut = plan_segments(asyncio.run(_snapshot_seqs(fresh_dsn)), last, 2)[0]
    # A timeline's event counter changed in the stored snapshot (57 -> 157, say): valid
    # JSON, a different state.
    stored = _packed_snapshot(fresh_dsn, cut)
    changed = stored.replace('"serial":', '"serial":1')
    assert changed != stored
    _execute(fresh_dsn, "UPDATE snapshots SET packed = $2 WHERE seq = $1", cut, pack(changed))
    assert main_verify(_args(fresh_dsn, floor_file, jobs=2)) == 1
    assert f"seq {cut} (snapshot)" in capsys.readouterr().out
    # A snapshot that is not even JSON, or not even zlib data: named, the segment after
    # it cannot start.
    for garbage in (pack("garbage"), b"garbage"):
        _execute(fresh_dsn, "UPDATE snapshots SET packed = $2 WHERE seq = $1", cut, garbage)
        assert main_verify(_args(fresh_dsn, floor_file, jobs=2)) == 1
        assert f"seq {cut} (snapshot): unreadable" in capsys.readouterr().out


def _packed_snapshot(dsn: str, seq: int) -> str:
    """The snapshot's JSON as the writer stored it: packed (alembic/versions/0002)."""

    async def run() -> str:
        connection = await asyncpg.connect(dsn)
        try:
            row = await connection.fetchrow(
                "SELECT state, packed FROM snapshots WHERE seq = $1", seq
            )
        finally:
            await connection.close()
        assert row is not None and row["state"] is None
        return zlib.decompress(row["packed"]).decode()

    return asyncio.run(run())


# -- checkpoints: the next run replays only what came after the last one ---------------------


async def test_a_clean_run_gives_a_checkpoint_and_the_next_run_replays_only_what_follows() -> None:
    floor = await _history_with_snapshots(steps=1_200)
    journal = floor.journal
    first = await verify(journal, CONFIG)
    assert first.ok, format_report(first)
    # The checkpoint is the latest snapshot, its entry's hash and the stored bytes' sha256,
    # recomputed here from the journal itself.
    latest = (await journal.snapshot_seqs())[-1]
    rows = await rows_of(journal)
    text = await journal.snapshot_at(latest)
    assert text is not None
    assert first.checkpoint == Checkpoint(
        latest, rows[latest - 1].hash, hashlib.sha256(text.encode()).hexdigest()
    )
    assert Checkpoint.parse(str(first.checkpoint)) == first.checkpoint

    await _more(floor, 800)  # the floor goes on
    end = floor.writer.seq
    full = await verify(journal, CONFIG)
    since = await verify(journal, CONFIG, since=first.checkpoint)
    assert since.ok, format_report(since)
    assert (since.first_seq, since.last_seq, since.entries) == (latest + 1, end, end - latest)
    # Where it ends, it agrees with the replay from entry 1: head, meters, next checkpoint.
    assert (since.head, since.meters, since.meter_awards) == (full.head, full.meters,
                                                              full.meter_awards)  # fmt: skip
    assert since.checkpoint is not None
    assert since.checkpoint == full.checkpoint and since.checkpoint.seq > latest
    assert f"seq {latest + 1:,}..{end:,}" in format_report(since)
    # In segments too.
    parts = await verify(journal, CONFIG, since=first.checkpoint, jobs=3)
    assert parts == since


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(150, 500), st.integers(40, 120))
def test_from_any_checkpoint_the_replay_ends_where_the_whole_replay_does(
    rng: random.Random, steps: int, every: int
) -> None:
    """Property: whatever the history and whichever stored snapshot a clean run would
    have printed as its checkpoint, the run from it ends on the head, meters, awards and
    next checkpoint of the replay from entry 1."""

    async def scenario() -> None:
        floor = Floor(seed=rng.randrange(2**32), snapshot_every=every)
        await History(floor, rng).run(steps)
        journal = floor.journal
        rows = await rows_of(journal)
        whole = await verify(journal, CONFIG)
        assert whole.ok, format_report(whole)
        seqs = await journal.snapshot_seqs()
        assert seqs and whole.checkpoint is not None and whole.checkpoint.seq == seqs[-1]
        for seq in seqs:
            text = await journal.snapshot_at(seq)
            assert text is not None
            since = Checkpoint(seq, rows[seq - 1].hash, hashlib.sha256(text.encode()).hexdigest())
            part = await verify(journal, CONFIG, since=since)
            assert part.ok, format_report(part)
            assert (part.first_seq, part.entries) == (seq + 1, whole.last_seq - seq)
            assert (part.head, part.meters, part.meter_awards, part.pending_awards,
                    part.checkpoint) == (whole.head, whole.meters, whole.meter_awards,
                                         whole.pending_awards, whole.checkpoint)  # fmt: skip

    asyncio.run(scenario())


async def test_a_checkpoint_vouches_only_for_the_journal_it_was_taken_on() -> None:
    floor = await _history_with_snapshots(steps=1_200)
    journal = floor.journal
    checkpoint = (await verify(journal, CONFIG)).checkpoint
    assert checkpoint is not None
    await _more(floor, 400)
    rows = await rows_of(journal)
    snapshots = {seq: await journal.snapshot_at(seq) for seq in await journal.snapshot_seqs()}

    async def forged(rows: list[JournalRow], snapshots: dict[int, str | None]) -> MemoryJournal:
        copy = MemoryJournal()
        await copy.append(rows)
        for seq, text in snapshots.items():
            if text is not None:
                await copy.save_snapshot(seq, 0, pack(text))
        return copy

    # An entry before the checkpoint changed, and the chain recomputed up to the end so
    # that it holds: the checkpoint's head is no longer the entry's hash.
    changed = [dataclasses.replace(r) for r in rows]
    seq = next(r.seq for r in changed if r.kind == "bets" and r.seq < checkpoint.seq - 5)
    _tamper(changed, seq, _raise_ante, rechain=True)
    report = await verify(await forged(changed, snapshots), CONFIG,
                          since=checkpoint)  # fmt: skip
    assert not report.ok and report.checkpoint is None
    assert [(d.seq, d.what.split(":")[0]) for d in report.discrepancies] == [
        (checkpoint.seq, "hash")
    ]
    # The snapshot at the checkpoint changed (a cent): its sha256 is not the verified one.
    state = json.loads(snapshots[checkpoint.seq] or "")
    state["floor"]["links"]["stud"]["meters"][0]["value"] += 10_000
    report = await verify(
        await forged(rows, {**snapshots, checkpoint.seq: canonical_json(state)}),
        CONFIG, since=checkpoint,
    )  # fmt: skip
    assert [(d.seq, d.kind) for d in report.discrepancies] == [(checkpoint.seq, "snapshot")]
    # An entry after the checkpoint changed: named as in a replay from entry 1.
    changed = [dataclasses.replace(r) for r in rows]
    seq = next(r.seq for r in changed if r.kind == "bets" and r.seq > checkpoint.seq)
    _tamper(changed, seq, _raise_ante)
    report = await verify(await forged(changed, snapshots), CONFIG,
                          since=checkpoint)  # fmt: skip
    assert _seqs(report) == {seq} and report.checkpoint is None
    # The untouched journal: clean from the checkpoint.
    assert (await verify(await forged(rows, snapshots), CONFIG,
                         since=checkpoint)).ok  # fmt: skip


def _raise_ante(entry: dict[str, Any]) -> None:
    entry["boxes"][0]["ante"] += 1_000_000  # a dollar more, as if the table had posted it


def test_checkpoint_parse_refuses_what_a_run_does_not_print() -> None:
    head, sha = "a" * 64, "b" * 64
    assert Checkpoint.parse(f" 12:{head}:{sha}\n") == Checkpoint(12, head, sha)
    for text in (f"0:{head}:{sha}", f"-1:{head}:{sha}", f"12:{head}", f"x:{head}:{sha}",
                 f"12:{head[:-1]}\n:{sha}",
                 f"12:{head.upper()}:{sha}", f"12:{head}:{sha[:-1]}", ""):  # fmt: skip
        with pytest.raises(ValueError, match="not a checkpoint"):
            Checkpoint.parse(text)


def test_plan_segments_after_a_checkpoint_cut_what_follows_it() -> None:
    assert plan_segments([100, 200, 300, 400, 500], 600, 2, start=300) == [400]
    assert plan_segments([100, 200, 300], 600, 3, start=300) == []  # none after it


def test_verify_since_on_the_command_line(
    fresh_dsn: str, floor_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`jackpot verify` prints the checkpoint; `--since` it replays only what follows, in
    processes too; a malformed checkpoint is refused (exit 2) before anything is read."""

    async def history(floor: Floor) -> int:
        await History(floor, random.Random(11)).run(700)
        return floor.writer.seq

    _write_to_postgres(fresh_dsn, floor_file, history, snapshot_every=300)
    assert main_verify(_args(fresh_dsn, floor_file, jobs=1)) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("checkpoint: "))
    checkpoint = Checkpoint.parse(line.removeprefix("checkpoint: "))
    assert f"jackpot verify --since {checkpoint}" in out

    async def more(floor: Floor) -> int:
        # A new writer on the same journal, as after a restart: the state recovered.
        await floor.writer.recover()
        last = await floor.journal.last()
        assert last is not None
        floor.now = last.recorded_at_ms + 60_000
        await _more(floor, 300)
        return floor.writer.seq

    end = _write_to_postgres(fresh_dsn, floor_file, more, snapshot_every=300)
    assert main_verify(_args(fresh_dsn, floor_file, jobs=2, since=str(checkpoint))) == 0
    out = capsys.readouterr().out
    assert f"seq {checkpoint.seq + 1:,}..{end:,}" in out and "OK" in out
    assert f"from the checkpoint at seq {checkpoint.seq:,}" in out
    assert main_verify(_args(fresh_dsn, floor_file, jobs=1, since="12:nothex:x")) == 2
    assert "not a checkpoint" in capsys.readouterr().err


async def _more(floor: Floor, steps: int) -> None:
    """The floor goes on: rounds numbered after the first history's."""
    history = History(floor, random.Random(steps))
    history.rounds = 100_000
    await history.run(steps)


async def _snapshot_seqs(dsn: str) -> list[int]:
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
    try:
        return await PostgresJournal(pool).snapshot_seqs()
    finally:
        await pool.close()


# -- a long random history through the HTTP API --------------------------


async def test_a_long_random_history_through_the_http_api_verifies_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every game of the demo floor, rounds dealt by the simulator's decks (boosted so
    that jackpots happen), outcomes posted in random order across tables, voids, seed
    changes, resets and corrections, all through the HTTP API; then the journal verifies
    clean from its entries alone."""
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")  # verify with the writers' key: the demo's
    from app.cli.audit import load_config
    from app.cli.simulated_rounds import bets_body, outcome_body, plan_round, read_tables
    from app.config.demo import DEMO_FLOOR
    from app.config.floor_file import load_floor

    rng = random.Random(2027)
    specs = read_tables(DEMO_FLOOR)
    journal = MemoryJournal()
    now = [START]
    server = build_server(
        load_floor(DEMO_FLOOR), journal=journal, clock=lambda: now[0], outcome_wait_s=0.0
    )
    app = server.app
    supervisor = {"Authorization": "Bearer demo-supervisor"}
    open_rounds: dict[str, tuple[Any, str, Any, int]] = {}  # table -> spec, round, plan, closed
    counts: Counter[str] = Counter()
    async with running(app) as c:

        async def table_post(spec: Any, round_id: str, kind: str, body: Any) -> None:
            headers = {"Authorization": f"Bearer {spec.token}"}
            r = await c.post(f"/v1/tables/{spec.id}/rounds/{round_id}/{kind}", json=body,
                             headers=headers)  # fmt: skip
            assert r.status_code == 200, (kind, r.text)
            counts[kind] += 1

        for n in range(700):
            now[0] += rng.randrange(20, 400)
            idle = [s for s in specs if s.id not in open_rounds]
            oldest = min((v[3] for v in open_rounds.values()), default=now[0])
            r = rng.random()
            if idle and r < 0.45 and now[0] - oldest < 60_000:
                spec = rng.choice(idle)
                plan = plan_round(spec, rng, boost=3_000)
                closed = now[0] - rng.randrange(0, 300)
                await table_post(spec, f"H{n}", "bets", bets_body(plan, closed))
                open_rounds[spec.id] = (spec, f"H{n}", plan, closed)
            elif open_rounds and r < 0.9:
                # Any open round, not the oldest first: outcomes arrive out of deal order.
                spec, round_id, plan, closed = open_rounds.pop(rng.choice(sorted(open_rounds)))
                if plan.void or rng.random() < 0.04:
                    await table_post(spec, round_id, "void", {"reason": "misdeal (5.8)"})
                else:
                    dealt = min(closed + rng.randrange(100, 2_000), now[0])
                    await table_post(spec, round_id, "outcome", outcome_body(plan, dealt))
            else:
                link, meter = rng.choice((("stud", "major"), ("tcp", "major")))
                path = f"/v1/links/{link}/meters/{meter}"
                kind = rng.choice(("seed", "reset", "adjust", "hand_paid"))
                if kind == "seed":
                    seed = rng.choice(("5000.00", "9000.00", "10000.00", "12000.00"))
                    r2 = await c.put(f"{path}/seed", json={"seed": seed, "reason": "promo"},
                                     headers=supervisor)  # fmt: skip
                elif kind == "reset":
                    body = {"reason": "audit", "reason_code": "regulator_order"}
                    r2 = await c.post(f"{path}/reset", json=body, headers=supervisor)
                else:
                    amount = "-0.05" if kind == "adjust" else "100.00"
                    body = {"kind": kind, "amount": amount, "reason": "5.24",
                            "reason_code": "error_correction"}  # fmt: skip
                    r2 = await c.post(f"{path}/corrections", json=body, headers=supervisor)
                assert r2.is_success, (kind, r2.text)
                counts[kind] += 1
        report = await verify(journal, load_config(DEMO_FLOOR))
        last = await journal.last()
    assert report.ok, format_report(report)
    assert last is not None and report.entries == last.seq
    assert counts["outcome"] > 100 and counts["void"] > 3, counts
    assert all(counts[k] for k in ("seed", "reset", "adjust", "hand_paid")), counts
    assert report.meter_awards > 3 and report.fixed_awards > 3, format_report(report)


# -- late bets with an on-time win, voids at the current position ----

JUNK = "2C 3D 4D 7S 9C"


def one(cards: str, dealt_at: int) -> dict[str, Any]:
    """An outcome body: box 1's hand."""
    return {"boxes": [hand(1, cards, dealt_at)], "dealer": None}


async def edge_history(floor: Floor, correction: dict[str, Any] | None = None) -> None:
    """Late bets and an on-time win (4.5.2); a void of a settled round while a later round's
    straight flush, then royal flush, is pending (5.20), the second after a reset so that
    the meter no longer holds the reversed contribution; a void_round correction."""
    t0 = floor.now
    await floor.post("bets", "T01", "B1", {"closed_at": t0 + 500, "boxes": [box(1)]})
    floor.now = t0 + 2_600  # T02's bets closed at t0 arrive 2.6 s later: late
    late = await floor.post("bets", "T02", "A1", {"closed_at": t0, "boxes": [box(1)]})
    assert late["late"] is True
    floor.now = t0 + 3_000
    await floor.post("outcome", "T01", "B1", one("AS KS QS JS TS", t0 + 2_900))
    floor.now = t0 + 3_100
    await floor.post("outcome", "T02", "A1", one("AH KH QH JH TH", t0 + 2_800))
    await floor.later(10_000)
    for n, (cards, meter) in enumerate((("9H 8H 7H 6H 5H", "holds"), ("AD KD QD JD TD", "reset"))):
        r1, r2, t = f"V{n}", f"W{n}", floor.now
        await floor.post("bets", "T01", r1, {"closed_at": t, "boxes": [box(1)]})
        await floor.post("outcome", "T01", r1, one(JUNK, t + 10))
        await floor.post("bets", "T02", r2, {"closed_at": t + 20, "boxes": [box(1)]})
        floor.now += 100
        won = await floor.post("outcome", "T02", r2, one(cards, t + 50))
        assert won["awards"][0]["state"] == "pending"
        floor.now += 200  # R1's error is noticed while R2's award is pending: R1 voided
        await floor.post("void", "T01", r1, {"reason": f"5.20, meter {meter}", "boxes": None})
        await floor.later(10_000)
    # A round whose award is final, voided by a supervisor (5.24), while another is pending.
    t = floor.now
    await floor.post("bets", "T01", "C1", {"closed_at": t, "boxes": [box(1)]})
    await floor.post("outcome", "T01", "C1", one("9S 8S 7S 6S 5S", t + 10))
    await floor.later(5_000)
    await floor.post("bets", "T02", "C2", {"closed_at": floor.now, "boxes": [box(1)]})
    await floor.post("outcome", "T02", "C2", one("9C 8C 7C 6C 5C", floor.now + 10))
    floor.now += 100
    await floor.post(
        "correct", None, None,
        {"correction": "void_round", "link": "stud", "meter": "major", "amount": 0,
         "reset": True, "table": "T01", "round": "C1", "reason": "5.24",
         "reason_code": "error_correction",
         **({"version": 2} if correction is None else correction)},
        by="sam",
    )  # fmt: skip
    await floor.later(10_000)


async def test_issue_16_edges_pay_by_deal_order_and_void_at_the_current_position() -> None:
    floor = Floor()
    await edge_history(floor)
    awards = floor.writer.service.floor.awards
    amount = {a.id: (a.amount, a.sequence) for a in awards.values()}
    # 4.5.2: A (late bets, dealt first) takes the whole meter, B the seed that follows.
    assert amount["T02/A1/1/player"] == (m("10000.50"), 1)
    assert amount["T01/B1/1/player"] == (m("10000.00"), 2)
    # 5.20: the voided round's 0.25 stays in the pending awards dealt before the void.
    assert amount["T02/W0/1/player"] == (m("1000.05"), 3)  # 10 % of 10000.50
    assert amount["T02/W1/1/player"] == (m("9000.70"), 4)  # 9000.20 + two 0.25
    assert amount["T01/C1/1/player"] == (m("1000.02"), 5)  # 10 % of 10000.25: it stands
    # The correction's reversal comes after C2's straight flush: 10 % of 9000.48.
    assert amount["T02/C2/1/player"] == (m("900.04"), 6)
    major = floor.writer.service.floor.links["stud"].meters[0]
    # W0's and C1's voids: out of the meter and the reserve; W1's: after the reset, the
    # house covers it.
    assert (major.value, major.reserve) == (m("8100.19"), m("0.05"))
    assert (major.reversed_meter, major.reversed_reserve) == (m("0.75"), m("0.15"))
    assert (major.house_cover_meter, major.house_cover_reserve) == (m("0.25"), m("0.05"))
    report = verify_rows(await rows_of(floor.journal)).report()
    assert report.ok, format_report(report)
    assert report.entries == floor.writer.seq
    # The reconciliation shows the voids, at the position they took effect.
    rec, _ = await reconciliation(floor.journal, CONFIG, -(2**62), 2**62)
    row = next(r for r in rec["meters"] if (r["link"], r["meter"]) == ("stud", "major"))
    assert (row["reversed_meter"], row["reversed_reserve"]) == ("0.75", "0.15")
    assert (row["house_cover"], row["balanced"]) == ("0.30", True)


def test_a_journal_written_before_issue_16_replays_as_it_was_applied() -> None:
    """Entries without `version` (1) replay by the rules they were written under: the same
    edges, journaled by the code of the first version (the `data` folder here), verify clean and
    give back the amounts that code paid (printed by it when it wrote the file)."""
    path = Path(__file__).parent / "data" / "journal_v1_edges.jsonl"
    rows = [JournalRow(**json.loads(line)) for line in path.read_text().splitlines()]
    assert not any("version" in json.loads(row.entry) for row in rows)
    verifier = verify_rows(rows)
    report = verifier.report()
    assert report.ok, format_report(report)
    paid = {a.id: (a.amount, a.sequence, a.late) for a in verifier.service.floor.awards.values()}
    assert paid == {
        "T01/B1/1/player": (m("10000.50"), 1, False),
        "T02/A1/1/player": (m("10000.00"), 2, True),  # version 1: demoted by its late bets
        "T02/W0/1/player": (m("1000.02"), 3, False),  # version 1: the void in event time
        "T02/W1/1/player": (m("9000.48"), 4, False),
        "T01/C1/1/player": (m("1000.02"), 5, False),
        "T02/C2/1/player": (m("900.02"), 6, False),
    }
    major = verifier.service.floor.links["stud"].meters[0]
    assert (major.value, major.reserve) == (m("8100.21"), m("0.05"))


async def test_5_20_a_voided_rounds_pending_royal_flush_verifies_and_reconciles() -> None:
    """R1's royal flush (T01) and R2's (T02, dealt after it) are pending when R1 is voided:
    R2 takes the value that follows R1's (4.5.1, 5.20), R1's amount is paid to nobody and
    returns to the meter; the replay checks every step and the reconciliation shows it."""
    floor = Floor()
    t = floor.now
    await floor.post("bets", "T01", "R1", {"closed_at": t, "boxes": [box(1)]})
    await floor.post("bets", "T02", "R2", {"closed_at": t + 100, "boxes": [box(1)]})
    floor.now = t + 1_200
    await floor.post("outcome", "T01", "R1", one("AS KS QS JS TS", t + 1_000))
    floor.now = t + 1_600
    await floor.post("outcome", "T02", "R2", one("AH KH QH JH TH", t + 1_500))
    floor.now = t + 2_200  # noticed after R2 began
    await floor.post("void", "T01", "R1", {"reason": "5.20", "boxes": None})
    await floor.later(1_700)  # both wins final, the void's position (2.2 s) not yet
    assert floor.writer.service.floor.links["stud"].meters[0].withheld == m("0.50")
    await floor.later(10_000)
    awards = floor.writer.service.floor.awards
    r1, r2 = awards["T01/R1/1/player"], awards["T02/R2/1/player"]
    assert (r2.state, r2.amount) == ("final", m("10000.00"))  # the seed R1's reset left
    assert (r1.state, r1.amount) == ("void", m("10000.50"))
    shown = round_view(floor.writer.service, "T01", "R1")["awards"][0]
    assert (shown["state"], shown["withheld"], "amount" in shown) == ("void", "10000.50", False)
    major = floor.writer.service.floor.links["stud"].meters[0]
    assert (major.value, major.awards_withheld, major.awards_returned) == (
        m("10000.25"),
        m("10000.50"),
        m("10000.50"),
    )
    report = verify_rows(await rows_of(floor.journal)).report()
    assert report.ok, format_report(report)
    assert report.meter_awards == 1
    rec, _ = await reconciliation(floor.journal, CONFIG, -(2**62), 2**62)
    row = next(r for r in rec["meters"] if (r["link"], r["meter"]) == ("stud", "major"))
    assert (row["awards"], row["awards_withheld"], row["awards_returned"]) == (
        "10000.00",
        "10000.50",
        "10000.50",
    )
    assert (row["closing_value"], row["balanced"]) == ("10000.25", True)
