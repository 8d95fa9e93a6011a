"""A tiered link in the floor file: every row names a meter its link has, every meter is
paid by some row, a hand's share of a meter is at most 100 %; every problem is listed."""

from __future__ import annotations

import pytest

from app.config.floor_config import floor_config
from app.config.floor_file import FloorError, parse_floor
from tests.support import H1, H2, table

TIERED_LINK = """
currency = "SGD"

[[links]]
id = "stud"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.20"
  reserve_rate = "0.05"
  [[links.meters]]
  id = "minor"
  seed = "500.00"
  rate = "0.05"
  reserve_rate = "0.01"
  [[links.meters]]
  id = "mini"
  seed = "50.00"
  rate = "0.02"
  reserve_rate = "0"
"""
TIERED = (
    '{ royal_flush = "major:1.00", straight_flush = "minor:1.00", four_of_a_kind = "mini:1.00" }'
)


def problems(text: str) -> list[str]:
    with pytest.raises(FloorError) as caught:
        parse_floor(text)
    return list(caught.value.problems)


def test_a_tiered_link_whose_rows_pay_every_level_loads() -> None:
    text = TIERED_LINK + table("T01", token=H1, game='"multi_link_casino_stud"', pay_table=TIERED)
    config = floor_config(parse_floor(text))
    pays = {row.name: row.pay for row in config.tables["T01"].settings.game.pay_table}
    assert [getattr(pays[r], "meter", None) for r in ("royal_flush", "straight_flush")] == [
        "major",
        "minor",
    ]


def test_levels_may_be_paid_by_different_tables_of_the_link() -> None:
    text = (
        TIERED_LINK
        + table("T01", token=H1, game='"multi_link_casino_stud"',
                pay_table='{ four_of_a_kind = "mini:1.00" }')
        + table("T02", token=H2, game='"casino_stud"',
                pay_table='{ straight_flush = "minor:0.50" }')
    )  # fmt: skip
    parse_floor(text)  # T01's royal flush pays major (the first meter), T02's pays minor too


def test_a_meter_no_row_pays_is_refused_it_would_grow_for_ever() -> None:
    text = TIERED_LINK + table("T01", token=H1, game='"multi_link_casino_stud"')
    assert problems(text) == [
        "links[0] (stud).meters[1] (minor).id: no pay-table row of a table on link 'stud' "
        "pays meter 'minor': it would grow for ever (name it in a row, such as "
        'straight_flush = "minor:1.00")',
        "links[0] (stud).meters[2] (mini).id: no pay-table row of a table on link 'stud' "
        "pays meter 'mini': it would grow for ever (name it in a row, such as "
        'straight_flush = "mini:1.00")',
    ]


def test_every_problem_is_listed_a_missing_meter_and_a_share_above_100_percent() -> None:
    text = (
        TIERED_LINK
        + table("T01", token=H1, game='"multi_link_casino_stud"',
                pay_table='{ royal_flush = "grand:1.00", straight_flush = "minor:1.00", '
                          'four_of_a_kind = "mini:1.00" }')
        + table("T02", token=H2, game='"casino_stud"', pay_table='{ royal_flush = "major:1.10" }')
    )  # fmt: skip
    assert problems(text) == [
        "tables[0] (T01).pay_table.royal_flush: pays meter 'grand', which link 'stud' has not "
        "(its meters: major, minor, mini)",
        "tables[1] (T02).pay_table.royal_flush: casino_stud royal_flush: a hand's share of "
        "meter 'major' is at most 1.00 (100 %), not 1.10",
    ]


def test_a_link_with_no_table_grows_nothing_and_loads() -> None:
    parse_floor(TIERED_LINK)


MYSTERY = """
  [[links.meters]]
  id = "mystery"
  seed = "50.00"
  rate = "0.01"
  reserve_rate = "0"
"""


def mystery_floor(fields: str, pay_table: str = TIERED) -> str:
    return (
        TIERED_LINK
        + MYSTERY
        + fields
        + table("T01", token=H1, game='"multi_link_casino_stud"', pay_table=pay_table)
    )


def test_a_must_hit_by_level_needs_no_row_and_loads() -> None:
    floor = parse_floor(mystery_floor('  must_hit_by = "500.00"\n  must_hit_from = "100.00"\n'))
    meter = floor_config(floor).links[0].meters[3]
    assert (meter.must_hit_by, meter.must_hit_from) == (500_000_000, 100_000_000)


def test_a_must_hit_by_range_is_checked_every_problem_listed() -> None:
    text = mystery_floor(
        '  must_hit_by = "40.00"\n  must_hit_from = "45.00"\n  ceiling = "30.00"\n',
        '{ royal_flush = "major:1.00", straight_flush = "minor:1.00", '
        'four_of_a_kind = "mystery:1.00" }',
    )
    assert problems(text) == [
        "links[0] (stud).meters[2] (mini).id: no pay-table row of a table on link 'stud' "
        "pays meter 'mini': it would grow for ever (name it in a row, such as "
        'straight_flush = "mini:1.00")',
        "links[0] (stud).meters[3] (mystery).ceiling: is below the seed",
        "links[0] (stud).meters[3] (mystery).must_hit_by: is above the ceiling: the meter "
        "could never reach it",
        "links[0] (stud).meters[3] (mystery).must_hit_by: must be above must_hit_from: the "
        "trigger is drawn in [from, by)",
        "links[0] (stud).meters[3] (mystery).must_hit_from: is below the seed",
        "tables[0] (T01).pay_table.four_of_a_kind: pays meter 'mystery', a must-hit-by "
        "level: its trigger wins it, not a hand (name another level)",
    ]
