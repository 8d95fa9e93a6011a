"""The server's CPU per durable bets request, and where it goes (needs `wrk`).

    .venv/bin/python bench/profile_bets.py [--tree DIR ...] [--runs 3] [--seconds 8]
        [--connections 64] [--profile] [--top 35] [--sort tottime]

Starts `jackpot serve` of each tree (default: this one; another tree runs with its own
`.venv`, from its own folder, on its own port and data directory) on the demo floor
with embedded PostgreSQL, as bench/bench_http.py does, and loads it with that script's
bets (a new round of 7 boxes with a jackpot wager each, 64 connections). The trees'
servers are up at once and measured in turn, A B A B..., so that what loads the shared
machine during one round loads every tree alike. For each run: the requests answered,
and the server's own CPU time (from /proc: user + system, the forked snapshot children
apart) per request. CPU per request, unlike requests/s, hardly moves when other
processes share the cores.

With `--profile`, each server also runs cProfile over its measured runs (started and
stopped by SIGUSR1 / SIGUSR2 around each run, warm-up excluded) and the top functions
are printed per tree; the stats are kept as `<data dir>/bets.prof` (the path is
printed) for `python -m pstats`. cProfile's own cost inflates the CPU figures of a
profiled run (the more, the more calls a function makes): compare the CPU per request
of unprofiled runs only, and read the profiles for where the time goes and for the
calls per request.

With `--edge`, no server and no load: in each tree's interpreter, the table events' way
in (the app's direct route: its edge middleware and the route, a stub in place of the
handler, which reads the body and answers a fixed text) is called in a loop, and its CPU
per request printed (best of 5 rounds): the edge's own cost, which the load's spread
hides. Trees before the direct route (app/api/table_events/) have none to measure.
"""

from __future__ import annotations

import argparse
import os
import pstats
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_floor import DEMO  # noqa: E402  (a sibling script, not a package)
from bench_http import bets_lua, free_port, wait_health  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
PY_SPY = Path(sys.executable).parent / "py-spy"  # pip install py-spy (not a dependency)

# Run in the server's own interpreter: `jackpot serve`, with cProfile switched on and
# off by signals (the event loop, hence every request, runs on the main thread).
SERVE = textwrap.dedent(
    """
    import cProfile, os, signal, sys, time
    # Timed by the process's CPU clock: time the machine's other processes take from
    # this one is not charged to whatever function was running.
    out = os.environ.get("BETS_PROFILE")
    profile = cProfile.Profile(time.process_time_ns, 1e-9) if out else None

    def start(*_):
        profile.enable()

    def stop(*_):
        profile.disable()
        profile.dump_stats(out)

    if profile is not None:
        signal.signal(signal.SIGUSR1, start)
        signal.signal(signal.SIGUSR2, stop)
    from app.cli import main
    sys.argv = ["jackpot", "serve", *sys.argv[1:]]
    sys.exit(main())
    """
)


# Run in each tree's interpreter (`--edge`): the direct route's CPU per table event.
EDGE = textwrap.dedent(
    """
    import asyncio, time
    from starlette.responses import Response
    from app.api.table_events.direct_route import TableEvents
    from tests.integration.app.support import build_server

    N = 20_000
    BODY = b'{"closed_at":"2026-01-01T00:00:00.000Z","boxes":[]}'
    SCOPE = {
        "type": "http", "method": "POST", "path": "/v1/tables/T01/rounds/R1/bets",
        "root_path": "", "query_string": b"", "http_version": "1.1", "scheme": "http",
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2),
        "headers": [
            (b"host", b"x"), (b"content-type", b"application/json"),
            (b"authorization", b"Bearer demo-table-T01"),
            (b"content-length", str(len(BODY)).encode()),
        ],
    }
    MESSAGE = {"type": "http.request", "body": BODY, "more_body": False}

    async def main():
        app = build_server().app
        async with app.router.lifespan_context(app):
            route = app.table_events
            while not isinstance(route, TableEvents):
                route = route.app

            async def stub(event):
                await event.body()
                return Response(b'{"ok":true}', media_type="application/json")

            route.events = {"bets": stub, "outcome": stub, "void": stub}

            async def receive():
                return MESSAGE

            async def send(message):
                pass

            for target, name in ((app, "direct route with its edge"), (route, "route alone")):
                for _ in range(2_000):
                    await target(dict(SCOPE), receive, send)
                best = float("inf")
                for _ in range(5):
                    started = time.process_time()
                    for _ in range(N):
                        await target(dict(SCOPE), receive, send)
                    best = min(best, (time.process_time() - started) / N * 1e6)
                print(f"{name}: {best:.2f}")

    asyncio.run(main())
    """
)


@dataclass
class Server:
    tree: Path
    work: Path
    port: int
    proc: subprocess.Popen[bytes]
    profile: Path | None
    runs: list[tuple[int, float, float]] = field(default_factory=list)  # (n, self, children)
    samples: list[Path] = field(default_factory=list)  # py-spy's raw stacks, one file a run

    @property
    def name(self) -> str:
        head = subprocess.run(
            ["git", "-C", str(self.tree), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(self.tree), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        return f"{self.tree.name}@{head}{'+' if dirty else ''}"


def cpu_seconds(pid: int) -> tuple[float, float]:
    """The process's own CPU seconds (user + system) and its reaped children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return (utime + stime) / CLK_TCK, (cutime + cstime) / CLK_TCK


def start_server(tree: Path, profile: bool) -> Server:
    work = Path(tempfile.mkdtemp(prefix="profile-bets-", dir=HERE / ".bench"))
    floor = work / "floor.toml"  # bench_floor's: no practical cap on open rounds
    floor.write_text("max_open_rounds = 100000000\n" + DEMO.read_text())
    env = dict(os.environ, JACKPOT_DEMO_TOKENS="1", PYTHONPATH=str(tree))
    env.pop("DATABASE_URL", None)
    prof = work / "bets.prof" if profile else None
    if prof is not None:
        env["BETS_PROFILE"] = str(prof)
    port = free_port()
    proc = subprocess.Popen(
        [str(tree / ".venv" / "bin" / "python"), "-c", SERVE, "--config", str(floor)]
        + ["--data-dir", str(work / "data"), "--port", str(port), "--log-level", "warning"],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    return Server(tree, work, port, proc, prof)


def wrk(server: Server, seconds: int, connections: int, script: Path) -> int:
    """wrk's bets run; the number of requests answered (all must be 200)."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(script)]
        + [f"http://127.0.0.1:{server.port}"],
        capture_output=True,
        text=True,
        check=True,
    )
    if "status " in out.stderr:
        raise SystemExit(f"{server.name} refused bets: {out.stderr[:500]}")
    return int(re.search(r"(\d+) requests in", out.stdout).group(1))  # type: ignore[union-attr]


def measure(
    server: Server, seconds: int, connections: int, script: Path, profile: bool, sample: bool
) -> None:
    if profile:
        server.proc.send_signal(signal.SIGUSR1)
    spy = None
    if sample:  # a sampling profiler from outside: next to nothing added to the server's CPU
        out = server.work / f"samples-{len(server.samples)}.txt"
        spy = subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(server.proc.pid), "--rate", "500", "-F", "--gil"]
            + ["--format", "raw", "--output", str(out), "--duration", str(seconds)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server.samples.append(out)
        time.sleep(0.3)  # attached
    own, children = cpu_seconds(server.proc.pid)
    n = wrk(server, seconds, connections, script)
    own2, children2 = cpu_seconds(server.proc.pid)
    if spy is not None:
        spy.wait(timeout=60)
    if profile:
        server.proc.send_signal(signal.SIGUSR2)
        time.sleep(0.5)  # the stats are dumped by the server; the next run adds to them
    server.runs.append((n, 1e6 * (own2 - own) / n, 1e6 * (children2 - children) / n))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", action="append", type=Path, help="a worktree with .venv")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--sample", action="store_true", help="py-spy's samples: the share of each function"
    )
    parser.add_argument(
        "--edge", action="store_true", help="no load: the direct route's own CPU, in-process"
    )
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--sort", default="tottime", help="pstats sort key: tottime, cumulative")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    if args.sample and not PY_SPY.exists():
        raise SystemExit(f"--sample needs py-spy: {PY_SPY.parent}/pip install py-spy")
    trees = [t.resolve() for t in args.tree or [HERE]]
    if args.edge:
        edge(trees, args.runs)
        return
    (HERE / ".bench").mkdir(exist_ok=True)
    servers = [start_server(tree, args.profile) for tree in trees]
    try:
        for server in servers:
            wait_health(f"http://127.0.0.1:{server.port}/health", seconds=120)
        for server in servers:
            wrk(server, args.warmup, args.connections, bets_lua(server.work))  # unmeasured
        for _ in range(args.runs):
            for server in servers:
                measure(
                    server,
                    args.seconds,
                    args.connections,
                    bets_lua(server.work),
                    args.profile,
                    args.sample,
                )
        report(servers, args)
    finally:
        for server in servers:
            server.proc.terminate()
        for server in servers:
            server.proc.wait(timeout=60)
            # The profiles and samples are kept; the database (gigabytes) is not.
            kept = args.profile or args.sample
            shutil.rmtree(server.work / "data" if kept else server.work, ignore_errors=True)


def edge(trees: list[Path], runs: int) -> None:
    """`--edge`: each tree's direct route, `runs` times in turn, µs of CPU per event."""
    figures: dict[Path, dict[str, list[float]]] = {tree: {} for tree in trees}
    for _ in range(runs):
        for tree in trees:
            out = subprocess.run(
                [str(tree / ".venv" / "bin" / "python"), "-c", EDGE],
                cwd=tree,
                env=dict(os.environ, JACKPOT_DEMO_TOKENS="1", PYTHONPATH=str(tree)),
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for line in out.splitlines():
                name, _, value = line.rpartition(": ")
                figures[tree].setdefault(name, []).append(float(value))
    print(f"CPU µs per table event in-process, a stub handler, best of 5 x 20,000; {runs} run(s)")
    for tree in trees:
        for name, values in figures[tree].items():
            shown = " ".join(f"{v:.2f}" for v in values)
            print(f"{tree.name:<12} {name:<28} median {statistics.median(values):.2f} ({shown})")


def report(servers: list[Server], args: argparse.Namespace) -> None:
    print(
        f"{args.runs} run(s) per tree of {args.seconds} s, {args.connections} connections, "
        f"trees in turn; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        + ("; PROFILED (cProfile inflates the CPU)" if args.profile else "")
    )
    for server in servers:
        runs = "  ".join(f"{own:.0f}" for _, own, _ in server.runs)
        own = statistics.median(r[1] for r in server.runs)
        kids = statistics.median(r[2] for r in server.runs)
        n = sum(r[0] for r in server.runs)
        print(
            f"{server.name:<24} CPU µs/request: median {own:.1f} (runs: {runs}); "
            f"snapshot children {kids:.1f}; {n} requests"
        )
    if args.sample:
        for server in servers:
            print_samples(server, args.top)
    if args.profile:
        for server in servers:
            assert server.profile is not None
            print(f"\n== {server.name}: top {args.top} by {args.sort} ({server.profile})")
            total = sum(r[0] for r in server.runs)
            stats = pstats.Stats(str(server.profile))
            print(f"   ({total} requests; per-request µs = seconds / requests * 1e6)")
            stats.strip_dirs().sort_stats(args.sort).print_stats(args.top)


FRAME = re.compile(r"^(.*) \((.*?)(?::\d+)?\)$")


def print_samples(server: Server, top: int) -> None:
    """py-spy's samples of the measured runs (those holding the GIL: running Python, or C
    that keeps it): per function, the share of the samples in it (inclusive) and in its
    own code (self, with whatever C it calls), and that share of the median CPU per
    request, in µs (a rough split: CPU without the GIL, in PostgreSQL's driver or the
    kernel, is not sampled)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for path in server.samples:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack:
                continue
            n = int(count)
            total += n
            frames = [frame_name(f) for f in stack.split(";") if f and not f.startswith("process ")]
            frames = [f for f in frames if not f.startswith("thread ")]
            if frames:
                own[frames[-1]] += n
            for f in set(frames):
                inclusive[f] += n
    if total == 0:
        print(f"\n== {server.name}: no samples")
        return
    cpu = statistics.median(r[1] for r in server.runs)
    print(f"\n== {server.name}: {total} samples; µs of the median {cpu:.0f} µs/request")
    print(f"{'self %':>7}{'µs':>7}{'incl %':>8}{'µs':>7}  function")
    for name, n in own.most_common(top):
        share, incl = n / total, inclusive[name] / total
        print(f"{share:>7.1%}{share * cpu:>7.1f}{incl:>8.1%}{incl * cpu:>7.1f}  {name}")
    print(f"-- inclusive, top {top}")
    for name, n in inclusive.most_common(top):
        share = n / total
        print(f"{share:>7.1%}{share * cpu:>7.1f}  {name}")


def frame_name(frame: str) -> str:
    m = FRAME.match(frame)
    if m is None:
        return frame
    name, path = m.groups()
    return f"{name} ({'/'.join(Path(path).parts[-2:])})"


if __name__ == "__main__":
    main()
