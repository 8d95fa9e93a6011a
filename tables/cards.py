"""Playing cards: suits, ranks, the 52-card deck, and card notation ("AS", "TD", "10D")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from tables.errors import InvalidCardError, Loc


class Suit(StrEnum):
    """2.2.1: one deck of 52 cards; 3.1.1: all suits have the same rank."""

    S = "S"
    H = "H"
    D = "D"
    C = "C"


# 3.1.1: Ace high (14) except in A-2-3-4-5 (A-2-3 at three card poker), handled in evaluate.
RANK_CHARS = {10: "T", 11: "J", 12: "Q", 13: "K", 14: "A"} | {r: str(r) for r in range(2, 10)}
_RANK_OF = {char: rank for rank, char in RANK_CHARS.items()} | {"10": 10}


@dataclass(frozen=True, slots=True)
class Card:
    """One card of the deck: rank 2..14 (ace 14), suit S H D C. `str(card)` is e.g. "TS"."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        # 5.8.1: a card that is not part of the set can never be built.
        if not isinstance(self.rank, int) or not 2 <= self.rank <= 14:
            raise InvalidCardError(f"{self.rank!r} is not a card rank (2..14, ace 14): rule 5.8.1")
        if not isinstance(self.suit, Suit):
            raise InvalidCardError(f"{self.suit!r} is not a suit (S H D C): rule 5.8.1")

    def __str__(self) -> str:
        return RANK_CHARS[self.rank] + self.suit.value


def parse_card(text: str, loc: Loc = ()) -> Card:
    """ "AS", "td", "10D" -> Card. Raises InvalidCardError naming the text (rule 5.8.1)."""
    if not isinstance(text, str):
        raise InvalidCardError(f'{text!r} is not a card: cards are strings like "AS"', loc)
    card = _BY_TEXT.get(text) or _BY_TEXT.get(text.strip().upper())
    if card is None:
        raise InvalidCardError(
            f"{text!r} is not a card: rank 2-9 T J Q K A (or 10) then suit S H D C,"
            ' e.g. "AS": rule 5.8.1',
            loc,
        )
    return card


def parse_hand(texts: Iterable[str], loc: Loc = ()) -> tuple[Card, ...]:
    """A hand's card strings -> Cards, as `parse_card` each, an error's loc ending with the
    card's position. The usual spelling is one lookup: the loc is built only for an error."""
    cards = []
    for j, text in enumerate(texts):
        card = _BY_TEXT.get(text) if type(text) is str else None
        cards.append(parse_card(text, (*loc, j)) if card is None else card)
    return tuple(cards)


def parse_cards(text: str) -> tuple[Card, ...]:
    """ "AS KS QS JS TS" -> five Cards (space separated): convenient in tests and tools."""
    return tuple(parse_card(part, (i,)) for i, part in enumerate(text.split()))


# 2.2.1: the single deck, in a fixed order (suit by suit, deuce to ace).
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in Suit for rank in range(2, 15))

# Every upper-case spelling of every card ("TS" and "10S"): parsing is a dict lookup
# (cards are immutable, so one instance per card serves every hand).
_BY_TEXT: dict[str, Card] = {
    chars + card.suit.value: card
    for card in DECK
    for chars, rank in _RANK_OF.items()
    if rank == card.rank
}
