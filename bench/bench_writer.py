"""Prints the single writer's own time per bets event, without HTTP or PostgreSQL.

    .venv/bin/python bench/bench_writer.py [--groups 200] [--group 64] [--boxes 7] [--profile]
                                           [--cpu] [--repeat 1]

What `Writer.process` costs for a group of bets as the HTTP bench posts them (the demo
floor's T01 and T02, every box with an ante and a jackpot wager, a new round each): the
rules check, the contributions, the journal row and its hash, the idempotency record and
the answer; the journal is a list (no database), the cyclic collector off: nothing waits,
so the time is one core's CPU time, unless another process shares the core: `--cpu`
counts this process's CPU time instead (steadier on a shared machine), `--repeat` runs
the whole again on a new writer and prints each run and the smallest. Compare with the
whole server's CPU per request (`bench/bench_http.py`, docs/performance.md "Current
figures"): the rest is HTTP, validation and the commit.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_verify import ListJournal  # noqa: E402  (a sibling script: the journal as a list)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_floor import bench_floor  # noqa: E402  (a sibling script)

from app.api.table_events.decoding import decode  # noqa: E402
from app.config.floor_config import floor_config  # noqa: E402
from app.config.floor_file import load_floor  # noqa: E402
from app.state.floor_state import FloorState  # noqa: E402
from app.state.sealing import DEMO_KEY  # noqa: E402
from app.state.timefmt import format_time  # noqa: E402
from app.writer.group import Submission  # noqa: E402
from app.writer.writer import Writer  # noqa: E402
from app.writer.writer_settings import WriterSettings  # noqa: E402

FLOOR = bench_floor()
START = 1_800_000_000_000


async def run(
    groups: int, group: int, boxes: int, profile: cProfile.Profile | None, cpu: bool = False
) -> float:
    clock = time.process_time if cpu else time.perf_counter
    # The demo floor's must-hit-by levels seal their triggers: the demo's key, as `jackpot demo`.
    config = floor_config(load_floor(FLOOR), DEMO_KEY)
    now = [START]
    settings = WriterSettings(clock=lambda: now[0], snapshot_every=10**9)
    writer = Writer(FloorState(config), ListJournal(), settings)
    loop = asyncio.get_running_loop()
    box = '{"box":%d,"ante":"10.00","jackpot":"1.00"}'
    template = '{"closed_at":"%s","boxes":[' + ",".join(box % b for b in range(1, boxes + 1)) + "]}"
    n, spent = 0, 0.0
    for _ in range(groups):
        now[0] += 30
        subs = []
        for _ in range(group):
            n += 1
            body = decode("bets", (template % format_time(now[0] - 10)).encode())
            table = ("T01", "T02")[n % 2]
            subs.append(Submission("bets", table, f"R{n}", body, None, loop.create_future()))
        started = clock()
        if profile is not None:
            profile.enable()
        await writer.process(subs)
        if profile is not None:
            profile.disable()
        spent += clock() - started
        for sub in subs:  # every one recorded (201: first post), every box accepted
            status, text = sub.future.result()  # the answer as journaled (JSON text)
            answer = json.loads(text) if isinstance(text, str) else text
            assert status == 201 and all(b["jackpot"] == "accepted" for b in answer["boxes"])
    return spent / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--group", type=int, default=64)
    parser.add_argument("--boxes", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="process CPU time, not wall time")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    profile = cProfile.Profile() if args.profile else None
    gc.disable()  # the server keeps its state out of the collector (app/writer/writer.py)
    what = "CPU" if args.cpu else "wall"
    runs = []
    for _ in range(args.repeat):
        per_event = asyncio.run(run(args.groups, args.group, args.boxes, profile, args.cpu))
        runs.append(per_event)
        print(
            f"writer: {per_event * 1e6:.1f} µs {what} per bets event ({args.boxes} boxes, "
            f"groups of {args.group}, {args.groups * args.group:,} events; no HTTP, no database)"
        )
    if args.repeat > 1:
        print(f"writer: min {min(runs) * 1e6:.1f} µs {what} per bets event over {len(runs)} runs")
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
