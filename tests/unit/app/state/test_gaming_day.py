"""A floor's gaming day and shifts in its own time zone (docs/api.md "The console's
routes": the floor view's `gaming_day`): today's and yesterday's gaming day and the
current shift as instants, across midnight and a daylight-saving change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from app.state.gaming_day import GamingDay, periods


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


SINGAPORE = GamingDay("Asia/Singapore", "06:00", ("06:00", "14:00", "22:00"))


def test_at_eleven_in_singapore_the_gaming_day_began_at_six() -> None:
    found = periods(SINGAPORE, ms("2026-11-27T03:00:00+00:00"))  # 11:00 local
    assert found["today"] == ("2026-11-26T22:00:00.000Z", "2026-11-27T22:00:00.000Z")
    assert found["yesterday"] == ("2026-11-25T22:00:00.000Z", "2026-11-26T22:00:00.000Z")
    assert found["shift"] == ("2026-11-26T22:00:00.000Z", "2026-11-27T06:00:00.000Z")


def test_before_six_it_is_still_the_previous_gaming_day_and_the_night_shift() -> None:
    found = periods(SINGAPORE, ms("2026-11-27T20:30:00+00:00"))  # 04:30 on the 28th
    assert found["today"] == ("2026-11-26T22:00:00.000Z", "2026-11-27T22:00:00.000Z")
    assert found["shift"] == ("2026-11-27T14:00:00.000Z", "2026-11-27T22:00:00.000Z")


def test_a_gaming_day_across_the_spring_change_is_twenty_three_hours() -> None:
    london = GamingDay("Europe/London", "06:00", ("06:00", "18:00"))
    found = periods(london, ms("2026-03-29T12:00:00+00:00"))  # BST since 01:00 UTC
    assert found["today"] == ("2026-03-29T05:00:00.000Z", "2026-03-30T05:00:00.000Z")
    assert found["yesterday"] == ("2026-03-28T06:00:00.000Z", "2026-03-29T05:00:00.000Z")


@given(
    st.datetimes(min_value=datetime(2001, 1, 2), max_value=datetime(2098, 12, 30)),
    st.sampled_from(["UTC", "Asia/Singapore", "Europe/London", "America/Los_Angeles"]),
    st.sampled_from(["00:00", "06:00", "23:30"]),
)
def test_now_is_inside_today_and_the_current_shift(moment: datetime, zone: str, start: str) -> None:
    day = GamingDay(zone, start, ("02:00", start, "15:45"))
    now = int(moment.replace(tzinfo=UTC).timestamp() * 1000)
    found = periods(day, now)
    for name in ("today", "shift"):
        begin, end = (ms(t.replace("Z", "+00:00")) for t in found[name])
        assert begin <= now < end
    yesterday_end = ms(found["yesterday"][1].replace("Z", "+00:00"))
    assert yesterday_end == ms(found["today"][0].replace("Z", "+00:00"))
    length = ms(found["today"][1].replace("Z", "+00:00")) - ms(
        found["today"][0].replace("Z", "+00:00")
    )
    assert abs(length - 86_400_000) <= timedelta(hours=1).total_seconds() * 1000


def test_a_shift_starting_in_the_skipped_hour_still_has_its_place() -> None:
    london = GamingDay("Europe/London", "06:00", ("01:30", "06:00", "18:00"))
    found = periods(london, ms("2026-03-29T02:00:00+00:00"))  # 03:00 BST
    assert found["shift"] == ("2026-03-29T01:30:00.000Z", "2026-03-29T05:00:00.000Z")
