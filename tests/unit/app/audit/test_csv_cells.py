"""The operators' CSV (audit log, awards, meters) opened in a spreadsheet: a cell that
starts like a formula is written as text, never run; numbers stay numbers."""

from __future__ import annotations

import csv
import io

import pytest

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
