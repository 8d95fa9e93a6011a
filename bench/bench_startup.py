"""Prints the start-up time (recovery) with a journal of N entries (default one million).

    .venv/bin/python bench/bench_startup.py [--entries 1000000]

A floor of 300 rounds a minute (300 tables at one round a minute, a large casino)
writes a million entries in about 28 hours. Builds the journal through the real writer
(group commit into an embedded PostgreSQL,
snapshots every 50,000 entries, as the server does) from a simulated floor: tables
posting bets (7 boxes) and outcomes, the watermark advancing, now and then a win.
Then a fresh writer recovers from it, as `jackpot serve` does at start, and the time
is printed: latest snapshot + replay of the entries after it.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_floor import bench_floor  # noqa: E402  (a sibling script)

from app.config.floor_config import floor_config  # noqa: E402
from app.config.floor_file import load_floor  # noqa: E402
from app.state.floor_state import FloorState  # noqa: E402
from app.state.sealing import DEMO_KEY  # noqa: E402
from app.state.timefmt import format_time  # noqa: E402
from app.store.database import create_pool, migrate, start_embedded  # noqa: E402
from app.store.journal import PostgresJournal  # noqa: E402
from app.writer.group import Submission  # noqa: E402
from app.writer.writer import Writer  # noqa: E402
from app.writer.writer_settings import WriterSettings  # noqa: E402
from tests.support import as_command  # noqa: E402  (fields as the state reads them)

ROOT = Path(__file__).resolve().parent.parent
DECK = [r + s for r in "23456789TJQKA" for s in "SHDC"]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now


def submission(kind: str, table: str, rnd: str, body: dict[str, Any]) -> Submission:
    command = as_command(kind, body)
    return Submission(kind, table, rnd, command, None, asyncio.get_running_loop().create_future())


async def build(
    writer: Writer, clock: Clock, entries: int, rng: random.Random, per_minute: int
) -> None:
    n = 0
    pending: list[Submission] = []
    while writer.seq < entries:
        for table in ("T01", "T02"):
            n += 1
            rnd = f"R{n}"
            boxes = [{"box": b, "ante": 10_000_000, "jackpot": 1_000_000, "jackpot_dealer": 0,
                      "player": None} for b in range(1, 8)]  # fmt: skip
            pending.append(submission("bets", table, rnd, {"closed_at": clock.now, "boxes": boxes}))
            deck = rng.sample(DECK, 35)
            hands = [{"box": b, "dealt_at": clock.now + 5, "cards": deck[5 * (b - 1) : 5 * b],
                      "folded": False} for b in range(1, 8)]  # fmt: skip
            pending.append(submission("outcome", table, rnd, {"boxes": hands, "dealer": None}))
        if len(pending) >= 256:
            await writer.process(pending)
            for sub in pending:
                if sub.future.done() and sub.future.exception() is None:
                    continue
                error = sub.future.exception() if sub.future.done() else "unanswered"
                raise SystemExit(f"a request failed while building: {error}")
            pending = []
            # 128 rounds per group: the clock moves as on a floor dealing `per_minute`
            # rounds a minute (settled rounds leave memory after 15 minutes of it).
            clock.now += 128 * 60_000 // per_minute
            if writer.seq // 100_000 != (writer.seq - 256) // 100_000:
                print(f"  {writer.seq:,} entries", file=sys.stderr, flush=True)
    if writer.snapshots.task is not None:
        await writer.snapshots.task


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--rounds-per-minute", type=int, default=300, help="the whole floor's")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="jackpot-startup-"))
    folder.chmod(0o755)  # as root, pgserver runs PostgreSQL as its own user  # noqa: ASYNC240 - before the server starts
    database = await start_embedded(folder)
    try:
        await migrate(database.dsn)
        pool = await create_pool(database.dsn)
        # The demo floor's must-hit-by levels seal their triggers: the demo's key.
        config = floor_config(load_floor(bench_floor()), DEMO_KEY)
        clock = Clock()
        writer = Writer(FloorState(config), PostgresJournal(pool), WriterSettings(clock=clock))
        await writer.recover()
        started = time.perf_counter()
        await build(writer, clock, args.entries, random.Random(1), args.rounds_per_minute)
        print(f"built {writer.seq:,} entries in {time.perf_counter() - started:.0f} s "
              f"(up to {format_time(clock.now)})")  # fmt: skip
        fresh = Writer(FloorState(config), PostgresJournal(pool), WriterSettings(clock=clock))
        started = time.perf_counter()
        replayed = await fresh.recover()
        elapsed = time.perf_counter() - started
        assert fresh.seq == writer.seq and fresh.head == writer.head
        print(f"start-up (snapshot + replay of {replayed:,} entries): {elapsed:.2f} s "
              f"for a journal of {fresh.seq:,} entries (goal < 5 s)")  # fmt: skip
        await pool.close()
    finally:
        await database.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
