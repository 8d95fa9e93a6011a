"""RFC 3339 timestamps at the edge <-> integer epoch milliseconds inside (never a float),
and the server's wall clock in them (read by the edge and the writer, never by the state:
time is a parameter of every entry)."""

from __future__ import annotations

import functools
import re
import time
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
# Date, 'T', time, optional fraction, and a mandatory offset (Z or +hh:mm). ASCII digits
# only: `\d` and `int()` take any script's digits (RFC 3339 is ASCII).
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_FORMAT = "must be an RFC 3339 time with an offset, such as 2026-11-22T18:00:00.123Z"
# The instants `format_time` can write: a year 9999 time with a negative offset (or a
# year 1 time with a positive one) is beyond them in UTC, so it is refused here.
FIRST_MS = (datetime(1, 1, 1, tzinfo=UTC) - EPOCH) // _MS
LAST_MS = (datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC) - EPOCH) // _MS


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


_RANGE = "is outside the years 0001 to 9999 in UTC"


def parse_time(text: str) -> int:
    """'2026-11-22T18:00:00.123Z' -> epoch ms. Digits past the millisecond are cut off."""
    if not isinstance(text, str):
        raise ValueError(_FORMAT)
    return _parse_time(text)


# A table event's times are parsed twice: by the schema's check, then by `domain()` (the
# check keeps the text, as the API gave it). The second parse is a look-up.
@functools.lru_cache(maxsize=256)
def _parse_time(text: str) -> int:
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(_FORMAT)
    head, frac, offset = text[:19], (match[1] or ".")[1:], match[2]
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = datetime.fromisoformat(head.replace("t", "T") + offset)
    except ValueError as error:
        raise ValueError(f"is not a valid time: {error}") from None
    # Exact integer arithmetic: timedelta // timedelta, never a float timestamp.
    ms = (moment - EPOCH) // _MS + int((frac + "000")[:3])
    if not FIRST_MS <= ms <= LAST_MS:
        raise ValueError(_RANGE)
    return ms


def format_time(ms: int) -> str:
    """epoch ms -> '2026-11-22T18:00:00.123Z'."""
    moment = EPOCH + timedelta(milliseconds=ms)
    # isoformat, not strftime: glibc's %Y writes the year 1 as "1", not "0001".
    return moment.replace(microsecond=0, tzinfo=None).isoformat() + f".{ms % 1000:03d}Z"
