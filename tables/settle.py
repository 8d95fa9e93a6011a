"""Outcome: the jackpot claims of a round, by each game's pay table and eligibility rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jackpot.money import Money, Rate
from tables.bets import BetDecision, Draws, TableSettings
from tables.errors import InvalidBetError, InvalidHandError, TablesError
from tables.evaluate import (
    AKQ,
    AKQ_SPADES,
    evaluate,
    is_eight_or_better_low,
    three_card_progressive_hand,
)
from tables.games import FixedAmount, Game, MeterShare, Odds, Pay
from tables.hands import BoxHand, DealerHand, check_hands

Target = Literal["player", "dealer"]
FixedKind = Literal["fixed", "envy", "magic_card", "lucky_player", "lucky_dealer", "river"]
KINDS = ("meter", "fixed", "envy", "magic_card", "lucky_player", "lucky_dealer", "river")
EIGHT_OR_BETTER_LOW = "eight_or_better_low"


@dataclass(frozen=True, slots=True)
class ShareClaim:
    """A major award: `share` of the meter's value at `dealt_at` (4.5). At singapore_stud a
    dealer's-hand win is claimed once per dealer-hand wager (target "dealer")."""

    box: int
    target: Target
    hand: str
    share: Rate
    dealt_at: int
    wager: Money
    meter: str | None = None  # the level the row names (None: the link's first meter)

    @property
    def kind(self) -> str:
        return "meter"


@dataclass(frozen=True, slots=True)
class FixedClaim:
    """A fixed award, final at once. `for_box` is the hitting box of an envy bonus (4.7)."""

    box: int
    kind: FixedKind
    hand: str | None
    amount: Money
    for_box: int | None = None
    target: Target = "player"


Claim = ShareClaim | FixedClaim


def _claim(
    pay: Pay, box: int, kind: FixedKind, hand: str | None, wager: Money, dealt_at: int,
    target: Target = "player", for_box: int | None = None,
) -> Claim:  # fmt: skip
    if isinstance(pay, MeterShare):
        assert hand is not None
        return ShareClaim(box, target, hand, pay.share, dealt_at, wager, pay.meter)
    amount = pay.amount if isinstance(pay, FixedAmount) else pay.of(wager)
    return FixedClaim(box, kind, hand, amount, for_box, target)


def _hand_claim(
    game: Game, row: str | None, box: int, wager: Money, dealt_at: int, target: Target = "player"
) -> list[Claim]:
    pay = game.pay(row) if row is not None else None
    return [] if pay is None else [_claim(pay, box, "fixed", row, wager, dealt_at, target)]


def _extra(game: Game, kind: FixedKind, box: int, wager: Money, target: Target) -> Claim:
    pay = game.pay(kind)
    assert isinstance(pay, Odds)  # singapore 4.5: 5 to 1 each
    return _claim(pay, box, kind, None, wager, 0, target)


def _stud(
    settings: TableSettings, bets: list[BetDecision], hands: dict[int, BoxHand]
) -> list[Claim]:
    """Casino stud and multi-link (4.2): the player's five cards, fold per 3.12.1."""
    claims: list[Claim] = []
    for bet in bets:
        hand = hands[bet.box]
        if hand.folded and not settings.fold_keeps:
            continue  # casino stud 3.12.1: not eligible; multi-link 3.12.1 / 4.3: still is
        row = evaluate(hand.cards).category.value
        claims += _hand_claim(settings.game, row, bet.box, bet.wager, hand.dealt_at)
    return claims


def _three_card(
    settings: TableSettings, decisions: dict[int, BetDecision], hands: dict[int, BoxHand]
) -> list[Claim]:
    """3 Card Poker 4.4 by the progressive ranking 3.17, and the envy bonus (4.7, 4.8)."""
    game = settings.game
    claims: list[Claim] = []
    # 3.12.1: a folded hand's jackpot bet is not eligible for any 4.4 payout, envy included.
    receivers = [
        d for d in decisions.values() if d.status == "accepted" and not hands[d.box].folded
    ]
    for bet in receivers:
        hand = hands[bet.box]
        row = three_card_progressive_hand(hand.cards)
        claims += _hand_claim(game, row, bet.box, bet.wager, hand.dealt_at)
    for hand in sorted(hands.values(), key=lambda h: h.box):
        hitter = decisions.get(hand.box)
        # 4.7: a Player with an Ante Bet (with or without a jackpot bet) triggers it; 4.8:
        # a Pair Plus-only hand does not; a folded hand has left the round (our decision).
        if hitter is None or not hitter.has_ante or hand.folded:
            continue
        row = three_card_progressive_hand(hand.cards)
        if row not in (AKQ_SPADES, AKQ):
            continue
        pay = game.pay(f"envy_{row}")
        assert pay is not None
        for bet in receivers:
            # 4.7: "A Player shall not win Envy Bonuses for his own Hand": not the hitting
            # box, nor another box of the same player (3.7).
            same_player = bet.player is not None and bet.player == hitter.player
            if bet.box == hand.box or same_player:
                continue
            claims.append(_claim(pay, bet.box, "envy", row, bet.wager, 0, for_box=hand.box))
    return claims


def _singapore(
    settings: TableSettings, bets: list[BetDecision], hands: dict[int, BoxHand],
    dealer: DealerHand, draws: Draws,
) -> list[Claim]:  # fmt: skip
    """Singapore Stud 4.2-4.5: player-hand and dealer-hand wagers, Magic Card, Lucky boxes."""
    game = settings.game
    dealer_row = evaluate(dealer.cards).category.value
    assert dealer.dealt_at is not None  # check_hands requires it here
    claims: list[Claim] = []
    for bet in bets:
        hand = hands[bet.box]
        # The rules are silent on a fold: a table setting decides for the player-hand wager,
        # and a forfeited wager loses everything that rides on it (hand, Magic Card 4.3,
        # Lucky Player 4.4). The dealer-hand wager is on the dealer's hand, which is played
        # out whatever the player decides (3.8-3.11): a fold leaves it eligible.
        if bet.wager and (settings.fold_keeps or not hand.folded):
            row = evaluate(hand.cards).category.value
            claims += _hand_claim(game, row, bet.box, bet.wager, hand.dealt_at)
            if draws.magic_card in hand.cards:  # 4.3
                claims.append(_extra(game, "magic_card", bet.box, bet.wager, "player"))
            if draws.lucky_box == bet.box:  # 4.4
                claims.append(_extra(game, "lucky_player", bet.box, bet.wager, "player"))
        if bet.dealer_wager:
            # A dealer's royal or straight flush: one claim per dealer-hand wager, all at
            # the dealer's dealt_at, paid in box order (4.5.1, docs/design.md).
            claims += _hand_claim(
                game, dealer_row, bet.box, bet.dealer_wager, dealer.dealt_at, "dealer"
            )
            if draws.magic_card in dealer.cards:  # 4.3.1
                claims.append(_extra(game, "magic_card", bet.box, bet.dealer_wager, "dealer"))
            if draws.lucky_dealer:  # 4.4.1
                claims.append(_extra(game, "lucky_dealer", bet.box, bet.dealer_wager, "dealer"))
    return claims


def _western(
    settings: TableSettings, bets: list[BetDecision], hands: dict[int, BoxHand]
) -> list[Claim]:
    """Western Stud River bet: "only one River bet payout ... for the highest paying hand"."""
    game = settings.game
    claims: list[Claim] = []
    for bet in bets:
        hand = hands[bet.box]
        if hand.folded:
            continue  # a folded hand is collected with its four cards: the River bet loses
        rows = [evaluate(hand.cards).category.value]
        if is_eight_or_better_low(hand.cards):
            rows.append(EIGHT_OR_BETTER_LOW)  # straights and flushes do not impair a low
        paid = [
            claim
            for row in rows
            if (pay := game.pay(row)) is not None
            for claim in [_claim(pay, bet.box, "river", row, bet.wager, hand.dealt_at)]
            if isinstance(claim, FixedClaim)
        ]
        if paid:
            claims.append(max(paid, key=lambda claim: claim.amount))  # first row on a tie
    return claims


def _decisions(settings: TableSettings, decisions: Sequence[BetDecision]) -> dict[int, BetDecision]:
    by_box: dict[int, BetDecision] = {}
    for i, decision in enumerate(decisions):
        if not 1 <= decision.box <= settings.boxes or decision.box in by_box:
            raise InvalidBetError(f"box {decision.box} is unknown or repeated", ("boxes", i, "box"))
        by_box[decision.box] = decision
    return by_box


def _check_draws(settings: TableSettings, draws: Draws | None) -> Draws | None:
    if not settings.game.draws:
        if draws is not None:
            raise TablesError(f"{settings.game.id} has no draws", ("draws",))
        return None
    if draws is None:
        raise TablesError(f"{settings.game.id} needs the round's draws (4.3-4.5)", ("draws",))
    if not 1 <= draws.lucky_box <= settings.boxes:
        raise TablesError(f"lucky box {draws.lucky_box} is not a box", ("draws", "lucky_box"))
    return draws


def _order(claim: Claim) -> tuple[int, int, bool, int]:
    for_box = claim.for_box if isinstance(claim, FixedClaim) else None
    return (claim.box, KINDS.index(claim.kind), claim.target == "dealer", for_box or 0)


def settle(
    settings: TableSettings,
    decisions: Sequence[BetDecision],
    hands: Sequence[BoxHand],
    dealer: DealerHand | None,
    draws: Draws | None,
) -> list[Claim]:
    """The round's jackpot claims, sorted by box then kind. Checks the deck first.

    Only boxes with an accepted jackpot wager are paid (5.4); each must have a hand.
    Other hands are checked as part of the deck and, at 3 Card Poker, may trigger envy.
    """
    check_hands(settings, hands, dealer)
    by_box = _decisions(settings, decisions)
    checked_draws = _check_draws(settings, draws)
    by_hand = {hand.box: hand for hand in hands}
    accepted = sorted((d for d in by_box.values() if d.status == "accepted"), key=lambda d: d.box)
    for bet in accepted:
        if bet.box not in by_hand:
            raise InvalidHandError(
                f"box {bet.box} has an accepted jackpot wager but no hand", ("boxes",)
            )
    game = settings.game
    if game.envy:
        claims = _three_card(settings, by_box, by_hand)
    elif game.dealer_wager:
        assert dealer is not None and checked_draws is not None  # checked above
        claims = _singapore(settings, accepted, by_hand, dealer, checked_draws)
    elif game.river:
        claims = _western(settings, accepted, by_hand)
    else:
        claims = _stud(settings, accepted, by_hand)
    return sorted(claims, key=_order)
