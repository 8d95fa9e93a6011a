"""The `jackpot` command line: serve, demo, simulate, the operators' and auditors' commands."""

from app.cli.commands import main

__all__ = ["main"]
