"""The operators' CSV (audit log, awards, meters) opened in a spreadsheet: a cell that
starts like a formula is written as text, never run; numbers stay numbers."""

from __future__ import annotations

import csv
import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.audit.reconciliation import to_csv


def cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize(
    "reason",
    ['=HYPERLINK("http://x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx"],
)
def test_a_cell_that_starts_like_a_formula_is_text(reason: str) -> None:
    text = to_csv([{"reason": reason, "amount": "1.00"}], ("reason", "amount"))
    line = text.split("\n", 1)[1]
    assert line.startswith(("'", "\"'")), line  # the cell, quoted or not, starts with '
    assert line.endswith(",1.00\n")


@pytest.mark.parametrize("value", ["-10.00", "+5", "-3", "0.25", "plain text", ""])
def test_numbers_and_plain_text_are_as_they_were(value: str) -> None:
    assert cells(to_csv([{"v": value}], ("v",)))[0]["v"] == value


def raw_rows(text: str) -> list[list[str]]:
    """Rows as a spreadsheet splits them: a CR or LF outside quotes ends a row."""
    rows: list[list[str]] = []
    row: list[str] = []
    cell, quoted, i = "", False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"' and text[i + 1 : i + 2] == '"':
                cell, i = cell + '"', i + 1
            elif c == '"':
                quoted = False
            else:
                cell += c
        elif c == '"':
            quoted = True
        elif c == ",":
            row, cell = [*row, cell], ""
        elif c in "\r\n":
            if row or cell:
                rows.append([*row, cell])
            row, cell = [], ""
        else:
            cell += c
        i += 1
    return rows


@pytest.mark.parametrize(
    ("reason", "written"),
    [
        ("x\r=HYPERLINK(1)", "x\r=HYPERLINK(1)"),  # a CR inside: no new row starts at "="
        ("\r=1+1", "'\r=1+1"),
        ("\t=1+1", "'\t=1+1"),
        ("a\r\nb", "a\r\nb"),
        ('say "hi", then \r go', 'say "hi", then \r go'),
    ],
)
def test_a_cr_anywhere_in_a_cell_keeps_the_row_whole(reason: str, written: str) -> None:
    text = to_csv([{"reason": reason, "amount": "1.00"}], ("reason", "amount"))
    assert raw_rows(text) == [["reason", "amount"], [written, "1.00"]]
    assert cells(text) == [{"reason": written, "amount": "1.00"}]


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_any_text_comes_back_as_written_one_row_and_never_a_formula(values: list[str]) -> None:
    columns = tuple(f"c{i}" for i in range(len(values)))
    text = to_csv([dict(zip(columns, values, strict=True))], columns)
    (row,) = raw_rows(text)[1:] or [[""] * len(values)]
    assert len(row) == len(values)
    for value, cell in zip(values, row, strict=True):
        assert cell in (value, "'" + value)
        formula = cell.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert not formula or re.fullmatch(r"[+-]?[0-9]+(\.[0-9]+)?", cell), cell
