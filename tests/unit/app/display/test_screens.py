"""Screens judged against their link's committed state: lag, variance, stale, wins shown
(docs/api.md "Signs"; SD 20:18:17:24.02's 50.00 variance, AR EGS 29.1's 30 s)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.display.screens import Screens, Shown, read_shown
from jackpot.money import parse_money

T0 = 1_800_000_000_000


class Link:
    """The broadcaster's read model of link `stud`, set by the test."""

    def __init__(self) -> None:
        self.seq = 10
        self.values = {"major": "10000.00", "minor": "500.00"}

    def __call__(self, link: str) -> dict[str, Any] | None:
        if link != "stud":
            return None
        meters = [{"meter": m, "name": m, "value": v} for m, v in self.values.items()]
        return {"seq": self.seq, "link": "stud", "meters": meters}


def shown(
    seq: int, major: str = "10000.00", minor: str = "500.00", wins: tuple[str, ...] = ()
) -> Shown:
    return Shown(seq, {"major": parse_money(major), "minor": parse_money(minor)}, wins)


def board() -> tuple[Screens, Link, str]:
    link = Link()
    screens = Screens(link)
    sid = screens.connect("screen-0001", "stud", "bar-left", "10.0.0.7", T0)
    return screens, link, sid


def view(screens: Screens, sid: str, now: int) -> dict[str, Any]:
    return screens.view(screens.screens[sid], now)


def test_a_screen_that_shows_the_committed_values_is_current_and_not_flagged() -> None:
    screens, _, sid = board()
    assert screens.ack(sid, shown(10), T0 + 500)
    row = view(screens, sid, T0 + 1_000)
    assert (row["name"], row["address"], row["seq"], row["seq_behind"], row["lag_ms"]) == (
        "bar-left", "10.0.0.7", 10, 0, 0,
    )  # fmt: skip
    assert (row["variance"], row["stale"], row["flagged"], row["flags"]) == (
        "0.00",
        False,
        False,
        [],
    )


def test_lag_counts_from_the_first_message_the_screen_has_not_acknowledged() -> None:
    screens, link, sid = board()
    screens.seen("stud", 10, T0)
    screens.ack(sid, shown(10), T0 + 100)
    screens.seen("stud", 11, T0 + 1_000)
    screens.seen("stud", 12, T0 + 2_000)
    link.seq = 12
    row = view(screens, sid, T0 + 2_500)
    assert (row["seq_behind"], row["lag_ms"]) == (2, 1_500)


def test_no_ack_for_15_s_is_stale() -> None:
    screens, _, sid = board()
    screens.ack(sid, shown(10), T0)
    assert not view(screens, sid, T0 + 15_000)["stale"]
    row = view(screens, sid, T0 + 15_001)
    assert row["stale"] and row["flags"] == ["stale"]


def test_a_value_off_by_more_than_the_variance_for_30_s_is_flagged() -> None:
    screens, _, sid = board()
    # 50.00 off is within the variance; 50.01 is not.
    screens.ack(sid, shown(10, major="9950.00"), T0)
    assert view(screens, sid, T0 + 60_000)["variance"] == "50.00"
    assert "variance" not in view(screens, sid, T0 + 60_000)["flags"]
    screens.ack(sid, shown(10, minor="449.99"), T0 + 1_000)
    screens.check(T0 + 1_000)
    screens.ack(sid, shown(10, minor="449.99"), T0 + 20_000)
    assert view(screens, sid, T0 + 31_000)["flags"] == []  # 30 s exactly: not yet
    screens.ack(sid, shown(10, minor="449.99"), T0 + 31_001)
    row = view(screens, sid, T0 + 31_001)
    assert (row["variance"], row["flags"]) == ("50.01", ["variance"])
    # Back in variance: no longer flagged.
    screens.ack(sid, shown(10), T0 + 32_000)
    assert view(screens, sid, T0 + 32_000)["flags"] == []


def test_a_committed_value_that_moves_away_from_a_frozen_screen_is_variance() -> None:
    screens, link, sid = board()
    screens.ack(sid, shown(10), T0)
    link.values["major"] = "10100.00"
    screens.check(T0 + 1_000)
    row = view(screens, sid, T0 + 40_000)
    assert row["variance"] == "100.00" and set(row["flags"]) == {"stale", "variance"}


def test_a_final_win_not_shown_within_the_bound_is_flagged_and_its_delay_kept() -> None:
    screens, _, sid = board()
    screens.seen("stud", 11, T0, win="T01/R1/1/player")
    assert view(screens, sid, T0 + 30_000)["late_win"] is None
    screens.ack(sid, shown(11), T0 + 29_000)  # acked, but the win is not among `wins`
    row = view(screens, sid, T0 + 30_001)
    assert (row["late_win"], "win" in row["flags"]) == ("T01/R1/1/player", True)
    screens.ack(sid, shown(11, wins=("T01/R1/1/player",)), T0 + 31_000)
    wins = screens.report(T0, T0 + 60_000, T0 + 60_000)[0]["wins"]
    assert [(w["award"], w["delay_ms"]) for w in wins] == [("T01/R1/1/player", 31_000)]
    # Shown late: still flagged until a later win is shown in time.
    assert view(screens, sid, T0 + 32_000)["late_win"] == "T01/R1/1/player"
    screens.seen("stud", 12, T0 + 40_000, win="T02/R9/3/player")
    screens.ack(sid, shown(12, wins=("T02/R9/3/player",)), T0 + 41_000)
    assert view(screens, sid, T0 + 41_000)["flags"] == []


def test_a_win_before_the_screen_connected_is_not_its_to_show() -> None:
    screens, _, _ = board()
    screens.seen("stud", 11, T0 + 10, win="T01/R1/1/player")
    late = screens.connect("screen-0002", "stud", "door", "10.0.0.8", T0 + 20)
    assert screens.screens[late].wins == type(screens.screens[late].wins)()


def test_the_report_gives_time_in_and_out_of_variance_and_the_worst() -> None:
    screens, _, sid = board()
    screens.ack(sid, shown(10), T0)
    screens.ack(sid, shown(10, major="9900.00"), T0 + 10_000)  # out: 100.00
    screens.ack(sid, shown(10, major="9800.00"), T0 + 15_000)  # worse: 200.00
    screens.ack(sid, shown(10), T0 + 20_000)  # back in
    row = screens.report(T0, T0 + 30_000, T0 + 40_000)[0]
    assert (row["in_variance_ms"], row["out_of_variance_ms"], row["worst_variance"]) == (
        20_000, 10_000, "200.00",
    )  # fmt: skip
    # A period inside the excursion only.
    row = screens.report(T0 + 12_000, T0 + 14_000, T0 + 40_000)[0]
    assert (row["in_variance_ms"], row["out_of_variance_ms"]) == (0, 2_000)


def test_acks_closer_than_100_ms_are_dropped_and_other_messages_refused() -> None:
    screens, _, sid = board()
    assert screens.ack(sid, shown(10), T0)
    assert screens.ack(sid, shown(10, major="1.00"), T0 + 50)
    assert view(screens, sid, T0 + 60)["variance"] == "0.00"
    assert not screens.ack(sid, None, T0 + 500)  # not a well-formed shown: close
    assert view(screens, sid, T0 + 600)["dropped"] == 2


def test_read_shown_takes_only_a_well_formed_shown() -> None:
    good = {
        "type": "shown",
        "seq": 3,
        "values": [{"meter": "major", "value": "1.50"}],
        "wins": ["A"],
    }
    assert read_shown(good) == Shown(3, {"major": 1_500_000}, ("A",))
    bad: list[object] = [
        None, [], "shown", {**good, "type": "ping"}, {**good, "seq": -1}, {**good, "seq": True},
        {**good, "seq": "3"}, {**good, "extra": 1}, {k: v for k, v in good.items() if k != "wins"},
        {**good, "values": [{"meter": "major", "value": 1.5}]},
        {**good, "values": [{"meter": "major", "value": "1.505"}]},
        {**good, "values": [{"meter": "major"}]}, {**good, "values": [{"meter": "m"}] * 33},
        {**good, "wins": ["x"] * 17}, {**good, "wins": [""]}, {**good, "wins": ["x" * 129]},
    ]  # fmt: skip
    assert [b for b in bad if read_shown(b) is not None] == []


@given(st.lists(st.integers(0, 50), max_size=200))
def test_screens_are_bounded_in_number(ids: list[int]) -> None:
    screens = Screens(Link(), max_screens=8)
    for n, i in enumerate(ids):
        sid = screens.connect(f"screen-{i:04d}", "stud", "s", "a", T0 + n)
        if i % 3:
            screens.disconnect(sid)
        assert len(screens.screens) <= 8
