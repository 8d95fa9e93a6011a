"""The auditors' commands: `jackpot verify` and `jackpot export`, read-only, against the
journal itself (docs/journal.md).

Both hand their options on as an `argparse.Namespace`, the bag `main_verify`, `main_export`
and `journal_dsn` (app/audit/export.py) read them from."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
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

    from app.audit.checkpoint import Checkpoint
    from app.audit.findings import Discrepancy, Report
    from app.audit.heads import ExpectedHead
    from app.state.floor_state import FloorConfig
    from app.store.journal import JournalSource


commands = new_app("the auditors' commands")


@commands.command(
    "check-commitment",
    help="check a must-hit-by award's revealed trigger and nonce against its commitment",
)
def check_commitment_command(
    commitment: Annotated[str, typer.Argument(help="as published at the draw (64 hex digits)")],
    trigger: Annotated[str, typer.Argument(help='as revealed at the hit, such as "473.12"')],
    nonce: Annotated[str, typer.Argument(help="as revealed at the hit (hex)")],
    low: Annotated[str | None, typer.Option("--from", help="the level's must_hit_from")] = None,
    high: Annotated[str | None, typer.Option("--by", help="the level's must_hit_by")] = None,
) -> int:
    """0 when sha256("<trigger>|<nonce>") is the commitment (and the trigger in [from, by)
    when given), else 1 with what is wrong: anyone can check an award by hand."""
    from jackpot.money import MoneyError, parse_money
    from jackpot.mystery import commitment as commit
    from jackpot.mystery import reveal_problems

    try:
        value = parse_money(trigger)
        bounds = (parse_money(low or "0"), parse_money(high) if high else value + 1)
    except MoneyError as error:
        typer.echo(f"Error: {error}", err=True)
        return 2
    problems = reveal_problems(commitment.lower(), value, nonce, *bounds)
    if problems:
        for problem in problems:
            typer.echo(problem)
        return 1
    typer.echo(f"ok: sha256({trigger}|{nonce}) = {commit(value, nonce)}")
    return 0


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
    expect_head: Annotated[
        list[str] | None,
        typer.Option(
            metavar="SEQ:HASH",
            help="a head written down earlier: the journal must still hold entry SEQ with "
            "that hash (repeatable)",
        ),
    ] = None,
    signed_heads: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="the writer's signed heads (docs/operations.md, Signed heads): each from "
            "--since's seq on, and the last, must verify with --public-key and be in the "
            "journal",
        ),
    ] = None,
    public_key: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="the PEM public key of `jackpot keygen`"),
    ] = None,
) -> int:
    """0 when the journal verifies, 1 with discrepancies, 2 on bad input."""
    found = argparse.Namespace(data_dir=data_dir, database_url=database_url, config=config)
    found.progress, found.jobs, found.file, found.since = progress, jobs, file, since
    found.expect_head, found.signed_heads, found.public_key = expect_head, signed_heads, public_key
    return main_verify(found)


@commands.command(
    "keygen", help="make the Ed25519 key pair the writer signs the journal's head with"
)
def keygen_command(
    private_key: Annotated[
        Path, typer.Option(metavar="FILE", help="the private key (PEM): the writer's only")
    ],
    public_key: Annotated[
        Path, typer.Option(metavar="FILE", help="the public key (PEM): the auditor's")
    ],
) -> int:
    """0 once both files are written; 2 if either exists (a key is never overwritten)."""
    import os

    from app.store.signed_heads import new_key_pair

    for path in (private_key, public_key):
        if path.exists():
            print(f"{path} exists: a key is never overwritten", file=sys.stderr)
            return 2
    private, public = new_key_pair()
    descriptor = os.open(private_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(private)
    public_key.write_bytes(public)
    print(f"private key: {private_key} (JACKPOT_HEAD_KEY_FILE of the writers)")
    print(f"public key: {public_key} (the auditor's: jackpot verify --public-key)")
    return 0


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
    """The floor file: --config, else JACKPOT_CONFIG, else the demo floor."""
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.config.mystery_key import mystery_key
    from app.config.settings import Settings

    settings = Settings()
    floor = load_floor(path or settings.config or DEMO_FLOOR)
    return floor_config(floor, mystery_key(floor, settings))


def given_floor(path: Path | None) -> tuple[FloorConfig, dict[str, Any] | None, str | None]:
    """The floor file `verify` is given: its configuration, parameters and path. With
    none named, the demo floor's configuration (what a journal that records no
    parameters was checked against before) and no parameters: nothing to compare."""
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.config.floor_parameters import floor_parameters
    from app.config.mystery_key import given_key, mystery_key
    from app.config.settings import Settings

    settings = Settings()
    named = path or settings.config
    floor = load_floor(named or DEMO_FLOOR)
    if named is None:
        # The journal, not the demo floor, says which must-hit-by levels there are: the
        # key given opens their draws, and one it lacks is named as a discrepancy.
        return floor_config(floor, given_key(settings)), None, None
    config = floor_config(floor, mystery_key(floor, settings))
    return config, floor_parameters(floor), str(named)


class _BadInput(ValueError):
    """An option or a file `verify` cannot use: said on stderr, exit status 2."""


@dataclass(frozen=True)
class _Verification:
    """What a verify run checks the journal against, read from its options."""

    config: FloorConfig
    floor: dict[str, Any] | None
    source: str | None
    progress: ProgressBar | None
    expected: list[ExpectedHead]
    unsigned: list[Discrepancy]

    async def with_heads(self, journal: JournalSource, report: Report) -> Report:
        """The report, with what the expected and signed heads found."""
        from app.audit.heads import check_heads, with_discrepancies

        found = self.unsigned + await check_heads(journal, self.expected)
        return with_discrepancies(report, found)


def main_verify(args: argparse.Namespace) -> int:
    """`jackpot verify`: 0 when the journal verifies, 1 with discrepancies, 2 on bad input."""
    path = getattr(args, "file", None)
    try:
        config, floor, source = _floor_to_verify(args)
        progress = _progress(args)
        since = _since(args)
        expected, unsigned = _expected_heads(args, 0 if since is None else since.seq)
        if path is not None and since is not None:
            raise _BadInput("--since starts from a stored snapshot: not with --file")
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    given = _Verification(config, floor, source, progress, expected, unsigned)
    if path is None:
        return _print(asyncio.run(_verify_journal(args, given, since)))
    try:
        return _print(asyncio.run(_verify_file(Path(path), given)))
    except (OSError, ValueError) as error:
        print(f"--file: {error}", file=sys.stderr)
        return 2


def _floor_to_verify(
    args: argparse.Namespace,
) -> tuple[FloorConfig, dict[str, Any] | None, str | None]:
    """`given_floor` of --config; a floor file that cannot be used is bad input."""
    from app.config.floor_file import FloorError

    try:
        return given_floor(args.config)
    except FloorError as error:
        raise _BadInput(f"the floor file is not valid:\n{error}") from error


def _progress(args: argparse.Namespace) -> ProgressBar | None:
    """--progress, --no-progress, else a bar only when stderr is a terminal: through a pipe
    the output stays plain text."""
    shown = getattr(args, "progress", None)
    if shown is None:
        shown = sys.stderr.isatty()
    return ProgressBar(sys.stderr) if shown else None


def _since(args: argparse.Namespace) -> Checkpoint | None:
    """--since: the stored snapshot to start from, if any."""
    from app.audit.checkpoint import Checkpoint

    if not getattr(args, "since", None):
        return None
    try:
        return Checkpoint.parse(args.since)
    except ValueError as error:
        raise _BadInput(f"--since: {error}") from error


async def _verify_file(path: Path, given: _Verification) -> Report:
    """--file: an exported journal, read from entry 1."""
    from app.audit.export import ExportFile
    from app.audit.verify_run import verify

    exported = ExportFile(path)
    report = await verify(
        exported, given.config, progress=given.progress, floor=given.floor, source=given.source
    )
    return await given.with_heads(exported, report)


async def _verify_journal(
    args: argparse.Namespace, given: _Verification, since: Checkpoint | None
) -> Report:
    """The journal in the database, read only, from the start or from --since."""
    from app.audit.export import journal_dsn
    from app.audit.verify_run import verify
    from app.store.journal import read_only_journal

    jobs = getattr(args, "jobs", None) or 1
    async with journal_dsn(args) as dsn, read_only_journal(dsn) as journal:
        report = await verify(
            journal, given.config, progress=given.progress, jobs=jobs, dsn=dsn, since=since,
            floor=given.floor, source=given.source,
        )  # fmt: skip
        return await given.with_heads(journal, report)


def _expected_heads(
    args: argparse.Namespace, since_seq: int
) -> tuple[list[ExpectedHead], list[Discrepancy]]:
    """--expect-head and the signed heads to check; ValueError (exit 2) on bad input."""
    from app.audit.heads import parse_expected, signed_expectations

    try:
        expected = [parse_expected(text) for text in getattr(args, "expect_head", None) or []]
    except ValueError as error:
        raise ValueError(f"--expect-head: {error}") from error
    directory, key = getattr(args, "signed_heads", None), getattr(args, "public_key", None)
    if (directory is None) != (key is None):
        raise ValueError("--signed-heads and --public-key go together")
    if directory is None or key is None:
        return expected, []
    try:
        signed, unsigned = signed_expectations(Path(directory), Path(key), since_seq)
    except OSError as error:
        raise ValueError(f"--signed-heads: {error}") from error
    except ValueError as error:  # SignedHeadError
        raise ValueError(f"--signed-heads: {error}") from error
    return expected + signed, unsigned


def _print(report: Report) -> int:
    from app.audit.findings import format_report

    print(format_report(report))
    return 0 if report.ok else 1
