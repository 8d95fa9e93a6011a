"""The floor file's gaming day: `time_zone` (an IANA name), `gaming_day_start` and
`shifts` (local "HH:MM"), with defaults; a bad one is named with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config.floor_config import floor_config
from app.config.floor_file import FloorError, parse_floor
from app.config.floor_parameters import floor_parameters
from app.state.gaming_day import GamingDay
from app.state.parameters import config_of
from tests.support import DEMO


def problems(text: str) -> list[str]:
    with pytest.raises(FloorError) as caught:
        parse_floor(text)
    return list(caught.value.problems)


def test_the_defaults_are_utc_six_oclock_and_three_shifts() -> None:
    config = floor_config(parse_floor('currency = "EUR"'))
    assert config.gaming_day == GamingDay("UTC", "06:00", ("06:00", "14:00", "22:00"))


def test_a_floor_sets_its_zone_start_and_shifts() -> None:
    text = (
        'currency = "SGD"\ntime_zone = "Asia/Singapore"\ngaming_day_start = "07:30"\n'
        'shifts = ["07:30", "19:30"]\n'
    )
    config = floor_config(parse_floor(text))
    assert config.gaming_day == GamingDay("Asia/Singapore", "07:30", ("07:30", "19:30"))


@pytest.mark.parametrize(
    ("line", "field", "why"),
    [
        ('time_zone = "Mars/Olympus"', "time_zone", "not a known time zone"),
        ('time_zone = "../etc/passwd"', "time_zone", "not a known time zone"),
        ('gaming_day_start = "6am"', "gaming_day_start", '"HH:MM"'),
        ('gaming_day_start = "24:00"', "gaming_day_start", '"HH:MM"'),
        ("shifts = []", "shifts", "at least 1"),
        ('shifts = ["06:00", "06:00"]', "shifts", "twice"),
    ],
)
def test_a_bad_setting_is_named_with_its_reason(line: str, field: str, why: str) -> None:
    [problem] = problems(f'currency = "SGD"\n{line}\n')
    assert field in problem and why in problem, problem


def test_the_recorded_parameters_keep_the_gaming_day_and_the_hold_warning() -> None:
    # The journal's `config` entry rebuilds the floor's configuration (docs/journal.md).
    text = (
        Path(DEMO)
        .read_text()
        .replace(
            'time_zone = "Asia/Singapore"', 'time_zone = "Europe/London"\nhold_warning_ms = 45000'
        )
    )
    config = config_of(floor_parameters(parse_floor(text)))
    assert config.gaming_day == GamingDay("Europe/London", "06:00", ("06:00", "14:00", "22:00"))
    assert config.hold_warning_ms == 45_000
