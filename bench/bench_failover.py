"""Prints how long a floor waits for its standby writer, and what the epoch check costs.

    .venv/bin/python bench/bench_failover.py [-n 20] [--mode kill|stop|both] [--load 8]
        [--lease-ms 3000] [--no-lock] [--runs 3] [--seconds 10]

Two `jackpot serve --role writer` on one embedded PostgreSQL (or DATABASE_URL):

- kill -9: a table posts bets to the standby while the leader is killed; the figure is
  the time from the kill to the first bets answered 200 by the new leader (goal, with the
  leader's lock: median under 1 s, max under 1.5 s). The killed one is started again as
  the standby; `-n` times.
- SIGSTOP: the same with the leader frozen (goal: at most lease + 2 s, the lock does not
  help there); then SIGCONT, and the time until the old leader says it stands by.
- `--load K`: K tables meanwhile post bets to both writers in turn, as the proxy's retry
  does (the takeover under load). `--no-lock`: JACKPOT_LEADER_LOCK=0, the lease alone
  (the figures before the lock, for an A/B).
- bets/s (wrk, bench_http's bets script, 64 connections) of one writer with the epoch
  checked in every append's transaction (the journal's trigger) and without it (the
  trigger disabled on the bench's database for those runs), alternating runs (`--runs 0`:
  none).

To compare two trees, run it with PYTHONPATH set to each (the servers are started with
this interpreter's `jackpot` and inherit PYTHONPATH).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import BETS_LUA, free_port, wrk  # noqa: E402  (sibling scripts)

ROOT = Path(__file__).resolve().parent.parent
JACKPOT = str(Path(sys.executable).parent / "jackpot")
sys.path.insert(0, str(ROOT))
from app.state.timefmt import format_time  # noqa: E402
from app.store.database import start_embedded  # noqa: E402


class Writer:
    def __init__(self, name: str, work: Path, dsn: str, env: dict[str, str]) -> None:
        self.name, self.work, self.dsn, self.env = name, work, dsn, env
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, **extra: str) -> None:
        env = {**os.environ, **self.env, "DATABASE_URL": self.dsn, "JACKPOT_DEMO_TOKENS": "1",
               **extra}  # fmt: skip
        floor = self.work / "floor.toml"
        if not floor.exists():
            demo = (ROOT / "app/demo/floor.toml").read_text()
            floor.write_text("max_open_rounds = 1000000\n" + demo)
        with (self.work / f"{self.name}.log").open("ab") as log:
            self.proc = subprocess.Popen(
                [JACKPOT, "serve", "--role", "writer", "--config", str(floor), "--port",
                 str(self.port), "--data-dir", str(self.work / self.name), "--log-level",
                 "warning"],
                env=env, stdout=log, stderr=log,
            )  # fmt: skip

    def role(self) -> str | None:
        try:
            return str(httpx.get(f"{self.url}/health", timeout=1).json().get("role"))
        except (httpx.HTTPError, ValueError):
            return None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def until(check: object, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise SystemExit("timed out")


def pair_ready(a: Writer, b: Writer) -> tuple[Writer, Writer]:
    """(leader, standby) once exactly that is what they say."""
    found: list[Writer] = []

    def ready() -> bool:
        roles = {w: w.role() for w in (a, b)}
        if sorted(r or "" for r in roles.values()) == ["leader", "standby"]:
            found[:] = [w for w in (a, b) if roles[w] == "leader"]
            return True
        return False

    until(ready)
    leader = found[0]
    return leader, b if leader is a else a


async def first_ack(new: Writer, since: float, within_s: float = 60) -> float:
    """Seconds from `since` to the first bets the new leader answers 200 (a new round
    each try, as tables go on posting)."""
    n = 0
    async with httpx.AsyncClient(base_url=new.url, timeout=5) as client:
        while time.monotonic() - since < within_s:
            n += 1
            body = {
                "closed_at": format_time(time.time_ns() // 1_000_000),
                "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
            }
            try:
                r = await client.post(
                    f"/v1/tables/T01/rounds/F{time.time_ns()}-{n}/bets",
                    json=body,
                    headers={"Authorization": "Bearer demo-table-T01"},
                )
                if r.status_code == 200:
                    return time.monotonic() - since
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.01)
    raise SystemExit("no acknowledged event on the new leader")


class Load:
    """K tables posting bets to both writers in turn, in a thread of their own."""

    def __init__(self, writers: list[Writer], tables: int) -> None:
        self.writers, self.tables = writers, tables
        self.answered = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def __enter__(self) -> Load:
        if self.tables:
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        if self.tables:
            self.thread.join(timeout=30)

    async def _run(self) -> None:
        await asyncio.gather(*(self._table(t) for t in range(self.tables)))

    async def _table(self, t: int) -> None:
        table = "T01" if t % 2 else "T02"
        n = 0
        async with httpx.AsyncClient(timeout=5) as client:
            while not self.stopping.is_set():
                n += 1
                writer = self.writers[n % len(self.writers)]
                body = {
                    "closed_at": format_time(time.time_ns() // 1_000_000),
                    "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
                }
                try:
                    r = await client.post(
                        f"{writer.url}/v1/tables/{table}/rounds/L{t}-{time.time_ns()}/bets",
                        json=body,
                        headers={"Authorization": f"Bearer demo-table-{table}"},
                    )
                    if r.status_code == 200:
                        self.answered += 1
                        continue
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.01)


def takeovers(a: Writer, b: Writer, n: int, how: str) -> tuple[list[float], list[float]]:
    times, stepped = [], []
    for i in range(n):
        leader, standby = pair_ready(a, b)
        time.sleep(0.5)  # a few renewals in: the lease is as fresh as it runs
        assert leader.proc is not None
        at = time.monotonic()
        leader.proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        took = asyncio.run(first_ack(standby, at))
        times.append(took)
        if how == "kill":
            leader.proc.wait()
            leader.start()
        else:
            resumed = time.monotonic()
            leader.proc.send_signal(signal.SIGCONT)
            until(lambda: leader.role() == "standby")  # noqa: B023
            stepped.append(time.monotonic() - resumed)
        print(f"  {how} {i + 1}: first ack on the new leader after {took:.3f} s", flush=True)
    return times, stepped


# (The first writer started migrates the database: the trigger exists from then on.)
TRIGGER = """DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'journal_fence') THEN
    ALTER TABLE journal {} TRIGGER journal_fence;
  END IF;
END $$"""


async def admin(dsn: str, statement: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def fence_cost(dsn: str, work: Path, seconds: int, runs: int) -> dict[str, list[float]]:
    script = work / "bets.lua"
    script.write_text(f'RUN = "{time.time_ns()}"\n' + BETS_LUA)
    figures: dict[str, list[float]] = {"fenced": [], "unfenced": []}
    for i in range(runs * 2):
        mode = "fenced" if i % 2 == 0 else "unfenced"
        writer = Writer(f"bets-{i}", work, dsn, {"JACKPOT_LEASE_MS": "3000"})
        trigger = "ENABLE" if mode == "fenced" else "DISABLE"
        asyncio.run(admin(dsn, TRIGGER.format(trigger)))
        writer.start()
        try:
            until(lambda: writer.role() == "leader")  # noqa: B023
            script.write_text(f'RUN = "{time.time_ns()}"\n' + BETS_LUA)
            rps = wrk(writer.url, seconds, 64, script)["rps"]
        finally:
            writer.stop()
        figures[mode].append(rps)
        print(f"  bets/s {mode:9} {rps:8,.0f}", flush=True)
    return figures


def show(name: str, values: list[float], goal: str) -> None:
    if values:
        print(
            f"{name:44} median {statistics.median(values):6.3f} s  max {max(values):6.3f} s"
            f"  ({len(values)} runs; goal {goal})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=20, help="takeovers of each kind")
    parser.add_argument("--mode", choices=("kill", "stop", "both"), default="both")
    parser.add_argument("--load", type=int, default=0, help="tables posting meanwhile")
    parser.add_argument("--lease-ms", type=int, default=3000)
    parser.add_argument("--no-lock", action="store_true", help="JACKPOT_LEADER_LOCK=0")
    parser.add_argument("--seconds", type=int, default=10, help="of each bets/s run")
    parser.add_argument("--runs", type=int, default=3, help="bets/s runs of each mode")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-failover-"))
    work.chmod(0o755)
    embedded = None
    dsn = os.environ.get("DATABASE_URL")
    if dsn is None:
        embedded = asyncio.run(start_embedded(work / "pg", delete_on_stop=True))
        dsn = embedded.dsn
    env = {"JACKPOT_LEASE_MS": str(args.lease_ms),
           "JACKPOT_LEADER_LOCK": "0" if args.no_lock else "1"}  # fmt: skip
    a, b = Writer("a", work, dsn, env), Writer("b", work, dsn, env)
    killed: list[float] = []
    frozen: list[float] = []
    stepped: list[float] = []
    try:
        a.start()
        b.start()
        with Load([a, b], args.load) as load:
            if args.mode in ("kill", "both"):
                killed, _ = takeovers(a, b, args.n, "kill")
            if args.mode in ("stop", "both"):
                frozen, stepped = takeovers(a, b, args.n, "stop")
        a.stop()
        b.stop()
        bets = fence_cost(dsn, work, args.seconds, args.runs)
        lease = args.lease_ms / 1000
        lock = "off (the lease alone)" if args.no_lock else "on"
        print(f"\nlease {args.lease_ms} ms, leader lock {lock}, load {args.load} tables"
              f" ({load.answered} bets answered meanwhile)")  # fmt: skip
        show("kill -9 -> first ack on the new leader", killed, "median < 1 s, max < 1.5 s")
        show("SIGSTOP -> first ack on the new leader", frozen, f"<= {lease + 2:.1f} s")
        show("SIGCONT -> the old leader says standby", stepped, "soon")
        if not args.runs:
            return
        for mode, values in bets.items():
            print(f"bets/s {mode:9} " + ", ".join(f"{v:,.0f}" for v in values))
        fenced, unfenced = statistics.median(bets["fenced"]), statistics.median(bets["unfenced"])
        print(
            f"epoch check: median {fenced:,.0f} vs {unfenced:,.0f} bets/s"
            f" ({fenced / unfenced - 1:+.1%})"
        )
    finally:
        for writer in (a, b):
            writer.stop()
        if embedded is not None:
            asyncio.run(embedded.stop())
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
