"""The `jackpot` command: `jackpot serve --config floor.toml` and friends."""

from __future__ import annotations

import argparse
import contextlib
import gc
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import uvicorn

import app.cli.audit as audit
import app.cli.operators as operators
import app.cli.simulate as simulate
from app.config.demo import DEMO_FLOOR

# The cyclic collector's thresholds. With the defaults it walks the long-lived state
# again and again as it grows (pauses of 100-300 ms under load, bets a third slower).
# Rare, larger young collections suit both roles: the writer also takes its state out
# of the collector at each snapshot (app/writer/writer.py); a display process holds thousands
# of websockets (bench/bench_displays.py). Smaller steps (5,000 / 5) shortened the
# pauses, but in our (noisy) runs neither bets/s nor p99 improved.
GC_THRESHOLDS = (50_000, 50, 1_000)
CONSOLE_TOKENS = "tokens: demo-operator, demo-supervisor, demo-supervisor-2 (app/demo/floor.toml)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="jackpot", description="Linked progressive jackpot server"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the server")
    serve.add_argument(
        "--config", type=Path, help="floor file (default: JACKPOT_CONFIG, else the demo floor)"
    )
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument(
        "--data-dir", type=Path, default=None, help="embedded PostgreSQL data (default ./.jackpot)"
    )
    serve.add_argument("--log-level", default=None, help="default: JACKPOT_LOG_LEVEL, else info")
    serve.add_argument(
        "--role",
        choices=("writer", "display"),
        default="writer",
        help="display: serve displays only, relaying the writer's stream from REDIS_URL",
    )
    demo = sub.add_parser("demo", help="the demo floor: server, simulated tables, display page")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--data-dir", type=Path, default=Path(".jackpot"))
    demo.add_argument(
        "--boost", type=int, default=2000, help="jackpot hands this many times likelier"
    )
    demo.add_argument("--rate", type=float, default=0.5, help="rounds per second per table")
    audit.add_parsers(sub)
    operators.add_parsers(sub)
    simulate.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve_command(args)
    if args.command == "simulate":
        return simulate.run(args)
    if args.command == "demo":
        return demo_command(args)
    if args.command == "verify":
        return audit.main_verify(args)
    if args.command == "export":
        from app.audit.export import main_export

        return main_export(args)
    code = operators.run(args)
    return 2 if code is None else code


def serve_command(args: argparse.Namespace) -> int:
    from app.api.application import create_app
    from app.cli.serving import uvicorn_config
    from app.config.floor_file import FloorError, load_floor
    from app.config.settings import Settings
    from app.ops.logs import configure

    overrides = {
        k: v
        for k, v in (("host", args.host), ("port", args.port), ("data_dir", args.data_dir))
        if v is not None
    }
    settings = Settings(**overrides)
    log_level = (args.log_level or settings.log_level).lower()
    configure(json=settings.log_format == "json", level=log_level)
    path = args.config or settings.config or DEMO_FLOOR
    try:
        floor = load_floor(path)
    except FloorError as error:
        print(f"{path}: the floor file is not valid:\n{error}", file=sys.stderr)
        return 2
    if args.role == "display":
        from app.api.application import create_display_app

        app = create_display_app(settings, floor)
    else:
        app = create_app(settings, floor)
    print(f"jackpot server on http://{settings.host}:{settings.port}  (floor: {path})", flush=True)
    for link in floor.links:
        print(
            f"  display for link {link.id}: http://{settings.host}:{settings.port}/display/{link.id}",
            flush=True,
        )
    # uvicorn turns SIGTERM / SIGINT into a graceful shutdown: the lifespan drains the
    # writer (every accepted request committed and answered) and the process exits 0.
    # Limits and timeouts (docs/operations.md, "Limits") live in app/cli/serving.py.
    config = uvicorn_config(app, settings, log_level=log_level)
    server = _Server(config)
    gc.set_threshold(*GC_THRESHOLDS)
    server.run()
    return 0


def demo_command(args: argparse.Namespace) -> int:
    """`jackpot serve` on the demo floor and `jackpot simulate` against it; Ctrl-C stops both."""
    import subprocess
    import time
    import urllib.request

    exe = [sys.executable, "-m", "app.cli"]
    url = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen(
        [*exe, "serve", "--config", str(DEMO_FLOOR), "--data-dir", str(args.data_dir),
         "--port", str(args.port), "--log-level", "warning"]
    )  # fmt: skip
    processes = [server]
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        deadline = time.monotonic() + 180  # the first start initialises PostgreSQL
        while not stopping and time.monotonic() < deadline:
            if server.poll() is not None:
                print("the server did not start", file=sys.stderr)
                return 1
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        if not stopping:
            simulator = subprocess.Popen(
                [*exe, "simulate", "--url", url, "--config", str(DEMO_FLOOR),
                 "--boost", str(args.boost), "--rate", str(args.rate)]
            )  # fmt: skip
            processes.append(simulator)
            print(f"\n  Display page:  {url}/display/stud   (and {url}/display/tcp)", flush=True)
            print(f"  Console:       {url}/console   {CONSOLE_TOKENS}", flush=True)
            print(f"  API:           {url}/docs      Ctrl-C stops everything.\n", flush=True)
        while not stopping and all(p.poll() is None for p in processes):
            time.sleep(0.3)
    finally:
        # The simulator first (it finishes its rounds), then the server (it drains).
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    if not stopping:
        statuses = ", ".join(
            f"{name} {p.returncode}"
            for name, p in zip(("server", "simulator"), processes, strict=False)
        )
        print(f"the demo stopped by itself (exit status: {statuses})", file=sys.stderr)
        return 1
    if server.returncode != 0:  # it did not drain and stop cleanly: say how it ended
        print(f"the server exited with status {server.returncode} while stopping", file=sys.stderr)
        return 1
    return 0


class _Server(uvicorn.Server):
    """uvicorn's Server, but a SIGTERM / SIGINT ends in exit status 0 once drained.

    uvicorn re-raises the signal after its graceful shutdown, so the process would die
    by that signal (status -15); a drained, clean stop is a success (API.md, Running).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        original = {
            sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield
        finally:
            # Drained: a second signal now (the demo's SIGTERM after a Ctrl-C to the whole
            # group) must not turn the clean stop into a death by signal (status -15).
            for sig in original:
                signal.signal(sig, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
