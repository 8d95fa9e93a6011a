"""3 Card Poker jackpot claims (4.4 by the 3.17 ranking) and the envy bonus (4.7, 4.8)."""

from __future__ import annotations

import pytest

from jackpot.money import Rate
from tables.games import GameId
from tables.settle import FixedClaim, ShareClaim

from .rounds import bet, dealer, dealt_at, hand, m, play, table

TCP = GameId.three_card_poker


def one_box(cards: str, folded: bool = False) -> list[ShareClaim | FixedClaim]:
    return play(table(TCP), [bet(4)], [hand(4, cards, folded)])


def test_4_4_akq_spades_wins_100_percent_of_the_progressive_jackpot() -> None:
    assert one_box("AS KS QS") == [
        ShareClaim(4, "player", "akq_spades", Rate(10_000), dealt_at(4), m("1"))
    ]


@pytest.mark.parametrize("cards", ["AH KH QH", "AD KD QD", "QC KC AC"])
def test_4_4_akq_hearts_diamonds_clubs_wins_1250(cards: str) -> None:
    assert one_box(cards) == [FixedClaim(4, "fixed", "akq", m("1250"))]


@pytest.mark.parametrize("cards", ["QC JC 10C", "3S 2S AS", "KH QH JH"])
def test_4_4_straight_flush_wins_175(cards: str) -> None:
    assert one_box(cards) == [FixedClaim(4, "fixed", "straight_flush", m("175"))]


def test_4_4_three_of_a_kind_wins_150() -> None:
    assert one_box("KC KH KD") == [FixedClaim(4, "fixed", "three_of_a_kind", m("150"))]


@pytest.mark.parametrize("cards", ["10C 9H 8D", "3C 2H AD", "AS KH QS"])
def test_4_4_straight_wins_15(cards: str) -> None:
    # 3.1.1: A-2-3 is a straight; an AKQ of mixed suits is a straight, not an AKQ (3.17).
    assert one_box(cards) == [FixedClaim(4, "fixed", "straight", m("15"))]


@pytest.mark.parametrize("cards", ["KC JC 9C", "10C 10H KS", "6S 4H 2D"])
def test_3_17_flush_pair_and_odd_cards_win_no_jackpot(cards: str) -> None:
    assert one_box(cards) == []


def test_3_12_1_three_card_fold_forfeits_jackpot() -> None:
    assert one_box("AS KS QS", folded=True) == []
    assert one_box("KC KH KD", folded=True) == []


def test_3_13_jackpot_paid_irrespective_of_the_dealers_hand() -> None:
    claims = play(table(TCP), [bet(1)], [hand(1, "KC KH KD")], dealer("AC AH AD"))
    assert claims == [FixedClaim(1, "fixed", "three_of_a_kind", m("150"))]


def test_4_7_envy_bonus_250_for_akq_spades_to_every_other_box_with_a_jackpot_bet() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2), bet(3)],
        [hand(1, "2C 5D 9H"), hand(2, "AS KS QS"), hand(3, "7C 7D JS")],
    )
    assert claims == [
        FixedClaim(1, "envy", "akq_spades", m("250"), for_box=2),
        ShareClaim(2, "player", "akq_spades", Rate(10_000), dealt_at(2), m("1")),
        FixedClaim(3, "envy", "akq_spades", m("250"), for_box=2),
    ]


def test_4_7_envy_bonus_50_for_akq_of_another_suit() -> None:
    claims = play(table(TCP), [bet(1), bet(6)], [hand(1, "2C 5D 9H"), hand(6, "AD KD QD")])
    assert claims == [
        FixedClaim(1, "envy", "akq", m("50"), for_box=6),
        FixedClaim(6, "fixed", "akq", m("1250")),
    ]


def test_4_7_no_envy_bonus_for_lower_hands() -> None:
    claims = play(table(TCP), [bet(1), bet(6)], [hand(1, "2C 5D 9H"), hand(6, "QC JC 10C")])
    assert claims == [FixedClaim(6, "fixed", "straight_flush", m("175"))]


def test_4_7_envy_not_paid_for_own_hand() -> None:
    claims = play(table(TCP), [bet(3)], [hand(3, "AH KH QH")])
    assert claims == [FixedClaim(3, "fixed", "akq", m("1250"))]


def test_4_7_envy_not_paid_between_boxes_of_the_same_player() -> None:
    # 3.7: one player may play several boxes; "his own Hand" covers all of them.
    claims = play(
        table(TCP),
        [bet(1, player="p1"), bet(2, player="p1"), bet(3, player="p2"), bet(4)],
        [hand(1, "AS KS QS"), hand(2, "2C 5D 9H"), hand(3, "3C 6D 10H"), hand(4, "4C 7D JH")],
    )
    envy = [(c.box, c.for_box) for c in claims if isinstance(c, FixedClaim) and c.kind == "envy"]
    assert envy == [(3, 1), (4, 1)]


def test_4_7_ante_only_hand_triggers_envy_but_wins_nothing_itself() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2, jackpot="0")],
        [hand(1, "2C 5D 9H"), hand(2, "AS KS QS")],
    )
    assert claims == [FixedClaim(1, "envy", "akq_spades", m("250"), for_box=2)]


def test_4_7_envy_only_to_boxes_with_a_jackpot_bet() -> None:
    claims = play(
        table(TCP),
        [bet(1, jackpot="0"), bet(2)],
        [hand(1, "2C 5D 9H"), hand(2, "AH KH QH")],
    )
    assert claims == [FixedClaim(2, "fixed", "akq", m("1250"))]


def test_4_8_pair_plus_only_hand_triggers_no_envy() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2, ante="0", jackpot="0")],
        [hand(1, "2C 5D 9H"), hand(2, "AS KS QS")],
    )
    assert claims == []


def test_4_8_and_5_4_jackpot_bet_without_ante_is_returned_and_triggers_no_envy() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2, ante="0")],
        [hand(1, "2C 5D 9H"), hand(2, "AS KS QS")],
    )
    assert claims == []


def test_4_7_a_hand_without_any_bet_triggers_no_envy() -> None:
    claims = play(table(TCP), [bet(1)], [hand(1, "2C 5D 9H"), hand(2, "AS KS QS")])
    assert claims == []


def test_3_12_1_folded_box_neither_triggers_nor_receives_envy() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2), bet(3)],
        [hand(1, "2C 5D 9H", folded=True), hand(2, "AS KS QS", folded=True), hand(3, "AH KH QH")],
    )
    # Box 2 folded its A♠K♠Q♠: no jackpot, no envy to anyone. Box 1 folded: no envy for it.
    assert claims == [FixedClaim(3, "fixed", "akq", m("1250"))]


def test_4_7_one_envy_bonus_per_hitting_hand_including_for_other_hitters() -> None:
    claims = play(
        table(TCP),
        [bet(1), bet(2), bet(5, jackpot="0")],
        [hand(1, "AD KD QD"), hand(2, "AS KS QS"), hand(5, "AH KH QH")],
    )
    assert claims == [
        FixedClaim(1, "fixed", "akq", m("1250")),
        FixedClaim(1, "envy", "akq_spades", m("250"), for_box=2),
        FixedClaim(1, "envy", "akq", m("50"), for_box=5),
        ShareClaim(2, "player", "akq_spades", Rate(10_000), dealt_at(2), m("1")),
        FixedClaim(2, "envy", "akq", m("50"), for_box=1),
        FixedClaim(2, "envy", "akq", m("50"), for_box=5),
    ]


def test_4_4_envy_bonus_follows_pay_table_overrides() -> None:
    settings = table(TCP, overrides={"envy_akq_spades": "500", "straight": "20"})
    claims = play(settings, [bet(1), bet(2)], [hand(1, "10C 9H 8D"), hand(2, "AS KS QS")])
    assert claims == [
        FixedClaim(1, "fixed", "straight", m("20")),
        FixedClaim(1, "envy", "akq_spades", m("500"), for_box=2),
        ShareClaim(2, "player", "akq_spades", Rate(10_000), dealt_at(2), m("1")),
    ]
