"""Singapore Stud claims: player and dealer hands (4.2), Magic Card and Lucky draws (4.3-4.5)."""

from __future__ import annotations

import pytest

from jackpot.money import Rate
from tables.errors import TablesError
from tables.games import GameId
from tables.settle import Claim, FixedClaim, ShareClaim

from .rounds import DEALER_DEALT_AT, bet, dealer, dealt_at, draws, hand, m, play, table

SGP = GameId.singapore_stud
NOTHING = "2D 4C 6D 8S JC"  # the dealer's five odd cards
NO_DRAWS = draws(magic_card="2S", lucky_box=7, lucky_dealer=False)  # 2S dealt to nobody


def player_claims(cards: str, wager: str = "2.00") -> list[Claim]:
    return play(table(SGP), [bet(3, jackpot=wager)], [hand(3, cards)], dealer(NOTHING), NO_DRAWS)


def test_4_2_royal_flush_wins_100_percent_of_the_progressive_jackpot() -> None:
    assert player_claims("AD KD QD JD 10D") == [
        ShareClaim(3, "player", "royal_flush", Rate(10_000), dealt_at(3), m("2.00"))
    ]


def test_4_2_straight_flush_wins_10_percent_of_the_progressive_jackpot() -> None:
    assert player_claims("JH 10H 9H 8H 7H") == [
        ShareClaim(3, "player", "straight_flush", Rate(1_000), dealt_at(3), m("2.00"))
    ]


def test_4_2_four_of_a_kind_pays_500_to_1() -> None:
    assert player_claims("AC AH AD AS JH") == [FixedClaim(3, "fixed", "four_of_a_kind", m("1000"))]


def test_4_2_full_house_pays_100_to_1() -> None:
    assert player_claims("KC KH KD AS AH", wager="3.00") == [
        FixedClaim(3, "fixed", "full_house", m("300"))
    ]


def test_4_2_flush_pays_50_to_1() -> None:
    assert player_claims("JH 8H 6H 5H 2H", wager="1.00") == [
        FixedClaim(3, "fixed", "flush", m("50"))
    ]


@pytest.mark.parametrize("cards", ["9S 8D 7C 6H 5S", "10S 10H 10C 6H 3S", "QS QH 6C 6H 3S"])
def test_4_2_straight_or_lower_wins_no_jackpot(cards: str) -> None:
    assert player_claims(cards) == []


def test_3_5_dealer_hand_wager_pays_by_the_dealers_hand() -> None:
    claims = play(
        table(SGP), [bet(2, jackpot="0", dealer="3.00")], [hand(2, "KS KH KD KC JH")],
        dealer("AC AH AD AS JD"), NO_DRAWS,
    )  # fmt: skip
    # The player's own four kings do not pay a dealer-hand wager; the dealer's four aces do.
    assert claims == [FixedClaim(2, "fixed", "four_of_a_kind", m("1500"), target="dealer")]


def test_3_5_both_wagers_pay_each_by_its_own_hand() -> None:
    claims = play(
        table(SGP), [bet(2, jackpot="1.00", dealer="2.00")], [hand(2, "KS KH KD QC QH")],
        dealer("8H 6H 5H 3H 2H"), NO_DRAWS,
    )  # fmt: skip
    assert claims == [
        FixedClaim(2, "fixed", "full_house", m("100")),
        FixedClaim(2, "fixed", "flush", m("100"), target="dealer"),
    ]


def test_4_5_1_dealer_royal_flush_one_claim_per_dealer_wager_in_box_order() -> None:
    claims = play(
        table(SGP),
        [bet(6, jackpot="0", dealer="1.00"), bet(1, jackpot="1", dealer="2.00"), bet(4)],
        [hand(6, NOTHING), hand(1, "KS KH QS QC 2H"), hand(4, "3S 3H 5D 5C 7H")],
        dealer("AD KD QD JD 10D"), NO_DRAWS,
    )  # fmt: skip
    assert claims == [
        ShareClaim(1, "dealer", "royal_flush", Rate(10_000), DEALER_DEALT_AT, m("2.00")),
        ShareClaim(6, "dealer", "royal_flush", Rate(10_000), DEALER_DEALT_AT, m("1.00")),
    ]


def test_4_3_magic_card_in_the_players_hand_pays_5_to_1() -> None:
    claims = play(
        table(SGP), [bet(5, jackpot="2.00")], [hand(5, "QH 3D 5S 7C 9D")], dealer("2C 4D 6S 8C JD"),
        draws(magic_card="QH"),
    )  # fmt: skip
    assert claims == [FixedClaim(5, "magic_card", None, m("10"))]


def test_4_3_magic_card_needs_a_player_hand_wager() -> None:
    claims = play(
        table(SGP), [bet(5, jackpot="0", dealer="1.00")], [hand(5, "QH 3D 5S 7C 9D")],
        dealer("2C 4D 6S 8C JD"), draws(magic_card="QH"),
    )  # fmt: skip
    assert claims == []


def test_4_3_1_magic_card_in_the_dealers_hand_pays_every_dealer_hand_wager() -> None:
    claims = play(
        table(SGP),
        [bet(1, dealer="1.00"), bet(2, jackpot="1.00"), bet(3, jackpot="0", dealer="4.00")],
        [hand(1, "QH 3D 5S 7C 9D"), hand(2, "QS 3H 5D 7S 9H"), hand(3, "QC 3C 5H 7D 9S")],
        dealer("2C 4D 6S 8C JD"), draws(magic_card="8C"),
    )  # fmt: skip
    assert claims == [
        FixedClaim(1, "magic_card", None, m("5"), target="dealer"),
        FixedClaim(3, "magic_card", None, m("20"), target="dealer"),
    ]


def test_4_4_lucky_player_pays_the_drawn_box_with_a_player_hand_wager() -> None:
    bets = [bet(2, jackpot="3.00"), bet(4)]
    hands = [hand(2, "QH 3D 5S 7C 9D"), hand(4, "QS 3H 5D 7S 9H")]
    claims = play(table(SGP), bets, hands, dealer(NOTHING), draws("2S", lucky_box=2))
    assert claims == [FixedClaim(2, "lucky_player", None, m("15"))]
    assert play(table(SGP), bets, hands, dealer(NOTHING), draws("2S", lucky_box=3)) == []


def test_4_4_lucky_player_needs_a_player_hand_wager() -> None:
    claims = play(
        table(SGP), [bet(2, jackpot="0", dealer="1.00")], [hand(2, "QH 3D 5S 7C 9D")],
        dealer(NOTHING), draws("2S", lucky_box=2),
    )  # fmt: skip
    assert claims == []


def test_4_4_1_lucky_dealer_pays_every_dealer_hand_wager() -> None:
    claims = play(
        table(SGP),
        [bet(1, dealer="2.00"), bet(2), bet(7, jackpot="0", dealer="1.00")],
        [hand(1, "QH 3D 5S 7C 9H"), hand(2, "QS 3H 5D 7S 8H"), hand(7, "QC 3C 5H 7D 10S")],
        dealer("2C 4D 6S 8C JD"), draws("2S", lucky_box=5, lucky_dealer=True),
    )  # fmt: skip
    assert claims == [
        FixedClaim(1, "lucky_dealer", None, m("10"), target="dealer"),
        FixedClaim(7, "lucky_dealer", None, m("5"), target="dealer"),
    ]


def test_4_5_hand_magic_card_and_lucky_awards_all_stack() -> None:
    claims = play(
        table(SGP),
        [bet(3, jackpot="1.00", dealer="1.00")],
        [hand(3, "AD KD QD JD 10D")],
        dealer("9C 9H 9S 9D 2C"),
        draws(magic_card="JD", lucky_box=3, lucky_dealer=True),
    )
    assert claims == [
        ShareClaim(3, "player", "royal_flush", Rate(10_000), dealt_at(3), m("1")),
        FixedClaim(3, "fixed", "four_of_a_kind", m("500"), target="dealer"),
        FixedClaim(3, "magic_card", None, m("5")),
        FixedClaim(3, "lucky_player", None, m("5")),
        FixedClaim(3, "lucky_dealer", None, m("5"), target="dealer"),
    ]


def folded_round(fold_keeps_jackpot: bool | None) -> list[Claim]:
    return play(
        table(SGP, fold_keeps_jackpot=fold_keeps_jackpot),
        [bet(3, jackpot="1.00", dealer="1.00")],
        [hand(3, "AC AH AD AS JH", folded=True)],
        dealer("8H 6H 5H 3H 2H"),
        draws(magic_card="JH", lucky_box=3, lucky_dealer=True),
    )


def test_singapore_fold_forfeits_the_player_hand_wager_by_default() -> None:
    # Rules silent (3.9 only says the ante is lost): by default a fold forfeits the
    # player-hand wager and everything riding on it (hand, Magic Card, Lucky Player).
    assert [c for c in folded_round(None) if c.target == "player"] == []


def test_singapore_fold_keeps_the_player_hand_wager_when_the_table_says_so() -> None:
    assert [c for c in folded_round(True) if c.target == "player"] == [
        FixedClaim(3, "fixed", "four_of_a_kind", m("500")),
        FixedClaim(3, "magic_card", None, m("5")),
        FixedClaim(3, "lucky_player", None, m("5")),
    ]


@pytest.mark.parametrize("fold_keeps_jackpot", [False, True])
def test_singapore_fold_leaves_the_dealer_hand_wager_eligible(fold_keeps_jackpot: bool) -> None:
    # 1.1.5 / 3.5: the dealer-hand wager rides on the dealer's hand, played out whatever
    # the player decides.
    assert [c for c in folded_round(fold_keeps_jackpot) if c.target == "dealer"] == [
        FixedClaim(3, "fixed", "flush", m("50"), target="dealer"),
        FixedClaim(3, "lucky_dealer", None, m("5"), target="dealer"),
    ]


def test_4_3_singapore_needs_the_rounds_draws() -> None:
    with pytest.raises(TablesError) as caught:
        play(table(SGP), [bet(1)], [hand(1, NOTHING)], dealer("AD KD QD JD 10D"), None)
    assert caught.value.loc == ("draws",)


def test_4_4_lucky_box_must_be_a_box_of_the_table() -> None:
    with pytest.raises(TablesError) as caught:
        play(table(SGP, boxes=5), [bet(1)], [hand(1, NOTHING)], dealer("AD KD QD JD 10D"),
             draws(lucky_box=6))  # fmt: skip
    assert caught.value.loc == ("draws", "lucky_box")


def test_5_4_singapore_wager_without_ante_is_not_paid() -> None:
    claims = play(
        table(SGP), [bet(1, ante="0", dealer="1")], [hand(1, "AD KD QD JD 10D")],
        dealer("9C 9H 9S 9D 2C"), draws("AD", lucky_box=1, lucky_dealer=True),
    )  # fmt: skip
    assert claims == []
