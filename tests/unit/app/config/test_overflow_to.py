"""A meter's overflow_to in the floor file: the reserve, the house, or another meter."""

from __future__ import annotations

import pytest

from app.config.floor_config import floor_config
from app.config.floor_file import FloorError, parse_floor
from tests.support import H1, table


def floor(major_to: str | None, minor_to: str | None = None) -> str:
    def meter(meter_id: str, to: str | None) -> str:
        line = "" if to is None else f'overflow_to = "{to}"\n'
        return (
            f'[[links.meters]]\nid = "{meter_id}"\nseed = "100.00"\nrate = "0.10"\n'
            f'reserve_rate = "0.01"\nceiling = "200.00"\n{line}'
        )

    return (
        'currency = "SGD"\n[[links]]\nid = "stud"\n'
        + meter("major", major_to)
        + meter("minor", minor_to)
        # minor is paid by a row of its own: a meter no row pays is refused.
        + table("T01", token=H1, pay_table='{ straight_flush = "minor:1.00" }')
    )


def problems(text: str) -> list[str]:
    with pytest.raises(FloorError) as caught:
        parse_floor(text)
    return list(caught.value.problems)


@pytest.mark.parametrize(
    ("to", "expected"), [(None, "reserve"), ("house", "house"), ("minor", "minor")]
)
def test_the_destinations(to: str | None, expected: str) -> None:
    config = floor_config(parse_floor(floor(to)))
    assert config.links[0].meters[0].overflow_to == expected


def test_an_unknown_destination_is_named() -> None:
    (problem,) = problems(floor("jackpot"))
    assert problem.startswith("links[0] (stud).meters[0] (major).overflow_to")
    assert "reserve, house or another meter of the link" in problem


def test_a_meter_cannot_overflow_to_itself_nor_in_a_cycle() -> None:
    assert problems(floor("major"))[0].startswith("links[0] (stud).meters[0] (major).overflow_to")
    assert any("cycle" in p for p in problems(floor("minor", "major")))
