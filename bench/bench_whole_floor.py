"""A whole floor against one server: N table controllers playing rounds, K screens watching.

    .venv/bin/python bench/bench_whole_floor.py --tables 100 --screens 1000 [--rate 6]
    .venv/bin/python bench/bench_whole_floor.py --tables 100 --screens 1000 --flat-out

The server is `jackpot serve` on a generated floor (bench/whole_floor.py: N tables of
the five games in turn, ten to a link, one meter a link), embedded PostgreSQL, group
commit, the displays on its own port (no Redis), as bench_http.py starts it.

Each table controller is a coroutine holding one keep-alive connection (a minimal
HTTP/1.1 client: the client must cost far less than the server). It plays rounds as
`jackpot simulate` deals them (app/cli/simulated_rounds.py: boxes, antes and jackpot
wagers drawn, real cards from one shuffled deck, a void instead of the outcome one round
in `--void-odds`): bets closed, then, 0.7 of the round's period later, the outcome or the
void; and asks GET /status every `--heartbeat` seconds in between, as docs/api.md asks
of a controller. `--rate R` is R rounds per table per minute; `--flat-out`: each table
posts its next request as soon as the last is answered. The controllers run in
`--clients` processes, the screens in one more (bench_displays.py's raw websocket
reader); the CPU of every process is printed, so a client near a core's worth shows.

The default pace, 6 rounds a table a minute, is about six times a busy real table's
(a round a minute or so): 100 tables then post what a 600-table floor would, and a
minute's run gives about 1,200 rounds, enough for a p99 of the bets. `--rate 1` is the
literal pace.

Figures, over the `--seconds` window after `--warmup` (an event counts if its answer
arrived in the window):

- events/s acknowledged: bets, outcomes and voids answered 200 (heartbeats apart);
- bets, outcome (and void) latency p50 / p99: request written to answer read;
- event-to-screen p50 / p99. For a bets event answered 200 that took a jackpot wager
  (so raised its link's meter by at least a cent), with V the meter's value in its
  answer: the time from the answer's arrival at the controller to the arrival, at a
  timed screen of that link (`--timed` per link, spread over the connection order so
  that the last of the fan-out is among them), of the first `meters` (or `snapshot`)
  message showing the meter at V or more: the first that carries the event, since
  between lowerings the meter only rises. Negative when the screen heard first. An event
  not yet shown when an acknowledged void (taking contributions back) or a message lower
  than the previous one (an award's reset) lowers the meter, or acknowledged within
  250 ms after one, is left out (`untimed`), as is one never shown (`unseen`). One
  sample per (event, timed screen). The coalescing window (100 ms) is in the figure,
  by design;
- server CPU per event: the `jackpot serve` process's CPU seconds in the window
  (/proc/<pid>/stat, utime + stime + its reaped children's) over the events
  acknowledged; PostgreSQL's (the postmaster and its backends) beside it. Heartbeats,
  the screens' fan-out and the server's idle work are in both: they are part of running
  a floor, and weigh more per event at a slow pace.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from bench_displays import Display, Tally  # noqa: E402  (sibling scripts, not a package)
from bench_http import (  # noqa: E402
    cpu_seconds,
    free_port,
    machine_busy,
    postmaster_pid,
    stop_pid,
    stop_process,
    wait_up,
)
from whole_floor import (  # noqa: E402
    Matched,
    bets_request,
    dealt_at_for,
    floor_links,
    floor_text,
    match_screen,
    meter_value,
    next_round,
    percentile,
    settle_request,
    timed_screens,
)

from app.cli.simulate import DECIDE_SHARE, PLAY_SHARE  # noqa: E402
from app.cli.simulated_rounds import TableSpec, read_tables  # noqa: E402

PY = sys.executable
BLACKOUT_US = 250_000  # after a lowering: past the coalescing window and the commit's answers
ENCODE = msgspec.json.Encoder()
DECODE = msgspec.json.Decoder()


def now_us() -> int:
    return time.time_ns() // 1000


# ---- the table controllers ------------------------------------------------------------


class Http:
    """One keep-alive HTTP/1.1 connection, one request at a time (a table's controller)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, token: str, body: Any = None
    ) -> tuple[int, bytes]:
        data = b"" if body is None else ENCODE.encode(body)
        head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        for attempt in (1, 2):  # the server closes idle connections: open a new one once
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None
            self.writer.write(head.encode() + b"\r\n" + data)
            try:
                header = await self.reader.readuntil(b"\r\n\r\n")
                lower = header.lower()
                at = lower.index(b"content-length:") + 15
                length = int(lower[at : lower.index(b"\r\n", at)])
                answer = await self.reader.readexactly(length)
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                if attempt == 2:
                    raise
                continue  # a retry sends the same body: the server answers it once (docs/api.md)
            if b"connection: close" in lower:
                self.close()
            return int(header[9:12]), answer
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Record:
    """What a controller process saw: every answer, and the meter values bets answered."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, int, int, int]] = []  # kind, sent, answered (µs), status
        self.acks: dict[str, list[tuple[int, int]]] = {}  # link -> (answered, meter value)
        self.lowerings: dict[str, list[int]] = {}  # link -> answered
        self.problems: Counter[str] = Counter()
        self.meter_awards = 0


class Table:
    def __init__(self, spec: TableSpec, link: str | None, port: int, opts: dict[str, Any]) -> None:
        self.spec, self.link, self.opts = spec, link, opts
        self.http = Http(port)
        self.rng = random.Random(f"{opts['seed']}:{spec.id}")
        self.period = 0.0 if opts["flat_out"] else 60.0 / opts["rate"]
        self.beat_at = 0.0

    async def send(self, kind: str, path: str, body: Any, record: Record) -> tuple[int, bytes]:
        sent = now_us()
        method = "GET" if body is None else "POST"
        status, answer = await self.http.request(method, path, self.spec.token, body)
        record.answers.append((kind, sent, now_us(), status))
        if status != 200:
            record.problems[f"{kind} {status} {answer[:160].decode(errors='replace')}"] += 1
        return status, answer

    async def heartbeat(self, record: Record) -> None:
        loop = asyncio.get_running_loop()
        if self.opts["heartbeat"] > 0 and loop.time() >= self.beat_at:
            self.beat_at = loop.time() + self.opts["heartbeat"]
            await self.send("status", f"/v1/tables/{self.spec.id}/status", None, record)

    async def idle_until(self, at: float, record: Record) -> None:
        """Wait for `at` (the loop's time), asking /status when the heartbeat is due."""
        loop = asyncio.get_running_loop()
        while loop.time() < at:
            await self.heartbeat(record)
            wake = min(at, self.beat_at) if self.opts["heartbeat"] > 0 else at
            await asyncio.sleep(max(0.0, wake - loop.time()))

    async def play(self, record: Record, run_until_us: int, prefix: str) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time() + self.rng.random() * self.period  # tables out of step
        n = 0
        while True:
            await self.idle_until(start, record)
            if now_us() >= run_until_us:
                return
            await self.heartbeat(record)
            n += 1
            await self.round(f"{prefix}-{n:06d}", start, run_until_us, record)
            start = max(start + self.period, loop.time())

    async def round(self, round_id: str, start: float, run_until_us: int, record: Record) -> None:
        plan = next_round(self.spec, self.rng, self.opts["void_odds"])
        closed_at = time.time_ns() // 1_000_000
        bets = bets_request(self.spec, round_id, plan, closed_at)
        status, answer = await self.send("bets", bets.path, bets.body, record)
        if status != 200:
            return
        if self.link is not None:
            view = DECODE.decode(answer)
            if any(b.get("jackpot") == "accepted" for b in view["boxes"]):
                value = meter_value(view.get("meters", []), self.link)
                if value is not None:
                    record.acks.setdefault(self.link, []).append((now_us(), value))
        if now_us() < run_until_us:
            await self.idle_until(start + self.period * (PLAY_SHARE + DECIDE_SHARE), record)
        dealt_at = dealt_at_for(plan, closed_at, time.time_ns() // 1_000_000)
        settle = settle_request(self.spec, round_id, plan, dealt_at)
        status, answer = await self.send(settle.kind, settle.path, settle.body, record)
        if status != 200 or self.link is None:
            return
        view = DECODE.decode(answer)
        if settle.kind == "void" and view.get("reversed"):
            record.lowerings.setdefault(self.link, []).append(now_us())
        record.meter_awards += sum(a.get("kind") == "meter" for a in view.get("awards", []))


def controllers(
    port: int, floor: str, tables: list[str], opts: dict[str, Any], conn: Connection
) -> None:
    """A controller process: its tables' loops until `run_until`, then what it saw."""
    import uvloop

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the driver stops us
    links = floor_links(opts["tables"], opts["tables_per_link"])
    specs = read_tables(Path(floor), tables)
    record = Record()

    async def main() -> None:
        prefix = f"F{time.time_ns() // 1_000_000:x}"  # round ids unique across runs
        loops = [Table(spec, links[spec.id], port, opts) for spec in specs]
        results = await asyncio.gather(
            *(t.play(record, opts["run_until_us"], prefix) for t in loops), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                record.problems[f"controller stopped: {result!r}"] += 1
        for t in loops:
            t.http.close()

    uvloop.run(main())
    conn.send(
        {
            "answers": record.answers,
            "acks": record.acks,
            "lowerings": record.lowerings,
            "problems": dict(record.problems),
            "meter_awards": record.meter_awards,
        }
    )


# ---- the screens ------------------------------------------------------------------------


class Screen(Display):
    """bench_displays.py's reader: counts every message (by second of arrival); a timed
    screen also keeps (arrival, meter value) of its `snapshot` and `meters` messages."""

    def __init__(
        self, tally: Tally, port: int, link: str, timed: bool, per_second: Counter[int]
    ) -> None:
        super().__init__(tally, port, f"/v1/links/{link}/ws")
        self.link, self.timed, self.per_second = link, timed, per_second
        self.values: list[tuple[int, int]] = []
        self.lost = False

    def text(self, payload: bytes, now_us: int) -> None:
        self.sequence(payload)
        self.per_second[now_us // 1_000_000] += 1
        if self.timed and payload.startswith((b'{"type":"meters"', b'{"type":"snapshot"')):
            value = meter_value(DECODE.decode(payload).get("meters", []), self.link)
            if value is not None:
                self.values.append((now_us, value))

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        super().connection_lost(exc)


def screens(port: int, wanted: list[tuple[str, bool]], conn: Connection) -> None:
    """The screens' process: one websocket per (link, timed) until told to stop."""
    import uvloop

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    uvloop.run(hold_screens(port, wanted, conn))


async def hold_screens(port: int, wanted: list[tuple[str, bool]], conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    tally, per_second = Tally(), Counter[int]()
    gate = asyncio.Semaphore(200)  # concurrent handshakes
    opened: list[Screen] = []

    async def open_one(link: str, timed: bool) -> None:
        async with gate:
            _, screen = await loop.create_connection(
                lambda: Screen(tally, port, link, timed, per_second), "127.0.0.1", port
            )
            opened.append(screen)
            await screen.ready

    results = await asyncio.gather(*(open_one(*w) for w in wanted), return_exceptions=True)
    errors = [repr(r) for r in results if isinstance(r, BaseException)]
    conn.send({"opened": len(wanted) - len(errors), "errors": errors[:3]})
    stop: asyncio.Future[None] = loop.create_future()
    loop.add_reader(conn.fileno(), lambda: None if stop.done() else stop.set_result(None))
    await stop
    loop.remove_reader(conn.fileno())
    conn.recv()
    conn.send(
        {
            "timed": [(s.link, s.values) for s in opened if s.timed],
            "per_second": dict(per_second),
            "gaps": tally.gaps,
            "served": sum(not s.lost for s in opened),
        }
    )
    for screen in opened:
        if screen.transport is not None:
            screen.transport.close()


# ---- the driver -----------------------------------------------------------------------------


def start_server(
    stack: contextlib.ExitStack, work: Path, floor: Path, port: int
) -> subprocess.Popen[bytes]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_DISPLAY_TOKEN")
    }
    env["JACKPOT_DEMO_TOKENS"] = "1"  # the tables' tokens follow the demo's convention
    data = work / "data"
    proc = subprocess.Popen(
        [str(Path(PY).parent / "jackpot"), "serve", "--config", str(floor), "--data-dir", str(data),
         "--port", str(port), "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL,
    )  # fmt: skip

    def stop() -> None:
        stop_process(proc)  # drains, then stops its embedded PostgreSQL
        pid = postmaster_pid(data / "postgres")
        if pid is not None:
            stop_pid(pid, signal.SIGINT)

    stack.callback(stop)
    return proc


def spawn(stack: contextlib.ExitStack, target: Any, *args: Any) -> tuple[Connection, int]:
    ctx = mp.get_context("spawn")
    conn, child = ctx.Pipe()
    proc = ctx.Process(target=target, args=(*args, child), daemon=True)
    proc.start()
    child.close()

    def stop() -> None:
        proc.join(5)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
        conn.close()

    stack.callback(stop)
    assert proc.pid is not None
    return conn, proc.pid


def receive(conn: Connection, seconds: float, what: str) -> Any:
    if not conn.poll(seconds):
        raise SystemExit(f"{what}: no answer within {seconds:.0f} s")
    return conn.recv()


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:  # noqa: PLR0915 - the run, in order
    floor = work / "floor.toml"
    floor.write_text(floor_text(args.tables, args.tables_per_link))
    links = floor_links(args.tables, args.tables_per_link)
    with contextlib.ExitStack() as stack:
        port = free_port()
        server = start_server(stack, work, floor, port)
        wait_up(server, f"http://127.0.0.1:{port}/health")
        roots: dict[str, int] = {"server": server.pid}
        pg = postmaster_pid(work / "data" / "postgres")
        if pg is not None:
            roots["postgres"] = pg
        watched = sorted({link for link in links.values() if link is not None})
        wanted: list[tuple[str, bool]] = []
        if args.screens > 0 and watched:
            on_link = {
                link: [i for i in range(args.screens) if watched[i % len(watched)] == link]
                for link in watched
            }
            for i in range(args.screens):
                link = watched[i % len(watched)]
                wanted.append(
                    (link, on_link[link].index(i) in timed_screens(len(on_link[link]), args.timed))
                )
        screen_conn = None
        if wanted:
            screen_conn, roots["screens"] = spawn(stack, screens, port, wanted)
            ready = receive(screen_conn, 300, "the screens")
            if ready["errors"]:
                print(f"screens: {ready['opened']} of {len(wanted)} connected: {ready['errors']}")
        warmup = (
            args.warmup if args.warmup is not None else (5.0 if args.flat_out else 60.0 / args.rate)
        )
        run_until = now_us() + int((warmup + args.seconds + 0.5) * 1e6)
        opts = {
            "tables": args.tables, "tables_per_link": args.tables_per_link, "seed": args.seed,
            "flat_out": args.flat_out, "rate": args.rate, "void_odds": args.void_odds,
            "heartbeat": args.heartbeat, "run_until_us": run_until,
        }  # fmt: skip
        ids = list(links)
        clients = []
        for c in range(args.clients):
            conn, pid = spawn(stack, controllers, port, str(floor), ids[c :: args.clients], opts)
            clients.append(conn)
            roots[f"controllers{c + 1}"] = pid
        time.sleep(warmup)
        cpu0, busy0, t0 = cpu_seconds(roots), machine_busy(), now_us()
        time.sleep(args.seconds)
        cpu1, busy1, t1 = cpu_seconds(roots), machine_busy(), now_us()
        seen = [receive(conn, 120 + 60 / args.rate, "a controller process") for conn in clients]
        shown = None
        if screen_conn is not None:
            time.sleep(1)  # the last events' messages
            screen_conn.send("stop")
            shown = receive(screen_conn, 60, "the screens")
    cpu = {name: cpu1[name] - cpu0[name] for name in roots}
    cpu["machine"] = busy1 - busy0
    return figures(args, seen, shown, cpu, (t0, t1))


def figures(
    args: argparse.Namespace,
    seen: list[dict[str, Any]],
    shown: dict[str, Any] | None,
    cpu: dict[str, float],
    window: tuple[int, int],
) -> dict[str, Any]:
    t0, t1 = window
    seconds = (t1 - t0) / 1e6
    latency: dict[str, list[float]] = {}
    statuses: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    for part in seen:
        problems.update(part["problems"])
        for kind, sent, answered, status in part["answers"]:
            if t0 <= answered < t1:
                statuses[f"{kind} {status}"] += 1
                if status == 200:
                    latency.setdefault(kind, []).append((answered - sent) / 1000)
    events = sum(len(latency.get(k, [])) for k in ("bets", "outcome", "void"))
    matched = Matched()
    per_second = 0.0
    if shown is not None:
        acks: dict[str, list[tuple[int, int]]] = {}
        lowerings: dict[str, list[int]] = {}
        for part in seen:
            for link, items in part["acks"].items():
                acks.setdefault(link, []).extend(a for a in items if t0 <= a[0] < t1)
            for link, items in part["lowerings"].items():
                lowerings.setdefault(link, []).extend(items)
        for link, values in shown["timed"]:
            one = match_screen(acks.get(link, []), lowerings.get(link, []), values, BLACKOUT_US)
            matched.delays_us += one.delays_us
            matched.untimed += one.untimed
            matched.unseen += one.unseen
        whole = range(t0 // 1_000_000 + 1, t1 // 1_000_000)  # whole seconds in the window
        per_second = sum(shown["per_second"].get(s, 0) for s in whole) / max(1, len(whole))

    def ms(values: list[float], p: float) -> float | None:
        found = percentile(values, p)
        return None if found is None else round(found, 2)

    delays = [d / 1000 for d in matched.delays_us]
    controllers_cpu = sum(v for k, v in cpu.items() if k.startswith("controllers"))
    return {
        "tables": args.tables,
        "screens": args.screens,
        "pace": "flat out" if args.flat_out else f"{args.rate:g} rounds/table/min",
        "seconds": round(seconds, 1),
        "cpus": os.cpu_count(),
        "events_per_s": round(events / seconds, 1),
        "rounds_per_s": round(len(latency.get("bets", [])) / seconds, 1),
        "heartbeats_per_s": round(len(latency.get("status", [])) / seconds, 1),
        **{
            f"{k}_p{p}_ms": ms(latency.get(k, []), p)
            for k in ("bets", "outcome", "void", "status")
            for p in (50, 99)
        },
        "event_to_screen_p50_ms": ms(delays, 50),
        "event_to_screen_p99_ms": ms(delays, 99),
        "event_to_screen_samples": len(delays),
        "event_to_screen_untimed": matched.untimed,
        "event_to_screen_unseen": matched.unseen,
        "screen_messages_per_s": round(per_second, 1),
        "screens_served": None if shown is None else shown["served"],
        "screen_gaps": None if shown is None else shown["gaps"],
        "server_cpu_us_per_event": round(1e6 * cpu["server"] / events) if events else None,
        "postgres_cpu_us_per_event": round(1e6 * cpu["postgres"] / events)
        if events and "postgres" in cpu
        else None,
        "cpu_s": {
            "server": round(cpu["server"], 2),
            "postgres": round(cpu.get("postgres", 0), 2),
            "controllers": round(controllers_cpu, 2),
            "screens": round(cpu.get("screens", 0), 2),
            "machine": round(cpu["machine"], 1),
        },  # fmt: skip
        "not_200": {k: v for k, v in statuses.items() if not k.endswith(" 200")},
        "problems": dict(problems.most_common(3)),
        "meter_awards": sum(part["meter_awards"] for part in seen),
    }


def show(result: dict[str, Any]) -> None:
    def f(key: str, unit: str = "") -> str:
        value = result.get(key)
        return "-" if value is None else f"{value:,}{unit}"

    cpu = result["cpu_s"]
    e2s = (
        f"{f('event_to_screen_p50_ms')} / {f('event_to_screen_p99_ms')} ms"
        f" ({f('event_to_screen_samples')} samples, {f('event_to_screen_untimed')} untimed,"
        f" {f('event_to_screen_unseen')} unseen)"
    )
    messages = (
        f"{f('screen_messages_per_s')} ({f('screens_served')} screens served,"
        f" {f('screen_gaps')} gaps)"
    )
    cpu_text = (
        f"server {cpu['server']}, PostgreSQL {cpu['postgres']}, controllers"
        f" {cpu['controllers']}, screens {cpu['screens']}, whole machine {cpu['machine']}"
    )
    rows = [
        (
            "floor",
            f"{result['tables']} tables, {result['screens']} screens, {result['pace']},"
            f" {result['seconds']} s on {result['cpus']} CPUs",
        ),
        (
            "events/s acknowledged",
            f"{f('events_per_s')} ({f('rounds_per_s')} rounds/s;"
            f" {f('heartbeats_per_s')} heartbeats/s beside)",
        ),
        ("bets p50 / p99", f"{f('bets_p50_ms')} / {f('bets_p99_ms')} ms"),
        ("outcome p50 / p99", f"{f('outcome_p50_ms')} / {f('outcome_p99_ms')} ms"),
        ("void p50 / p99", f"{f('void_p50_ms')} / {f('void_p99_ms')} ms"),
        ("heartbeat p50 / p99", f"{f('status_p50_ms')} / {f('status_p99_ms')} ms"),
        ("event-to-screen p50 / p99", e2s),
        ("screen messages/s", messages),
        (
            "server CPU per event",
            f"{f('server_cpu_us_per_event', ' µs')}"
            f" (PostgreSQL {f('postgres_cpu_us_per_event', ' µs')})",
        ),
        ("CPU seconds", cpu_text),
        ("not 200", json.dumps(result["not_200"]) if result["not_200"] else "none"),
    ]
    for label, text in rows:
        print(f"{label:<27}{text}")
    for problem, count in result["problems"].items():
        print(f"  {count} x {problem}")
    print(json.dumps(result, sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--screens", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=6.0, help="rounds per table per minute")
    parser.add_argument("--flat-out", action="store_true", help="each table as fast as answered")
    parser.add_argument("--seconds", type=float, default=60.0, help="the measured window")
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="unmeasured s first (default: a period; 5 flat out)",
    )
    parser.add_argument("--tables-per-link", type=int, default=10)
    parser.add_argument("--clients", type=int, default=1, help="controller processes")
    parser.add_argument("--timed", type=int, default=5, help="timed screens per link")
    parser.add_argument("--void-odds", type=int, default=200, help="1 round in this many void")
    parser.add_argument("--heartbeat", type=float, default=2.0, help="s between /status; 0: none")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.tables < 1 or args.clients < 1 or args.rate <= 0 or args.void_odds < 1:
        parser.error("--tables, --clients, --void-odds at least 1 and --rate above 0")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # cleanups run on SIGTERM too
    work = Path(tempfile.mkdtemp(prefix="jackpot-floor-"))
    try:
        show(run(args, work))
    except KeyboardInterrupt:
        raise SystemExit("interrupted: every process started here is stopped") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
