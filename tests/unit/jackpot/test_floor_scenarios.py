"""Scenario tests named after the rules: wins priced and ordered by deal time (4.5)."""

from __future__ import annotations

import pytest

from jackpot.errors import ClockSkewError, StaleRoundError, StateConflictError, UnknownError
from jackpot.floor import Floor
from jackpot.records import FINAL, PENDING, VOID
from jackpot.snapshot import dump, load
from tests.unit.jackpot.support import (
    ROYAL,
    STRAIGHT_FLUSH,
    TIMING,
    bets,
    finalize,
    floor,
    m,
    outcome,
    stud_link,
    void,
)


def value(f: Floor) -> int:
    return f.links["stud"].meters[0].value


def test_4_5_2_two_royal_flushes_posted_in_reverse_deal_order_40s_apart() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R1", 1_000, 1_000, (1, "1.00")))
    # T2's royal flush, dealt later, is posted first ...
    f.apply(outcome("T2", "R1", 6_000, (1, ROYAL, 5_000)))
    f.apply(finalize(10_000))
    assert f.awards["T2/R1/1/player"].state == PENDING  # T1's open round may hold an earlier win
    # ... T1's, dealt at 3 s, arrives 40 s after it.
    f.apply(outcome("T1", "R1", 46_000, (1, ROYAL, 3_000)))
    f.apply(finalize(46_001))
    first, second = f.awards["T1/R1/1/player"], f.awards["T2/R1/1/player"]
    # The first dealt takes the value at 3 s: seed + both contributions (closed at 0 and 1 s).
    assert (first.state, first.amount, first.sequence) == (FINAL, m("10000.50"), 1)
    # The next takes the value that follows: the seed, funded from the reserve then the house.
    assert (second.state, second.amount, second.sequence) == (FINAL, m("10000.00"), 2)
    assert not first.late and not second.late
    assert value(f) == m("10000.00")


def test_4_5_1_two_straight_flushes_at_one_table_paid_in_deal_order() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00"), (4, "1.00")))
    # Posted in one outcome; box 4 listed first, but box 1 was dealt first.
    f.apply(outcome("T1", "R1", 20_000, (4, STRAIGHT_FLUSH, 9_950), (1, STRAIGHT_FLUSH, 9_410)))
    f.apply(finalize(20_000))
    # Value 10000.50; box 1 takes 10 % = 1000.05;
    # box 4 takes 10 % of 9000.45 = 900.04 (rounded down).
    assert f.awards["T1/R1/1/player"].amount == m("1000.05")
    assert f.awards["T1/R1/4/player"].amount == m("900.04")
    assert f.awards["T1/R1/1/player"].order == 1 and f.awards["T1/R1/4/player"].order == 2
    # 4.2 / docs/design.md: a 10 % award leaves the rest, the cent remainders included.
    assert value(f) == m("10000.50") - m("1000.05") - m("900.04")


def test_4_5_1_same_instant_at_one_table_is_box_order() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (3, "1.00"), (2, "1.00")))
    f.apply(outcome("T1", "R1", 20_000, (3, STRAIGHT_FLUSH, 9_000), (2, STRAIGHT_FLUSH, 9_000)))
    f.apply(finalize(20_000))
    assert f.awards["T1/R1/2/player"].sequence == 1
    assert f.awards["T1/R1/3/player"].sequence == 2


def test_same_instant_at_two_tables_is_a_recorded_deterministic_tie_break() -> None:
    orders = []
    for first in ("T1", "T2"):
        f = floor()
        for t in (first, "T2" if first == "T1" else "T1"):
            f.apply(bets(t, "R1", 0, 0, (1, "1.00")))
        for t in (first, "T2" if first == "T1" else "T1"):
            f.apply(outcome(t, "R1", 10_000, (1, ROYAL, 5_000)))
        f.apply(finalize(20_000))
        a1, a2 = f.awards["T1/R1/1/player"], f.awards["T2/R1/1/player"]
        assert a1.tiebreak != a2.tiebreak
        winner = min((a1, a2), key=lambda a: (a.tiebreak, a.table))
        assert winner.sequence == 1
        orders.append((a1.sequence, a2.sequence))
    assert orders[0] == orders[1]  # arrival order did not decide


def test_contribution_closed_before_a_win_but_arriving_after_it_is_included() -> None:
    f = floor()
    f.apply(bets("T2", "R1", 500, 500, (1, "1.00")))
    f.apply(outcome("T2", "R1", 2_100, (1, ROYAL, 2_000)))
    f.apply(bets("T1", "R1", 1_000, 2_500, (1, "1.00")))  # 1.5 s in flight: within hold
    f.apply(finalize(2_600))
    assert f.awards["T2/R1/1/player"].state == PENDING  # T1's round (closed at 1 s) is open
    f.apply(outcome("T1", "R1", 3_000))
    f.apply(finalize(4_001))
    assert f.awards["T2/R1/1/player"].amount == m("10000.50")


def test_round_left_open_past_round_timeout_stops_holding_and_its_win_is_late() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R1", 1_000, 1_000, (1, "1.00")))
    f.apply(outcome("T2", "R1", 6_000, (1, ROYAL, 5_000)))
    f.apply(finalize(179_999))
    assert f.awards["T2/R1/1/player"].state == PENDING
    result = f.apply(finalize(180_001))
    assert [r.table for r in result.stale] == ["T1"]  # type: ignore[union-attr]
    assert f.awards["T2/R1/1/player"].amount == m("10000.50")
    # T1's royal flush was dealt at 3 s, before T2's, but arrives after the timeout:
    # late, it pays the value at the current position (the seed).
    f.apply(outcome("T1", "R1", 190_000, (1, ROYAL, 3_000)))
    f.apply(finalize(200_000))
    late = f.awards["T1/R1/1/player"]
    assert late.late and late.amount == m("10000.00") and late.sequence == 2


def test_late_bets_go_to_the_current_meter_not_before_a_final_award() -> None:
    f = floor()
    f.apply(bets("T2", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T2", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(finalize(3_000))
    assert f.awards["T2/R1/1/player"].amount == m("10000.25")
    result = f.apply(bets("T1", "R1", 100, 5_000, (1, "1.00")))  # 4.9 s in flight: late
    assert result.round.late  # type: ignore[union-attr]
    f.apply(outcome("T1", "R1", 6_000))
    f.apply(finalize(10_000))
    assert f.awards["T2/R1/1/player"].amount == m("10000.25")
    assert value(f) == m("10000.25")


def test_5_22_void_reverses_a_pending_contribution() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00"), (2, "1.00")))
    result = f.apply(void("T1", "R1", 500, (2,)))
    assert result.reversed == ((2, m("0.30")),)  # type: ignore[union-attr]
    f.apply(outcome("T1", "R1", 1_000))
    f.apply(finalize(10_000))
    assert value(f) == m("10000.25")
    assert f.links["stud"].meters[0].reserve == m("0.05")


def test_void_of_a_final_contribution_comes_out_of_the_meter() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 100))
    f.apply(finalize(10_000))
    assert f.rounds[("T1", "R1")].event.applied is not None  # type: ignore[union-attr]
    f.apply(void("T1", "R1", 11_000))
    f.apply(finalize(20_000))
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.reserve) == (m("10000.00"), 0)
    assert meter.balanced()


def test_void_refused_once_the_rounds_major_award_is_final() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(finalize(5_000))
    with pytest.raises(StateConflictError, match="correction"):
        f.apply(void("T1", "R1", 6_000))


def test_void_of_a_pending_award_cancels_it() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(void("T1", "R1", 1_500))
    f.apply(finalize(5_000))
    award = f.awards["T1/R1/1/player"]
    # It took the meter at its place for nobody (10000.00 of it its own reset's seed):
    # the rest, R1's 0.25, came back at the void and left as reversed.
    assert (award.state, award.amount) == ("void", m("10000.25"))
    assert value(f) == m("10000.00")
    meter = f.links["stud"].meters[0]
    assert (meter.reserve, meter.awarded, meter.house_funded) == (0, 0, m("10000.00"))


def test_reset_funds_the_seed_from_the_reserve_first_then_the_house() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "10.00"), (2, "10.00")))  # reserve 1.00
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(finalize(5_000))
    award = f.awards["T1/R1/1/player"]
    assert award.amount == m("10005.00")
    assert award.funding is not None
    assert (award.funding.from_reserve, award.funding.from_house) == (m("1.00"), m("9999.00"))
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.reserve) == (m("10000.00"), 0)


def test_award_remainder_below_a_cent_stays_in_the_meter() -> None:
    f = Floor([stud_link(seed="100.00", rate="0.0125", reserve="0")], TIMING)
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))  # 0.0125: a sub-cent contribution, carried
    f.apply(outcome("T1", "R1", 1_000, (1, STRAIGHT_FLUSH, 500)))
    f.apply(finalize(5_000))
    # 10 % of 100.0125 = 10.00125, rounded down to 10.00
    assert f.awards["T1/R1/1/player"].amount == m("10.00")
    assert value(f) == m("100.00") + 12_500 - m("10.00")


def test_ceiling_sends_contributions_beyond_it_to_the_reserve() -> None:
    f = Floor([stud_link(seed="100.00", ceiling="100.10")], TIMING)
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 100))
    assert f.display_values("stud") == [("major", m("100.10"))]
    f.apply(finalize(10_000))
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.reserve) == (m("100.10"), m("0.20"))
    assert meter.balanced()


def test_seed_change_takes_effect_at_the_next_reset() -> None:
    from jackpot.commands import SetSeed

    f = floor()
    f.apply(SetSeed("stud", "major", m("15000.00"), 0, "sam", "promotion"))
    assert value(f) == m("10000.00")
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(finalize(5_000))
    assert value(f) == m("15000.00")


def test_operator_reset_moves_the_excess_to_the_reserve() -> None:
    from jackpot.commands import ResetMeter

    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "100.00")))
    f.apply(outcome("T1", "R1", 100))
    f.apply(ResetMeter("stud", "major", 1_000, "sam", "hand-paid jackpot (5.18.1)"))
    assert f.display_values("stud") == [("major", m("10000.00"))]
    f.apply(finalize(5_000))
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.reserve) == (m("10000.00"), m("30.00"))
    assert meter.balanced()


def test_display_shows_the_seed_while_a_royal_flush_is_pending() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R1", 100, 100, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    assert f.display_values("stud") == [("major", m("10000.00"))]
    assert [a.id for a in f.pending_awards("stud")] == ["T1/R1/1/player"]


def test_timestamp_ahead_of_the_server_clock_is_refused() -> None:
    f = floor()
    with pytest.raises(ClockSkewError):
        f.apply(bets("T1", "R1", 2_001, 0, (1, "1.00")))
    assert not f.rounds


def test_5_17_bets_closed_more_than_round_timeout_ago_are_refused() -> None:
    f = floor()
    with pytest.raises(StaleRoundError):
        f.apply(bets("T1", "R1", 0, 180_001, (1, "1.00")))


def test_outcome_for_a_round_without_bets_is_unknown() -> None:
    with pytest.raises(UnknownError):
        floor().apply(outcome("T1", "R9", 0))


def test_snapshot_round_trip_is_exact() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00"), (2, "2.00")))
    f.apply(bets("T2", "R1", 100, 100, (1, "1.00")))
    f.apply(outcome("T2", "R1", 1_000, (1, STRAIGHT_FLUSH, 500)))
    f.apply(finalize(1_500))
    state = dump(f)
    assert dump(load(state, [stud_link()], TIMING)) == state


def test_settled_rounds_are_pruned_after_retention_but_their_awards_stay() -> None:
    f = Floor([stud_link()], TIMING, retain_ms=600_000)
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000, (1, ROYAL, 500)))
    f.apply(bets("T1", "R2", 2_000, 2_000, (1, "1.00")))  # still open: never pruned
    f.apply(finalize(5_000))
    assert f.apply(finalize(604_999)).pruned == ()  # type: ignore[union-attr]
    result = f.apply(finalize(605_001))
    assert result.pruned == (("T1", "R1"),)  # type: ignore[union-attr]
    assert ("T1", "R1") not in f.rounds and ("T1", "R2") in f.rounds
    assert f.awards["T1/R1/1/player"].amount == m("10000.25")
    state = dump(f)
    assert dump(load(state, [stud_link()], TIMING, 600_000)) == state


def test_4_5_2_a_round_with_late_bets_keeps_its_deal_order_place_for_an_on_time_win() -> None:
    # Only the late event takes the current position (4.5.2, 4.9.1).
    t = 10_000
    f = floor()
    f.apply(bets("B", "R1", t + 500, t + 500, (1, "1.00")))
    # A's bets closed at t but arrive 2.6 s later: late, they contribute at t + 2.6 s.
    late_bets = f.apply(bets("A", "R1", t, t + 2_600, (1, "1.00")))
    assert late_bets.round.late  # type: ignore[union-attr]
    f.apply(finalize(t + 2_600))
    # A's royal flush is dealt at t + 2.8 s, B's at t + 2.9 s; B's outcome arrives first.
    f.apply(outcome("B", "R1", t + 3_000, (1, ROYAL, t + 2_900)))
    f.apply(finalize(t + 3_000))
    f.apply(outcome("A", "R1", t + 3_100, (1, ROYAL, t + 2_800)))
    f.apply(finalize(t + 10_000))
    a, b = f.awards["A/R1/1/player"], f.awards["B/R1/1/player"]
    # A was dealt first: the whole meter (seed + B's 0.25 + A's late 0.25 at t + 2.6 s).
    assert (a.state, a.late, a.effective_at) == (FINAL, False, t + 2_800)
    assert (a.amount, a.sequence) == (m("10000.50"), 1)
    # B takes the value that follows: the seed.
    assert (b.state, b.late, b.amount, b.sequence) == (FINAL, False, m("10000.00"), 2)


def test_5_20_a_void_does_not_change_a_later_rounds_pending_award() -> None:
    # A void takes effect at the current position (5.20, 4.5.1).
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000))  # R1 settles
    f.apply(bets("T2", "R2", 500, 500, (1, "1.00")))
    f.apply(outcome("T2", "R2", 2_000, (1, ROYAL, 1_500)))  # R2's royal flush: pending
    f.apply(finalize(2_000))
    assert f.awards["T2/R2/1/player"].state == PENDING
    # R1's error is noticed after R2 began: R1 is voided while R2's award is pending.
    result = f.apply(void("T1", "R1", 2_200))
    assert result.reversed == ((1, m("0.30")),)  # type: ignore[union-attr]
    f.apply(finalize(10_000))
    r2 = f.awards["T2/R2/1/player"]
    # R2 takes the value on display at its deal: R1's contribution included.
    assert (r2.state, r2.amount) == (FINAL, m("10000.50"))
    meter = f.links["stud"].meters[0]
    # R1's 0.25 left the meter after R2's reset: the house covers it; its 0.05 of reserve
    # went into R2's reset funding: the house covers that too.
    assert (meter.value, meter.reserve) == (m("10000.00"), 0)
    assert (meter.house_cover_meter, meter.house_cover_reserve) == (m("0.25"), m("0.05"))
    assert meter.balanced()


def test_a_win_of_a_late_bets_round_the_watermark_has_passed_is_late() -> None:
    # docs/design.md: a late-bets round keeps event time for an on-time win "unless the
    # watermark has already passed it".
    f = floor()
    f.apply(bets("A", "R1", 0, 5_000, (1, "1.00")))  # 5 s in flight: late, at 5 s
    f.apply(finalize(9_000))  # the open round holds the watermark at 5 s
    f.apply(outcome("A", "R1", 9_500, (1, ROYAL, 4_000)))  # dealt at 4 s: passed
    f.apply(finalize(20_000))
    award = f.awards["A/R1/1/player"]
    assert (award.late, award.effective_at, award.amount) == (True, 9_500, m("10000.25"))


def test_display_counts_a_pending_reversal_at_once() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 500))
    f.apply(bets("T2", "R1", 600, 600, (1, "1.00")))
    assert f.display_values("stud") == [("major", m("10000.50"))]
    f.apply(void("T1", "R1", 1_000))
    assert f.display_values("stud") == [("major", m("10000.25"))]
    state = dump(f)  # a pending reversal survives a snapshot
    assert dump(load(state, [stud_link()], TIMING)) == state
    assert load(state, [stud_link()], TIMING).display_values("stud") == [("major", m("10000.25"))]
    f.apply(outcome("T2", "R1", 1_100))
    f.apply(finalize(10_000))
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.reserve, meter.reversed_meter) == (
        m("10000.25"),
        m("0.05"),
        m("0.25"),
    )


def test_5_20_4_5_1_a_voided_rounds_pending_award_still_takes_its_place() -> None:
    # A void at the current position changes no award dealt before it (5.20): R2's
    # royal flush, dealt after R1's, takes the value that follows R1's (4.5.1) though R1
    # is voided while both are pending. R1's award is paid to nobody: what it took at its
    # place comes back to the meter, first as its own reset's seed, the rest at the
    # void's position.
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R2", 100, 100, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_200, (1, ROYAL, 1_000)))
    f.apply(outcome("T2", "R2", 1_600, (1, ROYAL, 1_500)))
    f.apply(finalize(2_000))
    assert f.awards["T1/R1/1/player"].state == PENDING
    assert f.awards["T2/R2/1/player"].state == PENDING
    f.apply(void("T1", "R1", 2_200))  # noticed after R2 began
    # Both keep their place; only R2's is pending for someone ("jackpot pending").
    assert f.links["stud"].timeline.pending_awards == 2
    assert f.pending_count("stud") == 1
    assert load(dump(f), [stud_link()], TIMING).pending_count("stud") == 1
    # Seed 10000.00 + two contributions of 0.25: R1 takes 10000.50, of which 10000.00 is
    # its reset's seed; R2 takes that seed (its amount without the void); at 2.2 s R1's
    # 0.25 is reversed and the 0.50 R1 still holds comes back.
    assert f.display_values("stud") == [("major", m("10000.25"))]
    f.apply(finalize(3_800))  # both wins final; the void's position (2.2 s) still pending
    r1, r2 = f.awards["T1/R1/1/player"], f.awards["T2/R2/1/player"]
    assert (r2.state, r2.amount, r2.sequence) == (FINAL, m("10000.00"), 1)
    assert (r1.state, r1.amount, r1.sequence) == (VOID, m("10000.50"), None)
    assert r1.funding is not None and (r1.funding.from_reserve, r1.funding.from_house) == (0, 0)
    meter = f.links["stud"].meters[0]
    assert (meter.value, meter.awards_withheld, meter.awards_returned, meter.withheld) == (
        m("10000.00"),
        m("10000.50"),
        m("10000.00"),
        m("0.50"),
    )
    assert meter.balanced()
    assert f.display_values("stud") == [("major", m("10000.25"))]
    assert f.pending_awards("stud") == []  # R1 waits for its place for nobody
    assert f.pending_count("stud") == 0
    state = dump(f)  # the return still to come survives a snapshot
    assert dump(load(state, [stud_link()], TIMING)) == state
    assert load(state, [stud_link()], TIMING).display_values("stud") == [("major", m("10000.25"))]
    f.apply(finalize(10_000))
    assert (r2.amount, r1.amount) == (m("10000.00"), m("10000.50"))
    # What is left is R2's 0.25: R1's came back with R1's amount and left as reversed. Its
    # 0.05 of reserve funded R2's reset: the house covers that.
    assert (meter.value, meter.reserve, meter.awarded) == (m("10000.25"), 0, m("10000.00"))
    assert (meter.awards_withheld, meter.awards_returned) == (m("10000.50"), m("10000.50"))
    assert (meter.reversed_meter, meter.reversed_reserve) == (m("0.25"), m("0.05"))
    assert (meter.house_cover_meter, meter.house_cover_reserve) == (0, m("0.05"))
    assert meter.balanced()
