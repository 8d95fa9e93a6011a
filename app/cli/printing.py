"""How the operator commands print an answer: aligned text columns, `key: value` lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_NUMBER = re.compile(r"-?\d+(\.\d+)?")


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


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Plain aligned columns: numbers (money, counts) right-aligned, text left-aligned.

    A column of numbers (a "-" for none counts as one) has its header on the right too;
    in a mixed column (the report's, one per meter) each cell keeps its own side.
    """
    text = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in text)]) for i, h in enumerate(headers)]
    numeric = [
        bool(text) and all(r[i] == "-" or _NUMBER.fullmatch(r[i]) for r in text)
        for i in range(len(headers))
    ]

    def line(values: Sequence[str], numbers: bool) -> str:
        parts = [
            v.rjust(w) if right or (numbers and _NUMBER.fullmatch(v)) else v.ljust(w)
            for v, w, right in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers, False), *(line(r, True) for r in text)])


def fields(data: Mapping[str, Any]) -> str:
    """One `key: value` line per field of an answer, keys aligned."""
    width = max((len(k) for k in data), default=0)
    return "\n".join(f"{k.ljust(width)}  {cell(v)}" for k, v in data.items())


def out(text: str) -> None:
    print(text, flush=True)
