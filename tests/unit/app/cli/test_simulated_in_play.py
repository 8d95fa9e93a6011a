"""A simulated table told the progressive is not in play (rules 5.17, 5.18.2 c)."""

from __future__ import annotations

from decimal import Decimal

from app.cli.simulated_in_play import Told, honoured
from app.cli.simulated_rounds import BoxBets, DealtHand, RoundPlan

ONE, TEN, ZERO = Decimal("1.00"), Decimal("10.00"), Decimal("0")


def plan() -> RoundPlan:
    bets = (BoxBets(1, TEN, ONE), BoxBets(2, ZERO, ONE), BoxBets(3, TEN, ONE))
    hands = tuple(DealtHand(b, (), False) for b in (1, 2, 3))
    return RoundPlan(bets, hands, None, False)


def test_in_play_the_round_is_dealt_as_planned() -> None:
    told = Told.of({"in_play": True, "suspended_boxes": []})
    assert told.all_in and honoured(plan(), told) == plan()


def test_a_suspended_box_loses_its_jackpot_wager_and_a_box_left_empty_is_not_played() -> None:
    told = Told.of({"in_play": True, "suspended_boxes": [2, 3], "reason": "sensor"})
    dealt = honoured(plan(), told)
    assert [(b.box, b.ante, b.jackpot) for b in dealt.bets] == [(1, TEN, ONE), (3, TEN, ZERO)]
    assert [h.box for h in dealt.hands] == [1, 3]
    assert told.line("T01") == (
        "T01 progressive not in play on box 2, 3 (sensor): no jackpot wagers there"
    )


def test_a_table_not_in_play_takes_no_jackpot_wager_at_all() -> None:
    told = Told.of({"in_play": False, "suspended_boxes": [], "reason": "link down"})
    dealt = honoured(plan(), told)
    assert [(b.box, b.jackpot) for b in dealt.bets] == [(1, ZERO), (3, ZERO)]
    assert told.line("T01") == "T01 progressive not in play (link down): no jackpot wagers there"
