"""The auditors' commands: `jackpot verify` and `jackpot export`, read-only, against the
journal itself (docs/journal.md).

Both hand their options on as an `argparse.Namespace`, the bag `main_verify`, `main_export`
and `journal_dsn` (app/audit/export.py) read them from."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from app.cli.options import DatabaseUrl, DataDir, FloorFile
from app.cli.program import new_app
from app.config.demo import DEMO_FLOOR

# What `verify` needs is imported when it runs: every `jackpot` command builds these
# commands, and the replay's modules would more than double their start-up time.
if TYPE_CHECKING:
    from rich.progress import TaskID

    from app.audit.findings import Report
    from app.state.floor_state import FloorConfig


commands = new_app("the auditors' commands")


@commands.command("verify", help="replay the whole journal from its entries and check every one")
def verify_command(
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
    config: FloorFile = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="progress bar on stderr (default: when stderr is a terminal)",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            help="processes: the journal is cut at stored snapshots into segments verified "
            "side by side, each ending on the snapshot the next starts from"
        ),
    ] = 1,
    file: Annotated[
        Path | None,
        typer.Option(
            help="verify a `jackpot export` of the whole journal (JSON lines) instead of the "
            "database: away from it, on the auditor's own machine"
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="CHECKPOINT",
            help="SEQ:HEAD:SNAPSHOT_SHA256 as an earlier clean run printed it: check that the "
            "journal still holds that entry's hash and that snapshot, then replay only the "
            "entries after it",
        ),
    ] = None,
) -> int:
    """0 when the journal verifies, 1 with discrepancies, 2 on bad input."""
    found = argparse.Namespace(data_dir=data_dir, database_url=database_url, config=config)
    found.progress, found.jobs, found.file, found.since = progress, jobs, file, since
    return main_verify(found)


@commands.command(
    "export", help="write a period's journal entries, with their hashes, as JSON lines"
)
def export_command(
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
    start: Annotated[str | None, typer.Option("--from", help="recorded at or after")] = None,
    end: Annotated[str | None, typer.Option("--to", help="recorded before")] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="file (default: stdout)")
    ] = None,
) -> int:
    from app.audit.export import main_export

    found = argparse.Namespace(data_dir=data_dir, database_url=database_url, output=output)
    found.from_, found.to = start, end
    return main_export(found)


class ProgressBar:
    """Rich's progress bar on stderr, redrawn at most five times a second; on a stream that
    is no terminal (`--progress` through a pipe) it shows its last state once, at the end."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("verifying"),
            BarColumn(),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TextColumn("entries"),
            TimeRemainingColumn(),
            console=Console(file=out),
            refresh_per_second=5,
        )
        self.task: TaskID | None = None

    def start(self, total: int) -> None:
        self.task = self.bar.add_task("verifying", total=total)
        self.bar.start()

    def update(self, done: int) -> None:
        if self.task is not None:
            self.bar.update(self.task, completed=done)

    def close(self, done: int) -> None:
        self.update(done)
        self.bar.stop()


def load_config(path: Path | None) -> FloorConfig:
    """The floor file: --config, else JACKPOT_CONFIG, else the demo floor (as `serve`)."""
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.config.settings import Settings

    config = floor_config(load_floor(path or Settings().config or DEMO_FLOOR))
    return config


def given_floor(path: Path | None) -> tuple[FloorConfig, dict[str, Any] | None, str | None]:
    """The floor file `verify` is given: its configuration, parameters and path. With
    none named, the demo floor's configuration (what a journal that records no
    parameters was checked against before) and no parameters: nothing to compare."""
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.config.floor_parameters import floor_parameters
    from app.config.settings import Settings

    named = path or Settings().config
    floor = load_floor(named or DEMO_FLOOR)
    if named is None:
        return floor_config(floor), None, None
    return floor_config(floor), floor_parameters(floor), str(named)


def main_verify(args: argparse.Namespace) -> int:
    """`jackpot verify`: 0 when the journal verifies, 1 with discrepancies, 2 on bad input."""
    from app.audit.checkpoint import Checkpoint
    from app.audit.export import journal_dsn
    from app.audit.verify_run import verify
    from app.config.floor_file import FloorError
    from app.store.journal import read_only_journal

    try:
        config, floor, source = given_floor(args.config)
    except FloorError as error:
        print(f"the floor file is not valid:\n{error}", file=sys.stderr)
        return 2
    shown = getattr(args, "progress", None)
    if shown is None:
        shown = sys.stderr.isatty()
    # --no-progress, or stderr no terminal by default: the output stays plain text.
    progress = ProgressBar(sys.stderr) if shown else None
    jobs = getattr(args, "jobs", None) or 1
    since = None
    if getattr(args, "since", None):
        try:
            since = Checkpoint.parse(args.since)
        except ValueError as error:
            print(f"--since: {error}", file=sys.stderr)
            return 2

    path = getattr(args, "file", None)
    if path is not None:
        from app.audit.export import ExportFile

        if since is not None:
            print("--since starts from a stored snapshot: not with --file", file=sys.stderr)
            return 2
        try:
            exported = ExportFile(Path(path))
            return _print(
                asyncio.run(verify(exported, config, progress=progress, floor=floor, source=source))
            )
        except (OSError, ValueError) as error:
            print(f"--file: {error}", file=sys.stderr)
            return 2

    async def run() -> Report:
        async with journal_dsn(args) as dsn, read_only_journal(dsn) as journal:
            return await verify(
                journal, config, progress=progress, jobs=jobs, dsn=dsn, since=since,
                floor=floor, source=source,
            )  # fmt: skip

    return _print(asyncio.run(run()))


def _print(report: Report) -> int:
    from app.audit.findings import format_report

    print(format_report(report))
    return 0 if report.ok else 1
