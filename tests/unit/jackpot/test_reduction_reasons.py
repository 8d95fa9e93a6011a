"""A meter or a reserve goes down only for a listed reason (MI R 432.1838(4), NV 5.110)."""

from __future__ import annotations

import pytest

from jackpot.errors import InvalidCommandError
from jackpot.reduction_reasons import REASON_CODES, check_reason_code, lowers


def test_what_lowers_a_meter() -> None:
    assert lowers("reset")
    assert lowers("correct", "hand_paid", 100)
    assert lowers("correct", "void_round")
    assert lowers("correct", "adjust", -1)
    assert not lowers("correct", "adjust", 1)
    assert not lowers("seed")


def test_a_missing_code_is_refused_naming_the_field_and_the_list() -> None:
    with pytest.raises(InvalidCommandError) as refused:
        check_reason_code(None, required=True)
    assert refused.value.loc == ("reason_code",)
    assert "malfunction" in refused.value.message and "regulator_order" in refused.value.message


def test_an_unlisted_code_is_refused_even_where_none_is_required() -> None:
    with pytest.raises(InvalidCommandError):
        check_reason_code("because", required=False)


def test_listed_codes_pass() -> None:
    for code in REASON_CODES:
        check_reason_code(code, required=True)
    check_reason_code(None, required=False)
