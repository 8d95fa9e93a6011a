"""The CSV the operators' routes write (awards, audit log, reports), made safe to open in a
spreadsheet (docs/api.md, "Records and reports").

A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a CR as a formula
(CSV injection): such a cell is written with a leading apostrophe, as text; a plain number
keeps its sign. A cell holding a CR or a line feed anywhere is quoted, so that no
spreadsheet reads it as the start of a new row (Python's csv module quotes a lone CR
only on some versions: the quoting is done here, as RFC 4180 has it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")
_QUOTED = re.compile(r'[",\r\n]')


def csv_cell(value: Any) -> str:
    """One cell's text, escaped and quoted as it goes into the file."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        text = "'" + text
    if _QUOTED.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(cells: Iterable[Any]) -> str:
    values = [csv_cell(value) for value in cells]
    if values == [""]:
        return '""\n'  # a line of one empty cell, not an empty line a reader skips
    return ",".join(values) + "\n"


def write_csv(
    write: Callable[[str], object],
    rows: Iterable[Mapping[str, Any]],
    columns: tuple[str, ...],
) -> None:
    """The header, then each row's `columns` (a missing one empty, others ignored)."""
    write(csv_line(columns))
    for row in rows:
        write(csv_line(row.get(column) for column in columns))


def to_csv(rows: Iterable[Mapping[str, Any]], columns: tuple[str, ...]) -> str:
    parts: list[str] = []
    write_csv(parts.append, rows, columns)
    return "".join(parts)
