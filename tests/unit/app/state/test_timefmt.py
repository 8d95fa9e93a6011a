"""RFC 3339 at the edge: every time the parser accepts can be written back; ASCII only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.state.timefmt import FIRST_MS, LAST_MS, format_time, parse_time

OFFSETS = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)


def rfc3339(moment: datetime, offset_min: int, frac: str) -> str:
    sign = "-" if offset_min < 0 else "+"
    hours, minutes = divmod(abs(offset_min), 60)
    local = moment.replace(tzinfo=None).isoformat(timespec="seconds")
    return f"{local}{frac}{sign}{hours:02d}:{minutes:02d}"


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)),
    OFFSETS,
    st.sampled_from(["", ".5", ".123", ".999999999"]),
)
def test_every_time_the_parser_accepts_is_written_back(
    local: datetime, offset_min: int, frac: str
) -> None:
    """Any local time with any offset: refused (ValueError, a 422), or an instant that
    `format_time` writes and that parses back to itself; never an OverflowError (a 500)."""
    text = rfc3339(local, offset_min, frac)
    try:
        ms = parse_time(text)
    except ValueError:
        utc = local.replace(tzinfo=timezone(timedelta(minutes=offset_min)))
        # Refused only when the instant is outside years 1-9999 in UTC.
        assert (
            not datetime(1, 1, 1, tzinfo=UTC)
            <= utc
            <= datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC)
        )
        return
    assert FIRST_MS <= ms <= LAST_MS
    assert parse_time(format_time(ms)) == ms


@given(st.integers(min_value=FIRST_MS, max_value=LAST_MS))
def test_format_then_parse_is_the_identity(ms: int) -> None:
    text = format_time(ms)
    assert len(text) == 24 and text.endswith("Z")
    assert parse_time(text) == ms


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("9999-12-31T23:59:59.999Z", LAST_MS),
        ("9999-12-31T23:59:59.999+00:00", LAST_MS),
        ("0001-01-01T00:00:00Z", FIRST_MS),
        ("0001-01-01T00:00:00-00:01", FIRST_MS + 60_000),
    ],
)
def test_the_ends_of_the_calendar(text: str, ms: int) -> None:
    assert parse_time(text) == ms


@pytest.mark.parametrize(
    "text",
    [
        "9999-12-31T23:59:59.999-23:59",
        "9999-12-31T23:59:59.999-00:01",
        "0001-01-01T00:00:00+00:01",
        "0001-01-01T00:00:00.000+23:59",
    ],
)
def test_beyond_the_ends_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError, match="outside the years 0001 to 9999"):
        parse_time(text)


# Every non-ASCII decimal digit `\d` and int() would take (Nd): one per script.
DIGITS = ["\uff11", "\u0661", "\u0967", "\u09e7", "\u0e51", "\U0001d7cf"]


@given(st.sampled_from(DIGITS), st.integers(min_value=0, max_value=23))
def test_only_ascii_digits(digit: str, place: int) -> None:
    text = "2026-11-22T18:00:00.123+01:00"
    places = [i for i, c in enumerate(text) if c.isdigit()]
    i = places[place % len(places)]
    with pytest.raises(ValueError):
        parse_time(text[:i] + digit + text[i + 1 :])
