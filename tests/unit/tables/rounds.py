"""Builders for test rounds: bets, hands and a settle call in the rules' notation."""

from __future__ import annotations

from collections.abc import Sequence

from jackpot.money import Money, parse_money
from tables.bets import BoxBet, Draws, TableSettings, check_bets
from tables.cards import parse_card, parse_cards
from tables.games import GameId, game
from tables.hands import BoxHand, DealerHand
from tables.settle import Claim, settle


def m(text: str) -> Money:
    return parse_money(text)


def table(
    game_id: GameId,
    *,
    wager: str = "1.00",
    boxes: int = 7,
    fold_keeps_jackpot: bool | None = None,
    overrides: dict[str, str] | None = None,
) -> TableSettings:
    return TableSettings(game(game_id, overrides), m(wager), boxes, fold_keeps_jackpot)


def bet(
    box: int, ante: str = "10.00", jackpot: str = "1.00", dealer: str = "0",
    player: str | None = None,
) -> BoxBet:  # fmt: skip
    return BoxBet(box, m(ante), m(jackpot), m(dealer), player)


def hand(box: int, cards: str, folded: bool = False) -> BoxHand:
    # dealt_at: a fixed epoch-millisecond instant per box, in deal order (box order).
    return BoxHand(box, parse_cards(cards), folded, dealt_at(box))


def dealt_at(box: int) -> int:
    return 1_795_000_000_000 + 10 * box


DEALER_DEALT_AT = 1_795_000_000_999


def dealer(cards: str) -> DealerHand:
    return DealerHand(parse_cards(cards), DEALER_DEALT_AT)


def draws(magic_card: str = "2C", lucky_box: int = 7, lucky_dealer: bool = False) -> Draws:
    return Draws(parse_card(magic_card), lucky_box, lucky_dealer)


def play(
    settings: TableSettings,
    bets: Sequence[BoxBet],
    hands: Sequence[BoxHand],
    dealer_hand: DealerHand | None = None,
    round_draws: Draws | None = None,
) -> list[Claim]:
    """Bets closed, then the outcome: the claims settle returns."""
    return settle(settings, check_bets(settings, bets), hands, dealer_hand, round_draws)
