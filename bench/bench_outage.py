"""Prints another table's bets latency beside hostile or heavy traffic (issue 17, 5 and 6).

    .venv/bin/python bench/bench_outage.py refused [--seconds 10]
    .venv/bin/python bench/bench_outage.py report --data-dir /tmp/j1m [--entries 1000000]

Each runs `jackpot serve` (embedded PostgreSQL) and measures with wrk, at 16
connections, bets of table T02 (a new round each, 7 boxes): alone, then beside

- `refused`: table T01 sending outcomes for rounds it never opened, 500 at a time (a
  wrk of 500 connections): each is refused, and may be a late retry, so the journal is
  asked for it (app/writer/writer.py `submit`);
- `report`: operators asking for the reconciliation of the whole journal, one after the
  other. The journal is built first (bench_startup.py's floor: 300 rounds a minute,
  ending now) under --data-dir, and kept there for the next run.

To compare two trees, run the same command with PYTHONPATH set to each (the server is
started with this interpreter's `jackpot` and inherits PYTHONPATH).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_floor import bench_floor  # noqa: E402
from bench_http import BETS_LUA, free_port, wait_health, wrk  # noqa: E402  (sibling scripts)
from bench_startup import Clock, build  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
OPERATOR = {"Authorization": "Bearer demo-operator"}

# bench_http's bets script, at table T02 alone (T01 is the one that floods).
BETS_T02 = BETS_LUA.replace('local tables = {"T01", "T02"}', 'local tables = {"T02", "T02"}')
assert BETS_T02 != BETS_LUA

UNKNOWN_OUTCOMES = textwrap.dedent(
    """
    local counter = 0
    local thread_id = 0
    setup = function(thread)
      thread_id = thread_id + 1
      thread:set("tid", thread_id)
    end
    request = function()
      counter = counter + 1
      local body = string.format('{"boxes":[{"box":1,"dealt_at":"%s",'
        .. '"cards":["2S","7H","9D","JC","KS"]}]}', os.date("!%Y-%m-%dT%H:%M:%S.000Z"))
      local headers = {["Content-Type"] = "application/json",
                       ["Authorization"] = "Bearer demo-table-T01"}
      local path = string.format("/v1/tables/T01/rounds/U%s-%d-%d/outcome", RUN, tid, counter)
      return wrk.format("POST", path, headers, body)
    end
    """
)


def script(work: Path, text: str) -> Path:
    run = f"{time.time_ns()}"
    path = work / f"{run}.lua"
    path.write_text(f'RUN = "{run}"\n' + text)
    return path


def serve(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    jackpot = str(Path(PY).parent / "jackpot")
    args = [jackpot, "serve", "--config", str(bench_floor())]
    args += ["--data-dir", str(data_dir), "--port", str(port), "--log-level", "error"]
    server = subprocess.Popen(args, env=env)
    wait_health(f"http://127.0.0.1:{port}/health", seconds=600)
    return server


def bets(url: str, seconds: int, work: Path) -> dict[str, float]:
    return wrk(url, seconds, 16, script(work, BETS_T02))


def show(name: str, figures: dict[str, float]) -> None:
    print(
        f"  {name:34} {figures['rps']:7,.0f} bets/s  p50 {figures.get('p50', 0):6.1f} ms"
        f"  p99 {figures.get('p99', 0):7.1f} ms  non-2xx {figures['non2xx']:.0f}",
        flush=True,
    )


def refused(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="jackpot-outage-"))
    work.chmod(0o755)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve(work / "data", port)
    try:
        bets(url, 3, work)  # warm-up
        show("T02 bets alone", bets(url, args.seconds, work))
        flood: dict[str, float] = {}

        def hostile() -> None:
            flood.update(wrk(url, args.seconds + 2, 500, script(work, UNKNOWN_OUTCOMES)))

        thread = threading.Thread(target=hostile)
        thread.start()
        time.sleep(1)  # the 500 connections open first
        show("T02 bets beside T01's flood", bets(url, args.seconds, work))
        thread.join()
        print(
            f"  (the flood: {flood['rps']:,.0f} refused outcomes/s answered,"
            f" p99 {flood.get('p99', 0):.0f} ms, non-2xx {flood['non2xx']:.0f})"
        )
    finally:
        server.terminate()
        server.wait(timeout=60)


async def build_journal(data_dir: Path, entries: int) -> None:
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.state.floor_state import FloorState
    from app.store.database import create_pool, migrate, start_embedded
    from app.store.journal import PostgresJournal
    from app.writer.writer import Writer
    from app.writer.writer_settings import WriterSettings

    database = await start_embedded(data_dir)
    try:
        await migrate(database.dsn)
        pool = await create_pool(database.dsn)
        config = floor_config(load_floor(bench_floor()))
        clock = Clock()
        # bench_startup's floor moves its clock 25.6 s per 257 entries: end about now.
        clock.now = time.time_ns() // 1_000_000 - entries * 100 - 3_600_000
        # The server's default snapshot cadence.
        writer = Writer(FloorState(config), PostgresJournal(pool), WriterSettings(clock=clock))
        await writer.recover()
        await build(writer, clock, entries, random.Random(1), 300)
        await pool.close()
    finally:
        await database.stop()


def report(args: argparse.Namespace) -> None:
    data_dir = Path(args.data_dir)
    if not (data_dir / "postgres").exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        data_dir.chmod(0o755)  # as root, pgserver runs PostgreSQL as its own user
        started = time.perf_counter()
        asyncio.run(build_journal(data_dir, args.entries))
        print(f"  built {args.entries:,} entries in {time.perf_counter() - started:.0f} s")
    work = Path(tempfile.mkdtemp(prefix="jackpot-outage-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve(data_dir, port)
    try:
        head = httpx.get(f"{url}/v1/journal/head", headers=OPERATOR).json()
        print(f"  journal of {head['entries']:,} entries")
        bets(url, 3, work)  # warm-up
        show("T02 bets alone", bets(url, args.seconds, work))
        stop = threading.Event()
        took: list[float] = []

        def operator() -> None:
            with httpx.Client(timeout=600) as client:
                while not stop.is_set():
                    started = time.perf_counter()
                    r = client.get(f"{url}/v1/reports/reconciliation", headers=OPERATOR)
                    assert r.status_code == 200, r.text
                    took.append(time.perf_counter() - started)

        thread = threading.Thread(target=operator, daemon=True)
        thread.start()
        time.sleep(0.2)
        figures = bets(url, args.seconds, work)
        stop.set()
        show("T02 bets while reports run", figures)
        thread.join(timeout=5)
        done = ", ".join(f"{t:.2f}" for t in took[:8])
        running = " (one still running after the bets run)" if thread.is_alive() else ""
        print(f"  reports: {len(took)} answered, in s: {done}{running}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a report still replaying holds the shutdown
            server.kill()
            server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("refused", "report"))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--data-dir", default="/tmp/jackpot-outage-journal")
    parser.add_argument("--entries", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}: {args.what}")
    refused(args) if args.what == "refused" else report(args)


if __name__ == "__main__":
    main()
