"""Hand rankings and tie-breaks, from the examples in the rules (3.1.1-3.1.3, 3.14, 3.15, 3.17)."""

from __future__ import annotations

import pytest

from tables.cards import parse_cards
from tables.errors import InvalidHandError
from tables.evaluate import (
    Category,
    HandValue,
    evaluate,
    evaluate_three,
    is_eight_or_better_low,
    three_card_progressive_hand,
)


def five(text: str) -> HandValue:
    return evaluate(parse_cards(text))


def three(text: str) -> HandValue:
    return evaluate_three(parse_cards(text))


# Casino Stud 3.1.2 (multi-link 3.1.2 is the same list), highest first. Where the rules'
# examples repeat a card (Q♠ Q♥ Q♠ 8♥ 3♦; multi-link K♣ K♥ K♠ K♠ J♥) the copy is a
# typo: one deck holds one Q♠, so the test uses another suit for the repeated rank.
CASINO_STUD_3_1_2 = [
    ("AD KD QD JD 10D", Category.royal_flush),
    ("QC JC 10C 9C 8C", Category.straight_flush),
    ("KC KH KD KS JH", Category.four_of_a_kind),
    ("KC KH KD JS JH", Category.full_house),
    ("KH JH 9H 5H 2H", Category.flush),
    ("5C 4D 3C 2H AS", Category.straight),
    ("QS QH QC 8H 3D", Category.three_of_a_kind),
    ("7S 7H 4C 4H JD", Category.two_pair),
    ("10C 10H KD 6H 3S", Category.pair),
    ("QC 10H 6D 4S 2H", Category.high_card),
]

SINGAPORE_3_14 = [
    ("AD KD QD JD 10D", Category.royal_flush),  # 3.14.1
    ("JC 10C 9C 8C 7C", Category.straight_flush),  # 3.14.2
    ("AC AH AD AS JH", Category.four_of_a_kind),  # 3.14.3
    ("KC KH KD AS AH", Category.full_house),  # 3.14.4
    ("JH 8H 6H 5H 2H", Category.flush),  # 3.14.5
    ("9C 8D 7C 6H 5S", Category.straight),  # 3.14.6
    ("10S 10H 10C 6H 3D", Category.three_of_a_kind),  # 3.14.7
    ("QS QH 6C 6H 3D", Category.two_pair),  # 3.14.8
    ("AC AH 8D 6H 5S", Category.pair),  # 3.14.9
    ("QC 10H 6D 5S 2H", Category.high_card),  # 3.14.10
]

THREE_CARD_3_1_2 = [
    ("AH KH QH", Category.straight_flush),
    ("QS QH QC", Category.three_of_a_kind),
    ("AC KD QC", Category.straight),
    ("3C 2H AD", Category.straight),
    ("KC JC 9C", Category.flush),
    ("10C 10H KS", Category.pair),
    ("6S 4H 2D", Category.high_card),
]


@pytest.mark.parametrize(("cards", "category"), CASINO_STUD_3_1_2)
def test_3_1_2_casino_stud_ranking_list_examples(cards: str, category: Category) -> None:
    assert five(cards).category is category


@pytest.mark.parametrize(("cards", "category"), SINGAPORE_3_14)
def test_3_14_singapore_order_of_hands_examples(cards: str, category: Category) -> None:
    assert five(cards).category is category


@pytest.mark.parametrize("examples", [CASINO_STUD_3_1_2, SINGAPORE_3_14])
def test_3_1_2_and_3_14_lists_are_in_descending_order(
    examples: list[tuple[str, Category]],
) -> None:
    values = [five(cards) for cards, _ in examples]
    assert all(higher > lower for higher, lower in zip(values, values[1:], strict=False))


@pytest.mark.parametrize(("cards", "category"), THREE_CARD_3_1_2)
def test_3_card_3_1_2_ranking_list_examples(cards: str, category: Category) -> None:
    assert three(cards).category is category


def test_3_card_3_1_2_straight_beats_flush_and_three_of_a_kind_beats_straight() -> None:
    assert three("AH KH QH") > three("QS QH QC") > three("AC KD QC") > three("KC JC 9C")
    assert three("KC JC 9C") > three("10C 10H KS") > three("6S 4H 2D")
    assert three("3C 2H AD") > three("AC KC JC")  # the lowest straight beats the best flush


# 3.1.3 (casino stud and multi-link): equal hands of different card values.
def test_3_1_3_a_higher_straight_beats_lower_straight() -> None:
    assert five("KS QH JD 10C 9S") > five("JS 10H 9D 8C 7S")


def test_3_1_3_b_pair_then_next_highest_card_king_beats_queen() -> None:
    assert five("5S 5H KD 10C 2S") > five("5D 5C QS JH 10D")


def test_3_1_3_c_ace_king_then_jack_beats_ten() -> None:
    assert five("AS KH JD 5C 2S") > five("AH KD 10C 6S 4H")


# Singapore Stud 3.15 a-c.
def test_3_15_a_singapore_higher_straight_beats_lower_straight() -> None:
    assert five("QS JH 10D 9C 8S") > five("10S 9H 8D 7C 6S")


def test_3_15_b_singapore_pair_of_eights_then_queen_beats_jack() -> None:
    assert five("8S 8H QD 10C 2S") > five("8D 8C JS 9H 7D")


def test_3_15_c_singapore_ace_king_then_jack_beats_ten() -> None:
    assert five("AS KH JD 4C 2S") > five("AH KD 10C 6S 3H")


def test_3_16_singapore_identical_values_tie() -> None:
    # 3.16: a tie after comparing every card value is a stand-off: the values are equal.
    assert five("AS KH JD 4C 2S") == five("AH KD JC 4S 2H")


# 3 Card Poker 3.1.3 a-c.
def test_3_card_3_1_3_a_higher_straight_beats_lower_straight() -> None:
    assert three("KS QH JD") > three("JS 10H 9D")


def test_3_card_3_1_3_b_pair_of_fives_then_king_beats_queen() -> None:
    assert three("5S 5H KD") > three("5D 5C QS")


def test_3_card_3_1_3_c_ace_king_then_jack_beats_ten() -> None:
    assert three("AS KH JD") > three("AH KD 10C")


def test_3_1_1_wheel_is_the_lowest_straight() -> None:
    wheel = five("5C 4D 3C 2H AS")
    assert wheel.category is Category.straight
    assert wheel < five("6C 5D 4C 3H 2S")
    assert wheel > five("AS AH AD KC QS")  # above the best three of a kind


def test_3_1_1_steel_wheel_is_a_straight_flush_not_a_royal() -> None:
    steel = five("AH 2H 3H 4H 5H")
    assert steel.category is Category.straight_flush
    assert steel < five("6H 2H 3H 4H 5H")


def test_3_1_1_ace_king_queen_jack_ten_is_the_highest_straight() -> None:
    assert five("AS KH QD JC 10S") > five("KH QD JC 10S 9S")
    assert five("AS KH QD JC 10S").ranks == (14,)


def test_3_card_3_1_1_ace_two_three_is_the_lowest_straight() -> None:
    assert three("3C 2H AD").category is Category.straight
    assert three("3C 2H AD") < three("4C 3H 2D")
    assert three("AC 2C 3C").category is Category.straight_flush
    assert three("AC 2C 3C") < three("2D 3D 4D")


def test_no_wrap_around_straight() -> None:
    assert five("QS KH AD 2C 3S").category is Category.high_card
    assert three("KS AH 2D").category is Category.high_card


@pytest.mark.parametrize(
    ("cards", "hand"),
    [
        ("AS KS QS", "akq_spades"),
        ("QS AS KS", "akq_spades"),
        ("AH KH QH", "akq"),
        ("AD KD QD", "akq"),
        ("AC KC QC", "akq"),
        ("QC JC 10C", "straight_flush"),
        ("3S 2S AS", "straight_flush"),
        ("KC KH KD", "three_of_a_kind"),
        ("10C 9H 8D", "straight"),
        ("AS KH QS", "straight"),  # AKQ of mixed suits is only a straight
        ("3C 2H AD", "straight"),
        ("KC JC 9C", None),  # a flush is not in 3.17
        ("10C 10H KS", None),
        ("6S 4H 2D", None),
    ],
)
def test_3_17_progressive_jackpot_ranking(cards: str, hand: str | None) -> None:
    assert three_card_progressive_hand(parse_cards(cards)) == hand


@pytest.mark.parametrize(
    ("cards", "low"),
    [
        ("8S 7H 5D 3C AS", True),
        ("AS 2H 3D 4C 5S", True),  # a straight does not impair a low
        ("AH 2H 3H 4H 6H", True),  # nor a flush
        ("AH 2H 3H 4H 5H", True),  # nor a straight flush
        ("8S 7H 6D 5C 4S", True),
        ("9S 7H 5D 3C AS", False),  # a nine is not 8 or better
        ("8S 8H 5D 3C AS", False),  # a pair is not a low
        ("KS 2H 3D 4C 5S", False),  # kings are high
        ("8S 7H 5D 3C", False),  # a folded hand has four cards
    ],
)
def test_western_stud_any_8_or_better_low(cards: str, low: bool) -> None:
    assert is_eight_or_better_low(parse_cards(cards)) is low


def test_hand_values_of_different_sizes_are_not_comparable() -> None:
    with pytest.raises(TypeError):
        assert five("AS KH JD 4C 2S") < three("AS KH JD")
    assert five("AS KH JD 4C 2S") != three("AS KH JD")


@pytest.mark.parametrize("cards", ["AS KS QS JS", "AS KS QS JS 10S 9S", ""])
def test_evaluate_refuses_a_hand_that_is_not_five_cards(cards: str) -> None:
    with pytest.raises(InvalidHandError):
        five(cards)


def test_evaluate_three_refuses_a_hand_that_is_not_three_cards() -> None:
    with pytest.raises(InvalidHandError):
        three("AS KS")


def test_5_8_3_five_of_a_kind_cannot_be_evaluated() -> None:
    with pytest.raises(InvalidHandError, match="5.8.3"):
        five("AS AS AS AS AS")
    with pytest.raises(InvalidHandError, match="5.8.3"):
        three("AS AS AS")  # the same card three times
