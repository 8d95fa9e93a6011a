"""A floor's gaming day and shifts, in the floor's own time zone (floor file `time_zone`,
`gaming_day_start`, `shifts`): the console's report presets (docs/api.md, the floor
view's `gaming_day`). A gaming day runs from its start to the next day's start, whatever
a daylight-saving change does to its length; a shift from its start to the next one's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from app.state.timefmt import format_time


@dataclass(frozen=True, slots=True)
class GamingDay:
    time_zone: str = "UTC"  # an IANA name (the floor file checks it exists)
    start: str = "06:00"  # local "HH:MM"
    shifts: tuple[str, ...] = ("06:00", "14:00", "22:00")  # local starts, "HH:MM"


def _at(day: date, hhmm: str, zone: ZoneInfo) -> int:
    """The instant (epoch ms) of `hhmm` local time on `day`; a time a spring change skips
    is taken at its offset before the change (fold 0), as clocks on the floor read it."""
    hours, minutes = (int(part) for part in hhmm.split(":"))
    local = datetime.combine(day, time(hours, minutes), tzinfo=zone)
    return int(local.astimezone(UTC).timestamp() * 1000)


def _latest_start(now: int, hhmm: str, zone: ZoneInfo) -> tuple[date, int]:
    """The local day whose `hhmm` is the latest at or before `now`, and that instant."""
    today = datetime.fromtimestamp(now / 1000, zone).date()
    for day in (today + timedelta(days=1), today, today - timedelta(days=1)):
        at = _at(day, hhmm, zone)
        if at <= now:
            return day, at
    day = today - timedelta(days=2)
    return day, _at(day, hhmm, zone)


def periods(gaming_day: GamingDay, now: int) -> dict[str, tuple[str, str]]:
    """`today` (the gaming day `now` is in), `yesterday` (the one before) and `shift` (the
    shift `now` is in), each as [from, to) in RFC 3339."""
    zone = ZoneInfo(gaming_day.time_zone)
    day, begin = _latest_start(now, gaming_day.start, zone)
    end = _at(day + timedelta(days=1), gaming_day.start, zone)
    before = _at(day - timedelta(days=1), gaming_day.start, zone)
    shifts = sorted(gaming_day.shifts)
    shift_begin, shift, shift_day = max(
        (at, hhmm, d) for hhmm in shifts for d, at in [_latest_start(now, hhmm, zone)]
    )
    following = shifts[(shifts.index(shift) + 1) % len(shifts)]
    shift_end = min(
        at
        for d in (shift_day, shift_day + timedelta(days=1))
        if (at := _at(d, following, zone)) > shift_begin
    )
    return {
        "today": (format_time(begin), format_time(end)),
        "yesterday": (format_time(before), format_time(begin)),
        "shift": (format_time(shift_begin), format_time(shift_end)),
    }


def gaming_day_view(gaming_day: GamingDay, now: int) -> dict[str, Any]:
    """The floor view's `gaming_day`: the settings and the presets at `now`."""
    found = periods(gaming_day, now)
    return {
        "time_zone": gaming_day.time_zone,
        "start": gaming_day.start,
        "shifts": list(gaming_day.shifts),
        "presets": [
            {"name": name, "from": begin, "to": end} for name, (begin, end) in found.items()
        ],
    }
