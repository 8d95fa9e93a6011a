"""The `jackpot` command line as Typer apps: a command returns its exit status, and `run`
gives it back to the caller (the console script, or a test) instead of leaving the process."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer


def _exit_with(status: int | None) -> None:
    """Every command returns its exit status (0 done, 1 refused or a discrepancy, 2 bad
    input or no server); the group turns it into the process's."""
    raise typer.Exit(status or 0)


def new_app(help: str) -> typer.Typer:
    """A group of `jackpot` commands: `-h` as well as `--help`, no shell-completion options,
    and plain tracebacks (Typer's pretty ones show local variables, such as a token)."""
    return typer.Typer(
        help=help,
        context_settings={"help_option_names": ["-h", "--help"]},
        result_callback=_exit_with,
        add_completion=False,
        pretty_exceptions_enable=False,
    )


def run(app: typer.Typer, argv: Sequence[str] | None = None) -> int:
    """Run `app` on `argv` (default: the process's arguments); its exit status.

    Bad usage is Typer's (click's) message on stderr and status 2, as argparse's was.
    """
    try:
        typer.main.get_command(app).main(args=argv, prog_name="jackpot")
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)  # a message: status 1, as Python gives it
        return 1
    return 0
