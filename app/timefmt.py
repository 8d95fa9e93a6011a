"""RFC 3339 timestamps at the edge <-> integer epoch milliseconds inside (never a float)."""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
# Date, 'T', time, optional fraction, and a mandatory offset (Z or +hh:mm).
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
_FORMAT = "must be an RFC 3339 time with an offset, such as 2026-11-22T18:00:00.123Z"


def parse_time(text: str) -> int:
    """'2026-11-22T18:00:00.123Z' -> epoch ms. Digits past the millisecond are cut off."""
    if not isinstance(text, str):
        raise ValueError(_FORMAT)
    return _parse_time(text)


# A table event's times are parsed twice: by the schema's check, then by `domain()` (the
# check keeps the text, as the API gave it). The second parse is a look-up.
@functools.lru_cache(maxsize=256)
def _parse_time(text: str) -> int:
    if not _RFC3339.match(text):
        raise ValueError(_FORMAT)
    head, frac, offset = text[:19], "", text[19:]
    if offset.startswith("."):
        end = 1
        while end < len(offset) and offset[end].isdigit():
            end += 1
        frac, offset = offset[1:end], offset[end:]
    offset = "+00:00" if offset in ("Z", "z") else offset
    try:
        moment = datetime.fromisoformat(head.replace("t", "T") + offset)
    except ValueError as error:
        raise ValueError(f"is not a valid time: {error}") from None
    # Exact integer arithmetic: timedelta // timedelta, never a float timestamp.
    return (moment - EPOCH) // _MS + int((frac + "000")[:3])


def format_time(ms: int) -> str:
    """epoch ms -> '2026-11-22T18:00:00.123Z'."""
    moment = EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
