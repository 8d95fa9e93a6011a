"""Hand evaluation: five-card high (3.1.2), 3 Card Poker (3.1.2, 3.17) and 8-or-better low."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations, combinations_with_replacement

from tables.cards import Card, Suit
from tables.errors import InvalidHandError


class Category(StrEnum):
    """A hand's category; the value is the hand name used in pay tables and claims."""

    royal_flush = "royal_flush"
    straight_flush = "straight_flush"
    four_of_a_kind = "four_of_a_kind"
    full_house = "full_house"
    flush = "flush"
    straight = "straight"
    three_of_a_kind = "three_of_a_kind"
    two_pair = "two_pair"
    pair = "pair"
    high_card = "high_card"


C = Category
# 3.1.2 (casino stud, multi-link, singapore 3.14): five-card ranking, lowest first.
FIVE_CARD_RANKING: tuple[Category, ...] = (
    C.high_card, C.pair, C.two_pair, C.three_of_a_kind, C.straight,
    C.flush, C.full_house, C.four_of_a_kind, C.straight_flush, C.royal_flush,
)  # fmt: skip
# 3 Card Poker 3.1.2: a straight beats a flush and three of a kind beats a straight.
THREE_CARD_RANKING: tuple[Category, ...] = (
    C.high_card, C.pair, C.flush, C.straight, C.three_of_a_kind, C.straight_flush,
)  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)
class HandValue:
    """A hand's value: category and tie-break ranks (most significant first).

    Values of the same hand size form a total order (`<`, `==`); `key` is that order
    as one integer. A five-card and a three-card value are never comparable.
    """

    category: Category
    ranks: tuple[int, ...]
    size: int
    key: int

    def _other(self, other: object) -> HandValue:
        if not isinstance(other, HandValue) or other.size != self.size:
            raise TypeError("only hand values of the same hand size are comparable")
        return other

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self.size == other.size and self.key == other.key

    def __hash__(self) -> int:
        return hash((self.size, self.key))

    def __lt__(self, other: object) -> bool:
        return self.key < self._other(other).key

    def __le__(self, other: object) -> bool:
        return self.key <= self._other(other).key

    def __gt__(self, other: object) -> bool:
        return self.key > self._other(other).key

    def __ge__(self, other: object) -> bool:
        return self.key >= self._other(other).key


def _value(category: Category, ranks: tuple[int, ...], ranking: tuple[Category, ...]) -> HandValue:
    key = ranking.index(category)
    for rank in ranks + (0,) * (5 - len(ranks)):
        key = key * 16 + rank
    return HandValue(category, ranks, 5 if ranking is FIVE_CARD_RANKING else 3, key)


def _straight_high(ranks: tuple[int, ...]) -> int | None:
    """Highest card of a straight, or None. 3.1.1: the ace also counts as 1 (5-4-3-2-A, 3-2-A)."""
    if len(set(ranks)) != len(ranks):
        return None
    if ranks[0] - ranks[-1] == len(ranks) - 1:
        return ranks[0]
    if ranks[0] == 14 and ranks[1:] == tuple(range(len(ranks), 1, -1)):
        return len(ranks)  # the wheel: the lowest straight (3.1.1)
    return None


def _groups(ranks: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(group sizes, ranks) ordered by size then rank: 3.1.3 b-c compare the next highest card."""
    counted = sorted(Counter(ranks).items(), key=lambda item: (item[1], item[0]), reverse=True)
    return tuple(n for _, n in counted), tuple(r for r, _ in counted)


def _classify_five(ranks: tuple[int, ...], flush: bool) -> HandValue:
    """3.1.2 / 3.1.3 from first principles: used once per rank pattern to build the tables."""
    high = _straight_high(ranks)
    sizes, grouped = _groups(ranks)
    if high is not None and flush:
        category = C.royal_flush if high == 14 else C.straight_flush
        return _value(category, (high,), FIVE_CARD_RANKING)
    if sizes[0] == 4:
        return _value(C.four_of_a_kind, grouped, FIVE_CARD_RANKING)
    if sizes[:2] == (3, 2):
        return _value(C.full_house, grouped, FIVE_CARD_RANKING)
    if flush:
        return _value(C.flush, ranks, FIVE_CARD_RANKING)
    if high is not None:
        return _value(C.straight, (high,), FIVE_CARD_RANKING)  # 3.1.3 a
    if sizes[0] == 3:
        return _value(C.three_of_a_kind, grouped, FIVE_CARD_RANKING)
    if sizes[:2] == (2, 2):
        return _value(C.two_pair, grouped, FIVE_CARD_RANKING)
    if sizes[0] == 2:
        return _value(C.pair, grouped, FIVE_CARD_RANKING)  # 3.1.3 b
    return _value(C.high_card, ranks, FIVE_CARD_RANKING)  # 3.1.3 c


def _classify_three(ranks: tuple[int, ...], flush: bool) -> HandValue:
    """3 Card Poker 3.1.2 / 3.1.3 (ranks sorted high to low)."""
    high = _straight_high(ranks)
    sizes, grouped = _groups(ranks)
    if high is not None:
        category = C.straight_flush if flush else C.straight
        return _value(category, (high,), THREE_CARD_RANKING)
    if sizes[0] == 3:
        return _value(C.three_of_a_kind, grouped, THREE_CARD_RANKING)
    if flush:
        return _value(C.flush, ranks, THREE_CARD_RANKING)
    if sizes[0] == 2:
        return _value(C.pair, grouped, THREE_CARD_RANKING)
    return _value(C.high_card, ranks, THREE_CARD_RANKING)


# The rank-count approach: a hand's value depends only on its multiset of ranks and on
# whether all its cards share a suit. A product of one prime per rank names the multiset,
# so evaluation is a product and one dictionary look-up into tables built once here.
_PRIME = (0, 0, 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def _product(ranks: tuple[int, ...]) -> int:
    product = 1
    for rank in ranks:
        product *= _PRIME[rank]
    return product


def _tables(size: int) -> tuple[dict[int, HandValue], dict[int, HandValue]]:
    classify = _classify_five if size == 5 else _classify_three
    plain = {
        _product(ranks): classify(ranks, False)
        for ranks in combinations_with_replacement(range(14, 1, -1), size)
        if max(Counter(ranks).values()) <= 4  # one deck holds four of each rank
    }
    flush = {
        _product(ranks): classify(ranks, True) for ranks in combinations(range(14, 1, -1), size)
    }
    return plain, flush


_PLAIN5, _FLUSH5 = _tables(5)
_PLAIN3, _FLUSH3 = _tables(3)


def evaluate(cards: Sequence[Card]) -> HandValue:
    """The value of a five-card hand (3.1.2, 3.1.3). Order of the cards does not matter.

    The cards must be distinct (check_hands checks a round's deck, 5.8.3).
    """
    try:
        a, b, c, d, e = cards
    except ValueError:
        raise InvalidHandError(f"a five-card hand has 5 cards, not {len(cards)}") from None
    s = a.suit
    flush = b.suit is s and c.suit is s and d.suit is s and e.suit is s
    product = _PRIME[a.rank] * _PRIME[b.rank] * _PRIME[c.rank] * _PRIME[d.rank] * _PRIME[e.rank]
    value = (_FLUSH5 if flush else _PLAIN5).get(product)
    if value is None:
        raise InvalidHandError(f"{' '.join(map(str, cards))} cannot come from one deck: rule 5.8.3")
    return value


def evaluate_three(cards: Sequence[Card]) -> HandValue:
    """The value of a 3 Card Poker hand (3 Card Poker 3.1.1-3.1.3): A-2-3 is the lowest straight."""
    try:
        a, b, c = cards
    except ValueError:
        raise InvalidHandError(f"a 3 Card Poker hand has 3 cards, not {len(cards)}") from None
    flush = b.suit is a.suit and c.suit is a.suit
    value = (_FLUSH3 if flush else _PLAIN3).get(_PRIME[a.rank] * _PRIME[b.rank] * _PRIME[c.rank])
    if value is None:
        raise InvalidHandError(f"{' '.join(map(str, cards))} cannot come from one deck: rule 5.8.3")
    return value


AKQ_SPADES = "akq_spades"
AKQ = "akq"


def three_card_progressive_hand(cards: Sequence[Card]) -> str | None:
    """The hand's name in the 3 Card Poker progressive ranking (3.17), or None.

    From the top: "akq_spades" (A♠ K♠ Q♠), "akq" (A K Q of one other suit), then
    "straight_flush", "three_of_a_kind", "straight". A flush or a pair wins nothing.
    """
    value = evaluate_three(cards)
    if value.category is C.straight_flush and value.ranks == (14,):
        return AKQ_SPADES if cards[0].suit is Suit.S else AKQ
    if value.category in (C.straight_flush, C.three_of_a_kind, C.straight):
        return value.category.value
    return None


def is_eight_or_better_low(cards: Sequence[Card]) -> bool:
    """Western Stud "any 8 or better low": five different ranks, all 8 or lower, ace low.

    Straights and flushes do not impair a low hand (Western Stud rules).
    """
    low = {1 if card.rank == 14 else card.rank for card in cards}
    return len(cards) == 5 and len(low) == 5 and max(low) <= 8
