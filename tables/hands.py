"""Hands complete: each box's cards and the dealer's, checked together as one deck (5.8, 5.15)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tables.bets import TableSettings, check_box
from tables.cards import Card
from tables.errors import InvalidHandError, Loc


@dataclass(frozen=True, slots=True)
class BoxHand:
    """A box's cards. `dealt_at` (epoch milliseconds) is when the player had his full hand
    (4.5.2); it is passed through to meter claims. A folded western_stud hand has four cards."""

    box: int
    cards: tuple[Card, ...]
    folded: bool
    dealt_at: int


@dataclass(frozen=True, slots=True)
class DealerHand:
    """The dealer's cards. Required at singapore_stud, with `dealt_at` (dealer-hand wagers)."""

    cards: tuple[Card, ...]
    dealt_at: int | None


def hand_size(settings: TableSettings, folded: bool) -> int:
    """Cards a box must hold: 5, or 3 at 3 Card Poker (3.10); western stud: 4 when folded
    (the fifth card is dealt only to players still in)."""
    game = settings.game
    return game.hand_size - 1 if game.river and folded else game.hand_size


class _Deck:
    """The round's cards seen so far: one 52-card deck, so every card at most once."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.holder: dict[Card, str] = {}

    def deal(self, cards: Sequence[Card], holder: str, loc: Loc) -> None:
        seen = self.holder
        for j, card in enumerate(cards):
            if not isinstance(card, Card):
                raise InvalidHandError(f"{card!r} is not a card: rule 5.8.1", (*loc, j))
            # One lookup for the usual new card; a card seen before keeps its holder.
            count = len(seen)
            seen.setdefault(card, holder)
            if len(seen) == count:
                raise InvalidHandError(
                    f"duplicate card {card} (also in {seen[card]}): rule {self.rule}",
                    (*loc, j),
                )


def _check_boxes(settings: TableSettings, hands: Sequence[BoxHand], deck: _Deck) -> None:
    game = settings.game
    seen: dict[int, int] = {}
    for i, hand in enumerate(hands):
        check_box(settings, hand.box, i, seen, InvalidHandError)
        size = hand_size(settings, hand.folded)
        if len(hand.cards) != size:
            state = "a folded " if game.river and hand.folded else "a "
            raise InvalidHandError(
                f"box {hand.box} has {len(hand.cards)} cards; {state}{game.id} hand has"
                f" {size}: rule {game.rules.hand_size}",
                ("boxes", i, "cards"),
            )
        deck.deal(hand.cards, f"box {hand.box}", ("boxes", i, "cards"))


def _check_dealer(settings: TableSettings, dealer: DealerHand | None, deck: _Deck) -> None:
    game = settings.game
    if game.dealer_wager:
        # Singapore 3.5 / 4.3.1 / 4.4.1: dealer-hand wagers and draws need the dealer's hand.
        if dealer is None:
            raise InvalidHandError(f"the dealer's hand is required at {game.id}", ("dealer",))
        if dealer.dealt_at is None:
            raise InvalidHandError(
                f"the dealer's dealt_at is required at {game.id}", ("dealer", "dealt_at")
            )
    if dealer is None:
        return
    # Exactly a full hand where the dealer's hand is needed; elsewhere the table may post
    # what it has, up to a full hand (two hands of five at western stud).
    exact = game.dealer_wager
    if len(dealer.cards) > game.dealer_cards or (exact and len(dealer.cards) != game.dealer_cards):
        allowed = f"{game.dealer_cards}" if exact else f"at most {game.dealer_cards}"
        raise InvalidHandError(
            f"the dealer's hand has {len(dealer.cards)} cards; at {game.id} it has {allowed}:"
            f" rule {game.rules.dealer_size}",
            ("dealer", "cards"),
        )
    deck.deal(dealer.cards, "the dealer's hand", ("dealer", "cards"))


def check_hands(
    settings: TableSettings, hands: Sequence[BoxHand], dealer: DealerHand | None
) -> None:
    """Refuse a round whose cards cannot come from one deck: a duplicated card (5.8.3), a
    box's hand of the wrong size (5.15), a missing or wrong dealer's hand (5.8.7)."""
    deck = _Deck(settings.game.rules.duplicate)
    _check_boxes(settings, hands, deck)
    _check_dealer(settings, dealer, deck)
