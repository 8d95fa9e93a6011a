"""Prints the jackpot core's in-process throughput for a realistic floor mix.

    .venv/bin/python bench/bench_core.py [--tables 200] [--rounds 40000]

Mix: many tables on one link; each round is a bets-closed with 7 boxes (all with a
jackpot wager), then its outcome; about 1 round in 200 has a straight flush and 1 in
5,000 a royal flush; the writer's Finalize runs every 100 ms of simulated time. Event
times advance like a busy floor; arrival is in order with a small delay.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jackpot.commands import BoxWager, CloseBets, Command, Finalize, MeterClaim, RecordOutcome  # noqa: E402
from jackpot.config import LinkConfig, MeterConfig, Timing  # noqa: E402
from jackpot.floor import Floor  # noqa: E402
from jackpot.money import Rate, parse_money, parse_rate  # noqa: E402


def build(tables: int, rounds: int, rng: random.Random) -> list[Command]:
    commands: list[Command] = []
    wager = parse_money("1.00")
    now = 0
    pending: list[tuple[int, Command]] = []
    last_finalize = 0
    for i in range(rounds):
        now += 1 + rng.randrange(3)
        table = f"T{i % tables}"
        rnd = f"R{i}"
        boxes = tuple(BoxWager(b, wager) for b in range(1, 8))
        commands.append(CloseBets(table, rnd, "stud", now, now, boxes))
        claims: tuple[MeterClaim, ...] = ()
        roll = rng.randrange(5_000)
        if roll == 0:
            claims = (MeterClaim(3, "player", "royal_flush", Rate(10_000), now + 500),)
        elif roll < 25:
            claims = (MeterClaim(5, "player", "straight_flush", Rate(1_000), now + 500),)
        pending.append((now + 2_000, RecordOutcome(table, rnd, now + 2_000, claims)))
        while pending and pending[0][0] <= now:
            commands.append(pending.pop(0)[1])
        if now - last_finalize >= 100:
            commands.append(Finalize(now))
            last_finalize = now
    commands.extend(c for _, c in pending)
    commands.append(Finalize(now + 10_000))
    return commands


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40_000)
    args = parser.parse_args()
    meter = MeterConfig("major", parse_money("10000.00"), parse_rate("0.25"), parse_rate("0.05"))
    link = LinkConfig("stud", (meter,))
    commands = build(args.tables, args.rounds, random.Random(7))
    floor = Floor([link], Timing())
    start = time.perf_counter()
    for command in commands:
        floor.apply(command)
    elapsed = time.perf_counter() - start
    contributions = args.rounds * 7
    awards = sum(1 for a in floor.awards.values() if a.state == "final")
    assert all(m.balanced() for m in floor.links["stud"].meters)
    print(f"commands applied:      {len(commands):,} in {elapsed:.2f} s")
    print(f"commands/s:            {len(commands) / elapsed:,.0f}")
    print(f"contributions/s:       {contributions / elapsed:,.0f}  (goal >= 100,000 on one core)")
    print(f"meter awards final:    {awards}")


if __name__ == "__main__":
    main()
