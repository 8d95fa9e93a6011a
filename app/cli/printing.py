"""How the operator commands print an answer: Rich tables, and `key  value` lines.

On a terminal a table has a ruled header and bold headings, and wraps to the window.
Anything else (a pipe, a file, a test) gets plain text: no escape codes and no rules,
one line per row, columns two spaces apart, lines without trailing spaces, so that a
script can split a row on whitespace. The server's text (`--json`, `--csv`) never
passes through here: it is printed as it came.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_UNBOUNDED = 1_000_000  # a pipe's "width": a row never wraps


def cell(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return " ".join(f"{k}={cell(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ",".join(cell(v) for v in value)
    return str(value)


def show_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Numbers (money, counts) right-aligned, text left-aligned.

    A column of numbers (a "-" for none counts as one) has its header on the right too;
    in a mixed column (the report's, one per meter) each cell keeps its own side.
    """
    text = [[cell(v) for v in row] for row in rows]
    terminal = sys.stdout.isatty()
    table = Table(
        box=box.SIMPLE_HEAD if terminal else None,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if terminal else "",
    )
    for i, header in enumerate(headers):
        numeric = bool(text) and all(r[i] == "-" or _NUMBER.fullmatch(r[i]) for r in text)
        # Folded, never cut short with an ellipsis: a clipped amount would misread.
        table.add_column(header, justify="right" if numeric else "left", overflow="fold")
    for row in text:
        # Text, not markup: a reason such as "[red]" or ":smile:" is shown as typed.
        table.add_row(*(Text(v, justify="right" if _NUMBER.fullmatch(v) else None) for v in row))
    show(table)


def fields(data: Mapping[str, Any]) -> None:
    """One `key  value` line per field of an answer, keys aligned."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column()
    grid.add_column(overflow="fold")
    for key, value in data.items():
        grid.add_row(Text(key), Text(cell(value)))
    show(grid)


def show(renderable: RenderableType) -> None:
    if sys.stdout.isatty():
        Console(highlight=False).print(renderable)
        return
    buffer = io.StringIO()
    plain = Console(file=buffer, width=_UNBOUNDED, color_system=None, highlight=False, emoji=False)
    plain.print(renderable)
    out("\n".join(line.rstrip() for line in buffer.getvalue().splitlines()))


def out(text: str) -> None:
    print(text, flush=True)
