"""Western Stud River bet: the payment schedule, highest paying hand only, folds lose."""

from __future__ import annotations

import pytest

from tables.games import GameId
from tables.settle import Claim, FixedClaim

from .rounds import bet, dealer, hand, m, play, table

WEST = GameId.western_stud


def river(cards: str, wager: str = "4.00", folded: bool = False) -> list[Claim]:
    return play(table(WEST), [bet(2, ante="10.00", jackpot=wager)], [hand(2, cards, folded)])


@pytest.mark.parametrize(
    ("cards", "row", "amount"),
    [
        ("AD KD QD JD 10D", "royal_flush", "100"),  # 25 to 1
        ("JC 10C 9C 8C 7C", "straight_flush", "60"),  # 15 to 1
        ("AC AH AD AS JH", "four_of_a_kind", "20"),  # 5 to 1
        ("KC KH KD AS AH", "full_house", "20"),  # 5 to 1
        ("JH 9H 6H 5H 2H", "flush", "8"),  # 2 to 1
        ("9C 8D 7C 6H 5S", "straight", "8"),  # 2 to 1
        ("8S 7H 5D 3C AS", "eight_or_better_low", "4"),  # 1 to 1
    ],
)
def test_river_bet_payment_schedule(cards: str, row: str, amount: str) -> None:
    assert river(cards) == [FixedClaim(2, "river", row, m(amount))]


@pytest.mark.parametrize(
    "cards", ["10S 10H 10C 6H 3D", "QS QH 6C 6H 3D", "AC AH 8D 6H 5S", "QC 10H 6D 5S 2H",
              "9S 7H 5D 3C AS"],
)  # fmt: skip
def test_river_bet_loses_below_the_schedule(cards: str) -> None:
    assert river(cards) == []


def test_river_only_the_highest_paying_hand_flush_and_low_pays_flush() -> None:
    assert river("8H 7H 5H 3H 2H") == [FixedClaim(2, "river", "flush", m("8"))]


def test_river_only_the_highest_paying_hand_wheel_is_a_straight() -> None:
    assert river("AS 2H 3D 4C 5S") == [FixedClaim(2, "river", "straight", m("8"))]


def test_river_only_the_highest_paying_hand_steel_wheel_is_a_straight_flush() -> None:
    assert river("AH 2H 3H 4H 5H") == [FixedClaim(2, "river", "straight_flush", m("60"))]


def test_river_highest_pay_follows_overrides_a_low_may_outpay_a_flush() -> None:
    settings = table(WEST, overrides={"eight_or_better_low": "3"})
    claims = play(settings, [bet(1, jackpot="1.00")], [hand(1, "8H 7H 5H 3H 2H")])
    assert claims == [FixedClaim(1, "river", "eight_or_better_low", m("3"))]


def test_river_bet_of_any_amount_up_to_the_ante_is_paid_by_odds() -> None:
    assert river("9C 8D 7C 6H 5S", wager="0.35") == [FixedClaim(2, "river", "straight", m("0.70"))]
    assert river("9C 8D 7C 6H 5S", wager="10.00") == [FixedClaim(2, "river", "straight", m("20"))]


def test_river_bet_folded_hand_of_four_cards_loses() -> None:
    assert river("AD KD QD JD", folded=True) == []


def test_river_bet_won_regardless_of_the_dealers_hands() -> None:
    claims = play(
        table(WEST), [bet(1, jackpot="2.00")], [hand(1, "JH 9H 6H 5H 2H")],
        dealer("AC AS AD KC KS 2C 3D 4S 5C 7D"),
    )  # fmt: skip
    assert claims == [FixedClaim(1, "river", "flush", m("4"))]


def test_river_bet_without_ante_is_not_paid() -> None:
    assert play(table(WEST), [bet(1, ante="0", jackpot="1")], [hand(1, "AD KD QD JD 10D")]) == []
