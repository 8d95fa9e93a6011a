"""Casino Stud and Multi-Link Casino Stud jackpot claims (4.2), eligibility, settle in general."""

from __future__ import annotations

import pytest

from jackpot.money import Rate
from tables.bets import BetDecision
from tables.errors import InvalidBetError, InvalidHandError, TablesError
from tables.games import GameId
from tables.settle import FixedClaim, ShareClaim, settle

from .rounds import bet, dealer, dealt_at, draws, hand, m, play, table

CASINO = GameId.casino_stud
MULTI = GameId.multi_link_casino_stud
BOTH = [CASINO, MULTI]


def claims_for(game_id: GameId, cards: str, folded: bool = False) -> list[ShareClaim | FixedClaim]:
    return play(table(game_id), [bet(3)], [hand(3, cards, folded)])


@pytest.mark.parametrize("game_id", BOTH)
def test_4_2_royal_flush_wins_100_percent_of_the_progressive_jackpot(game_id: GameId) -> None:
    assert claims_for(game_id, "AD KD QD JD 10D") == [
        ShareClaim(3, "player", "royal_flush", Rate(10_000), dealt_at(3), m("1.00"))
    ]


@pytest.mark.parametrize("game_id", BOTH)
def test_4_2_straight_flush_wins_10_percent_of_the_progressive_jackpot(game_id: GameId) -> None:
    assert claims_for(game_id, "QC JC 10C 9C 8C") == [
        ShareClaim(3, "player", "straight_flush", Rate(1_000), dealt_at(3), m("1.00"))
    ]


def test_4_2_casino_stud_four_of_a_kind_wins_500() -> None:
    assert claims_for(CASINO, "KC KH KD KS JH") == [
        FixedClaim(3, "fixed", "four_of_a_kind", m("500"))
    ]


def test_4_2_multi_link_four_of_a_kind_wins_2000() -> None:
    assert claims_for(MULTI, "KC KH KD KS JH") == [
        FixedClaim(3, "fixed", "four_of_a_kind", m("2000"))
    ]


@pytest.mark.parametrize("game_id", BOTH)
def test_4_2_full_house_wins_200(game_id: GameId) -> None:
    assert claims_for(game_id, "KC KH KD JS JH") == [FixedClaim(3, "fixed", "full_house", m("200"))]


@pytest.mark.parametrize("game_id", BOTH)
def test_4_2_flush_wins_100(game_id: GameId) -> None:
    assert claims_for(game_id, "KH JH 9H 5H 2H") == [FixedClaim(3, "fixed", "flush", m("100"))]


@pytest.mark.parametrize("game_id", BOTH)
@pytest.mark.parametrize(
    "cards", ["5C 4D 3C 2H AS", "QS QH QC 8H 3D", "7S 7H 4C 4H JD", "10C 10H KD 6H 3S",
              "QC 10H 6D 4S 2H"],
)  # fmt: skip
def test_4_2_and_3_15_straight_or_lower_wins_no_jackpot(game_id: GameId, cards: str) -> None:
    assert claims_for(game_id, cards) == []


def test_3_12_1_casino_stud_fold_forfeits_jackpot() -> None:
    assert claims_for(CASINO, "AD KD QD JD 10D", folded=True) == []
    assert claims_for(CASINO, "KC KH KD KS JH", folded=True) == []


def test_3_12_1_multi_link_fold_keeps_jackpot() -> None:
    assert claims_for(MULTI, "AD KD QD JD 10D", folded=True) == [
        ShareClaim(3, "player", "royal_flush", Rate(10_000), dealt_at(3), m("1.00"))
    ]
    assert claims_for(MULTI, "KC KH KD KS JH", folded=True) == [
        FixedClaim(3, "fixed", "four_of_a_kind", m("2000"))
    ]


def test_4_3_multi_link_refusing_to_reveal_is_a_fold_and_keeps_jackpot() -> None:
    # 4.3: a player who does not reveal is considered folded; the controller posts the
    # cards as folded and the jackpot bet is still paid by the hand's ranking.
    assert claims_for(MULTI, "KC KH KD JS JH", folded=True) == [
        FixedClaim(3, "fixed", "full_house", m("200"))
    ]


@pytest.mark.parametrize("game_id", BOTH)
def test_3_13_jackpot_paid_irrespective_of_the_dealers_hand(game_id: GameId) -> None:
    # The dealer has no qualifying hand here, and a better hand in the next test.
    for dealer_cards in ("2C 3D 5S 7C 9D", "AS AC AH AD 2S"):
        claims = play(table(game_id), [bet(1)], [hand(1, "KH JH 9H 5H 2H")], dealer(dealer_cards))
        assert claims == [FixedClaim(1, "fixed", "flush", m("100"))]


@pytest.mark.parametrize("game_id", BOTH)
def test_5_4_jackpot_wager_without_ante_is_returned_and_not_paid(game_id: GameId) -> None:
    assert play(table(game_id), [bet(2, ante="0")], [hand(2, "AD KD QD JD 10D")]) == []


def test_4_2_1_a_royal_flush_without_a_jackpot_bet_is_not_paid() -> None:
    assert play(table(MULTI), [bet(2, jackpot="0")], [hand(2, "AD KD QD JD 10D")]) == []


def test_4_5_1_two_major_winners_at_one_table_are_claimed_in_box_order_with_dealt_at() -> None:
    claims = play(
        table(MULTI),
        [bet(5), bet(2)],
        [hand(5, "AD KD QD JD 10D"), hand(2, "9S 8S 7S 6S 5S")],
    )
    assert claims == [
        ShareClaim(2, "player", "straight_flush", Rate(1_000), dealt_at(2), m("1")),
        ShareClaim(5, "player", "royal_flush", Rate(10_000), dealt_at(5), m("1")),
    ]


def test_claims_follow_a_tables_pay_table_overrides() -> None:
    settings = table(CASINO, overrides={"four_of_a_kind": "600", "royal_flush": "0.5"})
    claims = play(
        settings, [bet(1), bet(2)], [hand(1, "9C 9H 9D 9S JH"), hand(2, "AD QD JD KD 10D")]
    )
    assert claims == [
        FixedClaim(1, "fixed", "four_of_a_kind", m("600")),
        ShareClaim(2, "player", "royal_flush", Rate(5_000), dealt_at(2), m("1")),
    ]


# Settle in general.
def test_an_accepted_jackpot_wager_needs_a_hand() -> None:
    with pytest.raises(InvalidHandError) as caught:
        play(table(CASINO), [bet(1), bet(3)], [hand(1, "AD KD QD JD 10D")])
    assert caught.value.message == "box 3 has an accepted jackpot wager but no hand"
    assert caught.value.loc == ("boxes",)


def test_hands_of_boxes_without_a_jackpot_wager_are_checked_but_not_paid() -> None:
    bets = [bet(1), bet(2, jackpot="0")]
    assert play(table(CASINO), bets, [hand(1, "2C 3D 5S 7C 9D"), hand(2, "AD KD QD JD 10D")]) == []
    assert play(table(CASINO), bets, [hand(4, "AD KD QD JD 10D"), hand(1, "2C 3D 5S 7C 9D")]) == []
    with pytest.raises(InvalidHandError, match="duplicate card AD"):
        play(table(CASINO), bets, [hand(1, "AD 3D 5S 7C 9D"), hand(4, "AD KD QD JD 10D")])


def test_settle_checks_the_deck_first() -> None:
    with pytest.raises(InvalidHandError, match="5.15"):
        play(table(CASINO), [bet(1)], [hand(1, "AD KD QD JD")])


def test_draws_are_refused_outside_singapore() -> None:
    with pytest.raises(TablesError) as caught:
        play(table(CASINO), [bet(1)], [hand(1, "AD KD QD JD 10D")], None, draws())
    assert caught.value.loc == ("draws",)


def test_decisions_for_unknown_or_repeated_boxes_are_refused() -> None:
    settings = table(CASINO, boxes=3)
    accepted = BetDecision(2, "accepted", m("1"), m("0"), None, m("5"))
    with pytest.raises(InvalidBetError):
        settle(settings, [accepted, accepted], [hand(2, "AD KD QD JD 10D")], None, None)
    with pytest.raises(InvalidBetError):
        settle(settings, [BetDecision(4, "none", m("0"), m("0"), None)], [], None, None)
