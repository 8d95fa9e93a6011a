"""Prints what 20,000 abandoned rounds cost a running server, and that it gets it back (issue 17.3).

    .venv/bin/python bench/bench_abandoned.py [--abandoned 20000] [--tables 25]

Starts `jackpot serve` (embedded PostgreSQL, a snapshot every 2,000 entries) on a floor
with a short round timeout (`round_timeout_ms` 50 s, `expire_after` 2: rounds expire 100 s
after their bets; `retain_ms` 0: they leave memory round_timeout + hold after that).
Then, each phase measured by the server's RSS (/proc), the size of its latest stored
snapshot (packed and as JSON) and the client-side latency of bets (p50 / p99) during
normal play (every round bets then a losing outcome, 16 at a time):

1. baseline: normal play;
2. abandoned: N bets with no outcome, spread over the tables, then normal play with them
   open;
3. after: wait (no requests: the writer's timer expires them) until they are expired
   and pruned, then normal play again.

Each phase's snapshot also holds the settled rounds of the last `retain_ms` (51 s here)
of its own normal play; the baseline's holds the warm-up's too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import free_port, postmaster_pid, stop_pid, stop_process, wait_up  # noqa: E402

PY = sys.executable
ROUND_TIMEOUT_MS = 50_000
EXPIRE_AFTER = 2
# Seven losing hands from one deck (no pair, straight or flush): box b's cards.
_SUITS = ("SHSHS", "DCDCD", "HSHSH", "CDCDC", "SHSHS", "DCDCD", "HSHSH")
LOSING = [
    [r + s for r, s in zip("2468T" if b < 4 else "3579J", _SUITS[b], strict=True)] for b in range(7)
]


def floor_toml(tables: int) -> str:
    lines = [
        'currency = "SGD"',
        "hold_ms = 1000",
        f"round_timeout_ms = {ROUND_TIMEOUT_MS}",
        f"expire_after = {EXPIRE_AFTER}",
        "retain_ms = 0",
        "",
        "[[links]]",
        'id = "stud"',
        "  [[links.meters]]",
        '  id = "major"',
        '  seed = "10000.00"',
        '  rate = "0.25"',
        '  reserve_rate = "0.05"',
    ]
    for i in range(1, tables + 1):
        token = hashlib.sha256(f"bench-table-{i}".encode()).hexdigest()
        lines += [
            "",
            "[[tables]]",
            f'id = "T{i:02d}"',
            'game = "multi_link_casino_stud"',
            'link = "stud"',
            "boxes = 7",
            'jackpot_wager = "1.00"',
            f'token_sha256 = "{token}"',
        ]
    return "\n".join(lines) + "\n"


def now_text() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def snapshot_size(data_dir: Path) -> tuple[int, int, int]:
    """(seq, packed bytes, JSON bytes) of the latest stored snapshot."""
    dsn = f"postgresql://postgres:@/jackpot?host={data_dir / 'postgres'}"
    connection = await asyncpg.connect(dsn)
    try:
        row = await connection.fetchrow(
            "SELECT seq, packed FROM snapshots ORDER BY seq DESC LIMIT 1"
        )
    finally:
        await connection.close()
    if row is None:
        return 0, 0, 0
    return row["seq"], len(row["packed"]), len(zlib.decompress(row["packed"]))


async def gauges(client: httpx.AsyncClient) -> dict[str, float]:
    text = (await client.get("/metrics")).text
    found: dict[str, float] = {}
    for line in text.splitlines():
        for name in (
            "jackpot_table_open_rounds",
            "jackpot_expired_rounds_total",
            "jackpot_python_allocated_blocks",
        ):
            if line.startswith((name + "{", name + " ")):
                found[name] = found.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    return found


class Play:
    def __init__(self, client: httpx.AsyncClient, tables: int) -> None:
        self.client, self.tables, self.serial = client, tables, 0

    def headers(self, table: int) -> dict[str, str]:
        return {"Authorization": f"Bearer bench-table-{table}"}

    async def bets(self, table: int, round_id: str) -> float:
        body = {
            "closed_at": now_text(),
            "boxes": [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, 8)],
        }
        started = time.perf_counter()
        r = await self.client.post(
            f"/v1/tables/T{table:02d}/rounds/{round_id}/bets",
            json=body,
            headers=self.headers(table),
        )
        took = time.perf_counter() - started
        if r.status_code != 200:
            raise SystemExit(f"bets {round_id}: {r.status_code} {r.text}")
        return took

    async def round(self, table: int) -> float:
        self.serial += 1
        round_id = f"P{self.serial}"
        took = await self.bets(table, round_id)
        t = now_text()
        outcome = {
            "boxes": [{"box": b, "dealt_at": t, "cards": LOSING[b - 1]} for b in range(1, 8)]
        }
        r = await self.client.post(
            f"/v1/tables/T{table:02d}/rounds/{round_id}/outcome",
            json=outcome,
            headers=self.headers(table),
        )
        if r.status_code != 200:
            raise SystemExit(f"outcome {round_id}: {r.status_code} {r.text}")
        return took

    async def normal(self, rounds: int, concurrency: int = 16) -> list[float]:
        latencies: list[float] = []
        queue = iter(range(rounds))

        async def worker() -> None:
            for i in queue:
                latencies.append(await self.round(1 + i % self.tables))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return latencies

    async def abandon(self, count: int, concurrency: int = 16) -> None:
        queue = iter(range(count))

        async def worker() -> None:
            for i in queue:
                await self.bets(1 + i % self.tables, f"A{i}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000


async def measure(name: str, play: Play, pid: int, data_dir: Path, rounds: int) -> dict[str, Any]:
    latencies = await play.normal(rounds)
    await asyncio.sleep(1.5)  # the snapshot these entries triggered is stored
    seq, packed, text = await snapshot_size(data_dir)
    found = await gauges(play.client)
    row: dict[str, Any] = {
        "phase": name,
        "rss_mib": rss_mib(pid),
        "snapshot_seq": seq,
        "snapshot_packed_kib": packed / 1024,
        "snapshot_json_kib": text / 1024,
        "allocated_blocks": found.get("jackpot_python_allocated_blocks", 0),
        "open_rounds": found.get("jackpot_table_open_rounds", 0),
        "expired": found.get("jackpot_expired_rounds_total", 0),
        "bets_p50_ms": percentile(latencies, 0.5),
        "bets_p99_ms": percentile(latencies, 0.99),
    }
    print(
        f"{name:<10} RSS {row['rss_mib']:6.1f} MiB  "
        f"blocks {row['allocated_blocks'] / 1e6:5.2f} M  "
        f"snapshot@{seq:<6} "
        f"{row['snapshot_packed_kib']:8.1f} KiB packed {row['snapshot_json_kib']:9.1f} KiB JSON  "
        f"open {row['open_rounds']:>6.0f}  expired {row['expired']:>6.0f}  "
        f"bets p50 {row['bets_p50_ms']:6.1f} ms p99 {row['bets_p99_ms']:6.1f} ms",
        flush=True,
    )
    return row


async def run(args: argparse.Namespace, port: int, pid: int, data_dir: Path) -> None:
    limits = httpx.Limits(max_connections=32)
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        play = Play(client, args.tables)
        await play.normal(300)  # warm-up
        await measure("baseline", play, pid, data_dir, args.rounds)
        started = time.monotonic()
        await play.abandon(args.abandoned)
        posted = time.monotonic()
        print(f"posted {args.abandoned} abandoned bets in {posted - started:.1f} s")
        await measure("abandoned", play, pid, data_dir, args.rounds)
        # Expired expire_after round timeouts after their bets, pruned round_timeout +
        # hold later, by the writer's own timer (no request needed); the settled rounds
        # of the phase before are pruned too. Then the same normal play again.
        wait = EXPIRE_AFTER * ROUND_TIMEOUT_MS / 1000 + ROUND_TIMEOUT_MS / 1000 + 5
        remaining = max(0.0, wait - (time.monotonic() - posted))
        print(f"waiting {remaining:.0f} s for expiry and pruning, no requests", flush=True)
        await asyncio.sleep(remaining)
        await measure("after", play, pid, data_dir, args.rounds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--abandoned", type=int, default=20_000)
    parser.add_argument("--tables", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=1_100)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bench-abandoned-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        (work / "floor.toml").write_text(floor_toml(args.tables))
        port, data_dir = free_port(), work / "data"
        command = [str(Path(PY).parent / "jackpot"), "serve", "--config", str(work / "floor.toml")]
        command += ["--port", str(port), "--log-level", "warning", "--data-dir", str(data_dir)]
        env = {**os.environ, "JACKPOT_SNAPSHOT_EVERY": "2000", "JACKPOT_DEMO_TOKENS": "1"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)

        def stop() -> None:
            stop_process(proc)
            pid = postmaster_pid(data_dir / "postgres")
            if pid is not None:
                stop_pid(pid, signal.SIGINT)

        stack.callback(stop)
        wait_up(proc, f"http://127.0.0.1:{port}/health")
        asyncio.run(run(args, port, proc.pid, data_dir))


if __name__ == "__main__":
    main()
