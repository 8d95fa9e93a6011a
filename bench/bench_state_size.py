"""Prints durable bets' requests/s and p99 on a floor already holding N open rounds, beside
a no-op FastAPI endpoint's, for each N given (needs `wrk`: apt-get install wrk).

    .venv/bin/python bench/bench_state_size.py [--open-rounds 1000 1000000]
        [--seconds 10] [--runs 3] [--connections 64]

What it shows: whether bets slow down as the state grows (docs/design.md "Recovery and
snapshots": the leader never dumps its state; the snapshotter process does). The goal: the
bets figures at 1,000 and at 1,000,000 open rounds differ by no more than the spread
between runs at one size.

For each N, in a fresh data folder:

1. The fill (not measured): a writer in this process, on the embedded PostgreSQL the
   server will use, is handed N bets of one box with a jackpot wager on new rounds at T01
   and T02, by 512 a group commit (the real kinds and journal, no HTTP: a few thousand
   a second on a busy 2-core machine, so a million takes minutes), then one snapshot of the
   state is stored so that the server starts from it rather than replaying N entries.
   The floor is the demo's with the open-rounds cap lifted (`max_open_rounds`, a floor
   setting) and `round_timeout_ms` at a day, so that no filled round turns stale or
   expires during the run: all N stay open and hold their link's watermark.
2. `jackpot serve` on that folder (the snapshotter process beside it) and the no-op app,
   both up at once; after a warm-up each, `--runs` interleaved pairs of wrk runs (no-op,
   then bets: bench_http.py's load, every request a new round of 7 boxes).

Printed per N: each pair's figures, then the medians and the bets/no-op ratios; and the
spread of bets' requests/s and p99 across runs at each N, to compare the sizes against.
Take the figures on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_floor import DEMO  # noqa: E402  (a sibling script: also sets JACKPOT_DEMO_TOKENS)
from bench_http import (  # noqa: E402
    NOOP_APP,
    PY,
    bets_lua,
    free_port,
    postmaster_pid,
    stop_pid,
    stop_process,
    wait_for_port,
    wait_health,
    wrk,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config.floor_config import floor_config  # noqa: E402
from app.config.floor_file import load_floor  # noqa: E402
from app.state.floor_state import FloorState  # noqa: E402
from app.state.sealing import DEMO_KEY  # noqa: E402
from app.state.timefmt import (
    format_time,  # noqa: E402
    wall_clock_ms,  # noqa: E402
)
from app.store.database import create_pool, migrate, start_embedded  # noqa: E402
from app.store.journal import PostgresJournal  # noqa: E402
from app.store.packing import pack  # noqa: E402
from app.store.snapshots import dump_text  # noqa: E402
from app.writer.group import Submission  # noqa: E402
from app.writer.writer import Writer  # noqa: E402
from app.writer.writer_settings import WriterSettings  # noqa: E402
from tests.support import table_command  # noqa: E402

GROUP = 512
DAY_MS = 86_400_000


def floor_file(work: Path) -> Path:
    """The demo floor, no cap on open rounds, none stale or expired within a day."""
    text = DEMO.read_text().replace("round_timeout_ms = 180000", f"round_timeout_ms = {DAY_MS}")
    path = work / "floor.toml"
    path.write_text("max_open_rounds = 100000000\n" + text)
    return path


async def fill(data_dir: Path, floor: Path, rounds: int) -> None:
    """`rounds` open rounds in the journal under data_dir, and a snapshot of them."""
    database = await start_embedded(data_dir)
    try:
        await migrate(database.dsn)
        pool = await create_pool(database.dsn)
        journal = PostgresJournal(pool)
        # The demo floor's must-hit-by level seals its draws with the demo's key.
        config = floor_config(load_floor(floor), DEMO_KEY)
        # No snapshot while filling: one at the end (below).
        settings = WriterSettings(snapshot_every=10**12)
        writer = Writer(FloorState(config), journal, settings)
        await writer.recover()
        loop = asyncio.get_running_loop()
        started, n = time.perf_counter(), 0
        while n < rounds:
            group = []
            body = {
                "closed_at": format_time(wall_clock_ms()),
                "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
            }
            for _ in range(min(GROUP, rounds - n)):
                n += 1
                table = "T01" if n % 2 else "T02"
                group.append(
                    Submission(
                        "bets", table, f"F{n}", table_command("bets", body), None,
                        loop.create_future(),
                    )
                )  # fmt: skip
            await writer.process(group)
            for sub in group:
                if sub.future.exception() is not None:
                    raise SystemExit(f"a bets failed while filling: {sub.future.exception()}")
            if n % 100_000 < GROUP:
                print(f"  {n:,} open rounds", file=sys.stderr, flush=True)
        text = dump_text(writer.service, writer.seq, writer.head)
        await journal.save_snapshot(writer.seq, wall_clock_ms(), pack(text))
        print(
            f"filled {n:,} open rounds in {time.perf_counter() - started:.0f} s"
            f" (snapshot: {len(text) / 1e6:.0f} MB of text)",
            file=sys.stderr,
        )
        await pool.close()
    finally:
        await database.stop()


def measure(rounds: int, args: argparse.Namespace) -> list[tuple[dict[str, float], ...]]:
    work = Path(tempfile.mkdtemp(prefix="jackpot-state-size-"))
    work.chmod(0o755)  # as root, pgserver runs PostgreSQL as its own user
    data_dir = work / "data"
    floor = floor_file(work)
    asyncio.run(fill(data_dir, floor, rounds))
    (work / "noop_app.py").write_text(NOOP_APP)
    noop_lua = work / "noop.lua"
    noop_lua.write_text(
        'wrk.method = "POST"\nwrk.body = \'{"a": 1}\'\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    noop_port, port = free_port(), free_port()
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    noop = subprocess.Popen(
        [PY, "-m", "uvicorn", "noop_app:app", "--port", str(noop_port)]
        + ["--log-level", "warning", "--no-access-log"],
        cwd=work,
    )
    server = subprocess.Popen(
        [str(Path(PY).parent / "jackpot"), "serve", "--config", str(floor)]
        + ["--data-dir", str(data_dir), "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    noop_url, bets_url = f"http://127.0.0.1:{noop_port}/noop", f"http://127.0.0.1:{port}"
    pairs: list[tuple[dict[str, float], ...]] = []
    try:
        wait_for_port(noop_port)
        wait_health(f"{bets_url}/health", seconds=1800)  # loading a large snapshot
        if args.warmup > 0:
            wrk(noop_url, args.warmup, args.connections, noop_lua)
            wrk(bets_url, args.warmup, args.connections, bets_lua(work))
        for _ in range(args.runs):
            pairs.append(
                (
                    wrk(noop_url, args.seconds, args.connections, noop_lua),
                    wrk(bets_url, args.seconds, args.connections, bets_lua(work)),
                )
            )
    finally:
        noop.terminate()
        noop.wait()
        with contextlib.suppress(Exception):
            stop_process(server)
        pid = postmaster_pid(data_dir / "postgres")
        if pid is not None:
            stop_pid(pid, signal.SIGINT)
        shutil.rmtree(work, ignore_errors=True)
    return pairs


def report(rounds: int, pairs: list[tuple[dict[str, float], ...]]) -> dict[str, float]:
    print(f"\n{rounds:,} open rounds before the load")
    for i, (noop, bets) in enumerate(pairs, 1):
        print(
            f"  pair {i}: no-op {noop['rps']:8.0f} req/s p99 {noop['p99']:6.1f} ms | "
            f"bets {bets['rps']:8.0f} req/s p99 {bets['p99']:6.1f} ms"
        )
    rps = [bets["rps"] for _, bets in pairs]
    p99 = [bets["p99"] for _, bets in pairs]
    noop_rps = statistics.median(noop["rps"] for noop, _ in pairs)
    noop_p99 = statistics.median(noop["p99"] for noop, _ in pairs)
    med = {"rps": statistics.median(rps), "p99": statistics.median(p99)}
    print(
        f"  medians: bets {med['rps']:.0f} req/s (x{med['rps'] / noop_rps:.2f} of the no-op),"
        f" p99 {med['p99']:.1f} ms (x{med['p99'] / noop_p99:.2f});"
        f" spread across runs: {min(rps):.0f}-{max(rps):.0f} req/s,"
        f" p99 {min(p99):.1f}-{max(p99):.1f} ms"
    )
    return med


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--open-rounds", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    medians = {n: report(n, measure(n, args)) for n in args.open_rounds}
    if len(medians) > 1:
        low, high = min(medians), max(medians)
        print(
            f"\n{high:,} against {low:,} open rounds: bets req/s"
            f" x{medians[high]['rps'] / medians[low]['rps']:.2f},"
            f" p99 x{medians[high]['p99'] / medians[low]['p99']:.2f}"
        )


if __name__ == "__main__":
    main()
