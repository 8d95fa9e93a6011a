"""The operators' tables through a pipe: plain text a script can split on whitespace."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.cli.printing import fields, show_table

AWARD = ["T04/S1a20df93729-000044/4/dealer", "stud", 4, "straight_flush", "731.70", None]
HEADERS = ["ID", "LINK", "BOX", "HAND", "AMOUNT", "METER"]


def test_a_table_is_aligned_columns_without_rules_or_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show_table(HEADERS, [AWARD, ["X", "tcp", 12, "akq_spades", "5000.40", "major"]])
    # Numbers (a "-" for none counts as one) on the right, text on the left.
    assert capsys.readouterr().out.splitlines() == [
        "ID                                LINK  BOX  HAND             AMOUNT  METER",
        "T04/S1a20df93729-000044/4/dealer  stud    4  straight_flush   731.70  -",
        "X                                 tcp    12  akq_spades      5000.40  major",
    ]


def test_an_empty_table_is_its_header(capsys: pytest.CaptureFixture[str]) -> None:
    show_table(HEADERS, [])
    assert capsys.readouterr().out == "  ".join(HEADERS) + "\n"


def test_a_wide_row_is_not_wrapped(capsys: pytest.CaptureFixture[str]) -> None:
    reason = " ".join(["long"] * 100)
    show_table(["ID", "REASON", "AMOUNT"], [[1, reason, "1.00"]])
    assert capsys.readouterr().out.splitlines()[1] == f" 1  {reason}    1.00"


def test_a_mixed_column_keeps_each_cell_on_its_side(capsys: pytest.CaptureFixture[str]) -> None:
    # The report's columns: one per meter, a row per flow (numbers, yes/no, text).
    show_table(["", "stud/major"], [["awards", "33563.20"], ["balanced", True]])
    assert capsys.readouterr().out.splitlines()[1:] == [
        "awards      33563.20",
        "balanced  yes",
    ]


def test_fields_are_key_value_lines(capsys: pytest.CaptureFixture[str]) -> None:
    fields({"seed_before": "10000.00", "reason": "end of promo", "by": None})
    assert capsys.readouterr().out.splitlines() == [
        "seed_before  10000.00",
        "reason       end of promo",
        "by           -",
    ]


@example("promo [bold]x[/bold] :smile:")
@given(st.text(st.characters(codec="utf-8", exclude_categories=("C", "Z")), min_size=1))
def test_any_text_is_shown_as_typed(text: str) -> None:
    """No markup, no emoji codes, no escapes: a reason such as "[red]x" is printed as it is."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        show_table(["REASON"], [[text]])
    header, row = out.getvalue().splitlines()
    assert row.strip() == text.strip()
    assert "\x1b" not in out.getvalue()
