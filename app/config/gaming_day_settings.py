"""The floor file's gaming-day keys (docs/operations.md "The floor file"): the floor's
time zone, the local time its gaming day starts and its shifts start (the console's
report presets: app/state/gaming_day.py)."""

from __future__ import annotations

import re
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field

_HHMM = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")


def _zone(value: object) -> str:
    try:
        if not isinstance(value, str) or not value or ".." in value:
            raise ValueError
        ZoneInfo(value)
    except (ValueError, ZoneInfoNotFoundError):
        raise ValueError(
            'is not a known time zone: an IANA name such as "Asia/Singapore" or "UTC"'
        ) from None
    return value


def _hhmm(value: object) -> str:
    if not isinstance(value, str) or not _HHMM.match(value):
        raise ValueError('must be a local time "HH:MM" from 00:00 to 23:59')
    return value


def _distinct(values: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(values)) != len(values):
        raise ValueError("a shift may not start twice at the same time")
    return values


TimeZone = Annotated[str, BeforeValidator(_zone)]
LocalTime = Annotated[str, BeforeValidator(_hhmm)]
Shifts = Annotated[tuple[LocalTime, ...], Field(min_length=1), AfterValidator(_distinct)]
