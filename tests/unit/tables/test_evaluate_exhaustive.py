"""Every five-card and three-card hand of one deck, counted by category (rank-count tables)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from tables.cards import DECK
from tables.evaluate import (
    Category,
    evaluate,
    evaluate_three,
    is_eight_or_better_low,
    three_card_progressive_hand,
)

pytestmark = pytest.mark.slow


def test_all_2_598_960_five_card_hands_by_category() -> None:
    values = Counter(map(evaluate, combinations(DECK, 5)))
    categories: Counter[Category] = Counter()
    for value, n in values.items():
        categories[value.category] += n
    assert categories == {
        Category.royal_flush: 4,
        Category.straight_flush: 36,
        Category.four_of_a_kind: 624,
        Category.full_house: 3_744,
        Category.flush: 5_108,
        Category.straight: 10_200,
        Category.three_of_a_kind: 54_912,
        Category.two_pair: 123_552,
        Category.pair: 1_098_240,
        Category.high_card: 1_302_540,
    }
    assert sum(categories.values()) == 2_598_960
    assert len(values) == 7_462  # distinct hand values: the ranks tie-break everything else


def test_all_22_100_three_card_hands_by_category() -> None:
    values = Counter(map(evaluate_three, combinations(DECK, 3)))
    categories: Counter[Category] = Counter()
    for value, n in values.items():
        categories[value.category] += n
    assert categories == {
        Category.straight_flush: 48,
        Category.three_of_a_kind: 52,
        Category.straight: 720,
        Category.flush: 1_096,
        Category.pair: 3_744,
        Category.high_card: 16_440,
    }


def test_3_17_all_three_card_hands_by_progressive_hand() -> None:
    # One A♠K♠Q♠; AKQ of hearts, diamonds, clubs; the other 44 straight flushes; 13 x 4
    # three of a kind; 12 sequences x 4^3 suits minus the 48 suited ones.
    hands = Counter(three_card_progressive_hand(cards) for cards in combinations(DECK, 3))
    assert hands == {
        "akq_spades": 1,
        "akq": 3,
        "straight_flush": 44,
        "three_of_a_kind": 52,
        "straight": 720,
        None: 22_100 - 1 - 3 - 44 - 52 - 720,
    }


def test_western_stud_all_8_or_better_lows() -> None:
    # Five different ranks out of A-8 (56 choices), any suits (4^5): 57,344 hands.
    lows = sum(1 for cards in combinations(DECK, 5) if is_eight_or_better_low(cards))
    assert lows == 56 * 4**5
