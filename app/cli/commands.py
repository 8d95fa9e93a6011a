"""The `jackpot` command: `jackpot serve --config floor.toml` and friends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import uvicorn

import app.cli.accounts as accounts
import app.cli.audit as audit
import app.cli.database as database
import app.cli.operators as operators
import app.cli.selfcheck as selfcheck
import app.cli.simulate as simulate
from app.cli.options import DEFAULT_URL, DataDir, FloorFile
from app.cli.program import new_app, run
from app.config.demo import DEMO_FLOOR, demo_tokens_in
from app.config.mystery_key import MysteryKeyError, mystery_key

if TYPE_CHECKING:  # imported when serving (a command's start stays light)
    from app.compose import WriterProcess

CONSOLE_TOKENS = "tokens: demo-operator, demo-supervisor, demo-supervisor-2 (app/demo/floor.toml)"


cli = new_app("Linked progressive jackpot server")


class Role(StrEnum):
    writer = "writer"
    display = "display"  # serves displays only, relaying the writer's stream


@cli.command("serve", help="run the server")
def serve_command(
    config: FloorFile = None,
    host: Annotated[str | None, typer.Option()] = None,
    port: Annotated[int | None, typer.Option()] = None,
    data_dir: DataDir = None,
    log_level: Annotated[
        str | None, typer.Option(help="default: JACKPOT_LOG_LEVEL, else info")
    ] = None,
    role: Annotated[
        Role,
        typer.Option(
            help="display: serve displays only, relaying the writer's stream from REDIS_URL"
        ),
    ] = Role.writer,
    changed_by: Annotated[
        str | None,
        typer.Option(
            envvar="JACKPOT_CHANGED_BY",
            help="the supervisor who changed the floor file: with dual control, a change "
            "of money parameters is their proposal, approved by another supervisor",
        ),
    ] = None,
) -> int:
    import app.cli.exit_status as exit_status
    from app.cli.serving import uvicorn_config
    from app.compose import display_app, writer_process
    from app.config.floor_file import FloorError, load_floor
    from app.config.floor_parameters import FloorSource
    from app.config.settings import Settings
    from app.ops.logs import configure
    from app.ops.software import authenticate
    from app.writer.snapshot_policy import tune_collector

    overrides: dict[str, Any] = {
        k: v for k, v in (("host", host), ("port", port), ("data_dir", data_dir)) if v is not None
    }
    settings = Settings(**overrides)
    log_level = (log_level or settings.log_level).lower()
    configure(json=settings.log_format == "json", level=log_level)
    # Self-authentication before anything else (docs/operations.md "Software identity").
    identity = authenticate()
    if identity.problems:
        problems = "\n".join(identity.problems)
        print(f"software authentication failed, the start is refused:\n{problems}", file=sys.stderr)
        return exit_status.NOT_AUTHENTIC
    if identity.install != "wheel":
        print(
            f"not an installed wheel ({identity.install}): its files are not checked",
            file=sys.stderr,
        )
    path = config or settings.config
    if path is None:
        print(
            "a floor file is required: --config FILE (or JACKPOT_CONFIG); the demo floor "
            "runs under `jackpot demo` only",
            file=sys.stderr,
        )
        return exit_status.INVALID_FLOOR
    try:
        floor = load_floor(path)
    except FloorError as error:
        print(f"{path}: the floor file is not valid:\n{error}", file=sys.stderr)
        return exit_status.INVALID_FLOOR
    published = demo_tokens_in(floor)
    if role is Role.writer and published and not settings.demo_tokens:
        print(
            f"{path}: these hold the demo floor's tokens, published in the repository: "
            f"{', '.join(published)}; give each its own (docs/operations.md, The floor file)",
            file=sys.stderr,
        )
        return exit_status.INVALID_FLOOR
    if role is Role.writer:
        try:
            mystery_key(floor, settings)
        except MysteryKeyError as error:
            print(f"{path}: {error}", file=sys.stderr)
            return exit_status.INVALID_FLOOR
    process = None
    if role is Role.display:
        app = display_app(settings, floor)
    else:
        process = writer_process(
            settings, floor, source=FloorSource.of(path), changed_by=changed_by, identity=identity
        )
        app = process.app
    print(f"jackpot server on http://{settings.host}:{settings.port}  (floor: {path})", flush=True)
    for link in floor.links:
        print(
            f"  display for link {link.id}: http://{settings.host}:{settings.port}/display/{link.id}",
            flush=True,
        )
    # uvicorn turns SIGTERM / SIGINT into a graceful shutdown: the lifespan drains the
    # writer (every accepted request committed and answered) and the process exits 0.
    # Limits and timeouts (docs/operations.md, "Limits") live in app/cli/serving.py.
    server = _Server(uvicorn_config(app, settings, log_level=log_level))
    tune_collector()
    return _served(server, process, path)


def _served(server: uvicorn.Server, process: WriterProcess | None, path: Path) -> int:
    """Serve until stopped; the exit status says why it stopped (docs/operations.md)."""
    import app.cli.exit_status as exit_status

    try:
        server.run()
    except SystemExit:  # uvicorn's status for a failed start-up: ours say which
        if process is not None and process.refused:
            problems = "\n".join(process.refused[0].problems)
            print(f"{path}: the start is refused:\n{problems}", file=sys.stderr)
            return exit_status.START_REFUSED
        return exit_status.STARTUP_FAILED
    if process is not None and process.crashed:
        print(f"stopped by an error: {process.crashed[0]!r}", file=sys.stderr)
        return exit_status.CRASHED
    return 0


@cli.command("demo", help="the demo floor: server, simulated tables, display page")
def demo_command(
    port: Annotated[int, typer.Option()] = 8000,
    data_dir: Annotated[Path, typer.Option()] = Path(".jackpot"),
    boost: Annotated[int, typer.Option(help="jackpot hands this many times likelier")] = 2000,
    rate: Annotated[float, typer.Option(help="rounds per second per table")] = 0.5,
    dual_control: Annotated[
        bool, typer.Option(help="seed changes, resets and corrections need a second supervisor")
    ] = True,
    silent_table: Annotated[
        str | None,
        typer.Option(
            help="T03,...: these tables go silent past the round timeout, then come back",
            show_default=False,
        ),
    ] = None,
) -> int:
    """`jackpot serve` on the demo floor and `jackpot simulate` against it; Ctrl-C stops both."""
    exe = [sys.executable, "-m", "app.cli"]
    url = f"http://127.0.0.1:{port}"
    floor = _demo_floor(data_dir, dual_control)
    server = subprocess.Popen(
        [*exe, "serve", "--config", str(floor), "--data-dir", str(data_dir),
         "--port", str(port), "--log-level", "warning"],
        # The demo's own floor, on purpose; and its API pages, from the CDN.
        env={**os.environ, "JACKPOT_DEMO_TOKENS": "1", "JACKPOT_API_DOCS": "1"},
    )  # fmt: skip
    processes = [server]
    stop = _StopSignal()
    try:
        if not _wait_healthy(server, url, stop):
            print("the server did not start", file=sys.stderr)
            return 1
        if not stop.stopping:
            simulator = subprocess.Popen(
                [*exe, "simulate", "--url", url, "--config", str(DEMO_FLOOR),
                 "--boost", str(boost), "--rate", str(rate),
                 *(["--silent-table", silent_table] if silent_table else [])]
            )  # fmt: skip
            processes.append(simulator)
            print(f"\n  Display page:  {url}/display/stud   (and /display/tcp, /display/tiers: "
                  "a tiered link with a must-hit-by level)", flush=True)  # fmt: skip
            print(f"  Console:       {url}/console   {CONSOLE_TOKENS}", flush=True)
            print(f"  API:           {url}/docs      Ctrl-C stops everything.\n", flush=True)
        while not stop.stopping and all(p.poll() is None for p in processes):
            time.sleep(0.3)
    finally:
        # The simulator first (it finishes its rounds), then the server (it drains).
        _stop_in_turn(reversed(processes))
    return _demo_status(processes, stopped=stop.stopping)


class _StopSignal:
    """SIGINT or SIGTERM asks the demo to stop: it then stops its processes in turn."""

    def __init__(self) -> None:
        self.stopping = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True


def _demo_floor(data_dir: Path, dual_control: bool) -> Path:
    """The demo floor as a casino runs it, with dual control (sam proposes, sue approves in
    the console); the file itself keeps it off for the tests that change meters at once."""
    floor = data_dir / "demo-floor.toml"
    data_dir.mkdir(parents=True, exist_ok=True)
    floor.write_text(
        DEMO_FLOOR.read_text().replace(
            "dual_control = false", f"dual_control = {'true' if dual_control else 'false'}"
        )
    )
    return floor


def _wait_healthy(server: subprocess.Popen[bytes], url: str, stop: _StopSignal) -> bool:
    """Until the server answers /health, a stop is asked or the time is up; False when
    the server exited instead."""
    import urllib.request

    deadline = time.monotonic() + 180  # the first start initialises PostgreSQL
    while not stop.stopping and time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
                if answer.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return True


def _stop_in_turn(processes: Iterable[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each still running, waiting for it to end (killed after 30 s)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _demo_status(processes: list[subprocess.Popen[bytes]], *, stopped: bool) -> int:
    """0 when asked to stop and the server drained and stopped cleanly; else 1, saying why."""
    server = processes[0]
    if not stopped:
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


@cli.command(
    "simulate",
    help="Simulated table controllers posting rounds through the HTTP API.",
    short_help="deal rounds at simulated tables against a server",
)
def simulate_command(
    url: Annotated[str, typer.Option(help="the jackpot server")] = DEFAULT_URL,
    config: Annotated[
        Path,
        typer.Option(help="floor file (its tables; default: the demo floor)", show_default=False),
    ] = DEMO_FLOOR,
    tables: Annotated[
        str | None, typer.Option(help="T01,T02,... (default: every table)", show_default=False)
    ] = None,
    rate: Annotated[float, typer.Option(help="rounds per second per table")] = 1.0,
    seed: Annotated[int | None, typer.Option(help="reproducible deals")] = None,
    boost: Annotated[
        float,
        typer.Option(help="meter hands about N times as likely as by real odds (1: real odds)"),
    ] = 1.0,
    duration: Annotated[
        float | None, typer.Option(help="seconds (default: until Ctrl-C)", show_default=False)
    ] = None,
    tokens: Annotated[
        str | None,
        typer.Option(help="T01=token,... (default: demo-table-<TABLE>)", show_default=False),
    ] = None,
    silent_table: Annotated[
        str | None,
        typer.Option(
            help="T03,...: these tables go silent past the round timeout, then come back",
            show_default=False,
        ),
    ] = None,
) -> int:
    options = simulate.Options(
        url, config, tables, rate, seed, boost, duration, tokens, silent_table
    )
    return simulate.run(options)


class _Server(uvicorn.Server):
    """uvicorn's Server, but a SIGTERM / SIGINT ends in exit status 0 once drained.

    uvicorn re-raises the signal after its graceful shutdown, so the process would die
    by that signal (status -15); a drained, clean stop is a success (docs/api.md "Running").
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


# The auditors' and the operators' commands, each group under its own module.
cli.add_typer(audit.commands)
cli.add_typer(database.commands)
cli.add_typer(operators.commands)
cli.add_typer(accounts.accounts, name="operators")
cli.add_typer(selfcheck.commands)


def main(argv: Sequence[str] | None = None) -> int:
    """`jackpot ...`: the exit status of the command (2 for bad usage)."""
    return run(cli, argv)


if __name__ == "__main__":
    sys.exit(main())
