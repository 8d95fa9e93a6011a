"""Prints how many journal entries `jackpot verify` checks per second.

    .venv/bin/python bench/bench_verify.py [--entries 1000000] [--tables 200]
        [--round-s 60] [--outcome-s 40] [--profile] [--jobs 2]

The journal is written first by the real single writer (app/writer/writer.py: `process`, driven
the way its task drives it, the timer's finalize entries included) at a simulated time:
a floor of `--tables` tables on two links (casino stud, multi-link stud, three card
poker, singapore stud) each dealing a round every `--round-s` seconds (give or take a
third), its bets posted as they close with 1 to 7 boxes, its outcome `--outcome-s` later
with real cards; a straight flush about once in 2,000 rounds and a royal flush once in
20,000 (far more often than cards give them, to exercise pending and final awards), a
void once in 100 rounds. Then a Verifier replays all of it as `jackpot verify` does
(chain, rules, answers, ledger) and the figure is the entries per second of that replay
alone, reading rows from memory (no database).

With `--jobs N` the same journal and the writer's snapshots are then put in an embedded
PostgreSQL and verified as `jackpot verify` does, with one process and with N (segments
cut at snapshots, each in a process of its own, app/audit/segments.py); then as the daily run
after a checkpoint does (`--since`, from the snapshot nearest 24 h of floor time before
the end: the journal needs more than a day of floor time, as the default 1,000,000
entries at 200 tables give).

`--round-s 0.3 --outcome-s 2` compresses time 200-fold (bench_core.py's floor): the
same entries, but hundreds of events pending at once and a pending award most of the
time, which the provisional meter values in every answer replay (jackpot/link.py).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import heapq
import pstats
import random
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.audit.checkpoint import Checkpoint  # noqa: E402
from app.audit.findings import format_report  # noqa: E402
from app.audit.replay_check import Verifier  # noqa: E402
from app.audit.segments import without_cyclic_gc  # noqa: E402
from app.audit.verify_run import verify  # noqa: E402
from app.state.floor_state import FloorConfig, FloorState, TableConfig  # noqa: E402
from app.store.database import create_pool, migrate, start_embedded  # noqa: E402
from app.store.journal import JournalRow, PostgresJournal  # noqa: E402
from app.store.packing import pack, unpack_bytes  # noqa: E402
from app.writer.group import Submission  # noqa: E402
from app.writer.writer import Writer  # noqa: E402
from app.writer.writer_settings import WriterSettings  # noqa: E402
from jackpot.config import LinkConfig, MeterConfig, Timing  # noqa: E402
from jackpot.money import parse_money, parse_rate  # noqa: E402
from tables.bets import TableSettings  # noqa: E402
from tables.cards import DECK  # noqa: E402
from tables.games import game  # noqa: E402
from tests.support import as_command  # noqa: E402  (fields as the state reads them)

GAMES = (
    ("casino_stud", "stud", 5),
    ("multi_link_casino_stud", "stud", 5),
    ("three_card_poker", "tcp", 3),
    ("singapore_stud", "stud", 5),
)
ROYAL = {5: ["AS", "KS", "QS", "JS", "TS"], 3: ["AS", "KS", "QS"]}
STRAIGHT_FLUSH = {5: ["9H", "8H", "7H", "6H", "5H"], 3: ["5D", "6D", "7D"]}
CARDS = [str(card) for card in DECK]
START = 1_800_000_000_000


class ListJournal:
    """Only what the writer calls while every request is new: append, in order."""

    def __init__(self) -> None:
        self.rows: list[JournalRow] = []
        self.snapshots: dict[int, str] = {}

    async def append(self, rows: Sequence[JournalRow]) -> None:
        self.rows.extend(rows)

    async def lookup(self, idem_key: str) -> JournalRow | None:
        return None

    async def last(self) -> JournalRow | None:
        return self.rows[-1] if self.rows else None

    async def save_snapshot(self, seq: int, taken_at_ms: int, packed: bytes) -> None:
        self.snapshots[seq] = unpack_bytes(packed, seq)

    async def ping(self) -> None:
        pass

    async def latest_snapshot(self) -> tuple[int, bytes] | None:
        return None

    async def latest_snapshot_seq(self) -> int | None:
        return None

    async def snapshot_before(self, at_ms: int, upto_seq: int) -> tuple[int, bytes] | None:
        return None

    async def snapshot_seqs(self) -> list[int]:
        return sorted(self.snapshots)

    async def snapshot_at(self, seq: int) -> str | None:
        return self.snapshots.get(seq)

    async def close(self) -> None:
        pass

    async def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        for row in self.rows[after_seq:]:
            yield row


def floor(tables: int) -> FloorConfig:
    links = (
        LinkConfig("stud", (
            MeterConfig("major", parse_money("10000.00"), parse_rate("0.25"), parse_rate("0.05")),
        )),
        LinkConfig("tcp", (
            MeterConfig("major", parse_money("5000.00"), parse_rate("0.20"), parse_rate("0.05")),
        )),
    )  # fmt: skip
    one = parse_money("1.00")
    table_configs = {}
    for i in range(tables):
        name, link, _ = GAMES[i % len(GAMES)]
        table_configs[f"T{i:03d}"] = TableConfig(
            f"T{i:03d}", link, TableSettings(game(name), one, 7)
        )
    return FloorConfig("SGD", Timing(), links, table_configs)


def _bets(rng: random.Random, closed_at: int, dealer: bool) -> dict[str, Any]:
    boxes = []
    for n in sorted(rng.sample(range(1, 8), rng.randint(1, 7))):
        boxes.append({"box": n, "ante": 10_000_000, "jackpot": 1_000_000,
                      "jackpot_dealer": 1_000_000 if dealer and rng.random() < 0.3 else 0,
                      "player": None})  # fmt: skip
    return {"closed_at": closed_at, "boxes": boxes}


def _outcome(
    rng: random.Random, size: int, dealer: bool, bets: dict[str, Any], dealt_at: int
) -> dict[str, Any]:
    roll = rng.randrange(20_000)
    special = ROYAL[size] if roll == 0 else STRAIGHT_FLUSH[size] if roll < 10 else None
    deck = [c for c in CARDS if special is None or c not in special]
    rng.shuffle(deck)
    hands = []
    for i, b in enumerate(bets["boxes"]):
        dealt_at += rng.choice((0, 20, 35))
        cards = special if special is not None and i == 0 else [deck.pop() for _ in range(size)]
        hands.append({"box": b["box"], "dealt_at": dealt_at, "cards": cards, "folded": False})
    body: dict[str, Any] = {"boxes": hands, "dealer": None}
    if dealer:
        body["dealer"] = {"cards": [deck.pop() for _ in range(5)], "dealt_at": dealt_at + 10}
    return body


async def write(
    config: FloorConfig, entries: int, seed: int, round_ms: int, outcome_ms: int
) -> ListJournal:
    """The floor's journal, written by the real writer, as its task would drive it."""
    rng = random.Random(seed)
    journal = ListJournal()
    clock = [START]
    settings = WriterSettings(clock=lambda: clock[0], rng=random.Random(seed))
    writer = Writer(FloorState(config), journal, settings)
    loop = asyncio.get_running_loop()
    # (arrival time, n, table, kind, round, body): each table deals its next round as
    # soon as the last one's outcome is in; events arrive 5 to 50 ms after their time.
    events: list[tuple[int, int, str, str, str, dict[str, Any]]] = []
    n = 0
    for i, table in enumerate(sorted(config.tables)):
        n += 1
        events.append((START + rng.randrange(round_ms), n, table, "next", "", {"i": i}))
    heapq.heapify(events)
    while len(journal.rows) < entries:
        at, _, table, kind, round_id, body = events[0]
        # The writer's timer: it wakes up to finalise (and prune) when that is due.
        sleep = writer.timer.sleep_s()
        if sleep is not None and clock[0] + int(sleep * 1000) + 1 < at:
            clock[0] += max(1, int(sleep * 1000) + 1)
            await _process(writer, None)
            continue
        heapq.heappop(events)
        clock[0] = max(clock[0], at)
        if kind == "next":  # bets close at a table
            i = body["i"]
            name, _, size = GAMES[i % len(GAMES)]
            n += 1
            round_id = f"R{n}"
            bets = _bets(rng, at - 20, name == "singapore_stud")
            command = as_command("bets", bets)
            await _process(writer, Submission("bets", table, round_id, command, None,
                                              loop.create_future()))  # fmt: skip
            later = at + outcome_ms * rng.randrange(70, 130) // 100
            if rng.random() < 0.01:
                body = {"reason": "misdeal (5.8)", "boxes": None}
                heapq.heappush(events, (at + 5_000, n, table, "void", round_id, body))
                later = at + 5_000
            else:
                dealt = _outcome(rng, size, name == "singapore_stud", bets, at + 3_000)
                heapq.heappush(events, (later, n, table, "outcome", round_id, dealt))
            gap = round_ms * rng.randrange(67, 133) // 100
            heapq.heappush(events, (max(later, at + gap) + 30, n, table, "next", "", {"i": i}))
            continue
        command = as_command(kind, body)
        await _process(
            writer, Submission(kind, table, round_id, command, None, loop.create_future())
        )
    del journal.rows[entries:]
    journal.snapshots = {seq: text for seq, text in journal.snapshots.items() if seq < entries}
    return journal


async def _process(writer: Writer, sub: Submission | None) -> None:
    """One request (None: the writer's timer), and the snapshot it may have started stored
    before the next, as the server's loop would have done meanwhile."""
    await writer.process([] if sub is None else [sub])
    if writer.snapshots.task is not None:
        await writer.snapshots.task
    if sub is None:
        return
    error = sub.future.exception()
    if error is not None:
        raise SystemExit(f"the writer refused {sub.kind} {sub.table}/{sub.round}: {error}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--round-s", type=float, default=60.0)
    parser.add_argument("--outcome-s", type=float, default=40.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    parser.add_argument("--sort", default="tottime", help="profile order: tottime, cumulative")
    parser.add_argument(
        "--jobs", type=int, default=0,
        help="also verify from PostgreSQL with one process and with this many (segments)",
    )  # fmt: skip
    args = parser.parse_args()
    config = floor(args.tables)
    start = time.perf_counter()
    journal = asyncio.run(
        write(config, args.entries, args.seed, int(args.round_s * 1000),
              int(args.outcome_s * 1000))
    )  # fmt: skip
    rows = journal.rows
    written = time.perf_counter() - start
    hours = (rows[-1].recorded_at_ms - START) / 3_600_000
    print(f"journal written:   {len(rows):,} entries in {written:.0f} s by the writer "
          f"({hours:,.1f} h of floor time)")  # fmt: skip
    verifier = Verifier(config)
    feed = verifier.feed
    profile = cProfile.Profile() if args.profile else None
    if profile is not None:
        profile.enable()
    start = time.perf_counter()
    with without_cyclic_gc():  # as `jackpot verify` replays
        for row in rows:
            feed(row)
    elapsed = time.perf_counter() - start
    if profile is not None:
        profile.disable()
    report = verifier.report()
    kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(report.kinds.items()))
    print(f"entries:           {kinds}")
    print(f"meter awards:      {report.meter_awards:,} final, {report.pending_awards} pending")
    print(f"verified:          {report.entries:,} entries in {elapsed:.1f} s"
          f"  ({'clean' if report.ok else 'DISCREPANCIES'})")  # fmt: skip
    print(f"entries/s:         {report.entries / elapsed:,.0f}  (goal >= 100,000)")
    if not report.ok:
        print(format_report(report, shown=5))
    if profile is not None:
        pstats.Stats(profile).sort_stats(args.sort).print_stats(40)
    if args.jobs > 1:
        asyncio.run(from_postgres(config, journal, args.jobs))


async def from_postgres(config: FloorConfig, journal: ListJournal, jobs: int) -> None:
    """`jackpot verify` as it runs: the journal in PostgreSQL (embedded, a fresh folder),
    one process, then `jobs` processes over segments cut at the writer's snapshots."""
    folder = Path(tempfile.mkdtemp(prefix="jackpot-bench-pg-"))
    folder.chmod(0o755)  # as root, PostgreSQL runs as its own user (tests/conftest.py)  # noqa: ASYNC240 - before the server starts
    embedded = await start_embedded(folder, delete_on_stop=True)
    try:
        await migrate(embedded.dsn)
        pool = await create_pool(embedded.dsn)
        try:
            stored = PostgresJournal(pool, timeout=600.0)
            for i in range(0, len(journal.rows), 10_000):
                await stored.append(journal.rows[i : i + 10_000])
            for seq, text in journal.snapshots.items():
                await stored.save_snapshot(seq, 0, pack(text))
            print(f"in PostgreSQL:     {len(journal.rows):,} entries, "
                  f"{len(journal.snapshots)} snapshots")  # fmt: skip
            for n in (1, jobs):
                start = time.perf_counter()
                report = await verify(stored, config, jobs=n, dsn=embedded.dsn)
                elapsed = time.perf_counter() - start
                print(f"verify --jobs {n}:  {report.entries:,} entries in {elapsed:.1f} s, "
                      f"{report.entries / elapsed:,.0f}/s  "
                      f"({'clean' if report.ok else 'DISCREPANCIES'})")  # fmt: skip
            # The daily run after a checkpoint: the snapshot nearest one day of floor time
            # before the end (the checkpoint an earlier run would have printed there).
            day = journal.rows[-1].recorded_at_ms - 86_400_000
            seqs = [seq for seq in journal.snapshots if journal.rows[seq - 1].recorded_at_ms >= day]
            if seqs:
                seq = min(seqs)
                text = journal.snapshots[seq]
                since = Checkpoint(seq, journal.rows[seq - 1].hash,
                                   hashlib.sha256(text.encode()).hexdigest())  # fmt: skip
                start = time.perf_counter()
                report = await verify(stored, config, jobs=jobs,
                                      dsn=embedded.dsn, since=since)  # fmt: skip
                elapsed = time.perf_counter() - start
                hours = journal.rows[-1].recorded_at_ms - journal.rows[seq - 1].recorded_at_ms
                print(f"verify --since (the last {hours / 3_600_000:.1f} h of floor time, "
                      f"--jobs {jobs}): {report.entries:,} entries in {elapsed:.1f} s  "
                      f"({'clean' if report.ok else 'DISCREPANCIES'})")  # fmt: skip
        finally:
            await pool.close()
    finally:
        await embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
