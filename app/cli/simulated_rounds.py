"""Simulated rounds: the floor file's tables, each round drawn up from `rng`, and its bodies."""

from __future__ import annotations

import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from math import comb
from pathlib import Path
from typing import Any

from app.state.timefmt import format_time
from tables.cards import DECK, Card, Suit
from tables.games import GameId, game

ANTES = (Decimal("10"), Decimal("25"), Decimal("50"), Decimal("100"))
ZERO = Decimal(0)
JACKPOT_ODDS = 0.75  # share of boxes with an ante that also bet the jackpot
NO_ANTE_ODDS = 0.04  # a jackpot wager without an ante: the server returns it (5.4)
FOLD_ODDS = 0.3
VOID_ODDS = 200  # 1 round in 200 is voided instead of settled
DEAL_GAP_MS = 3  # box dealt_at a few ms apart, in box order (box order is deal order)
DEALER = 0  # the dealer's "box" while dealing

# Every straight flush of the deck (10 per suit; high card 5 is the wheel A-2-3-4-5) and,
# at 3 Card Poker, the one meter hand: A K Q of spades (3.17).
STRAIGHT_FLUSHES: tuple[tuple[Card, ...], ...] = tuple(
    tuple(Card(14 if rank == 1 else rank, suit) for rank in range(high - 4, high + 1))
    for suit in Suit
    for high in range(5, 15)
)
AKQ_SPADES: tuple[Card, ...] = (Card(14, Suit.S), Card(13, Suit.S), Card(12, Suit.S))
ROYAL_FLUSHES = tuple(hand for hand in STRAIGHT_FLUSHES if hand[0].rank == 10)
OTHER_STRAIGHT_FLUSHES = tuple(hand for hand in STRAIGHT_FLUSHES if hand[0].rank != 10)
# Real odds, in one dealt hand, of a full-meter hand (a royal flush: 4 / C(52, 5); A K Q of
# spades: 1 / C(52, 3)) and of a 10 % one (another straight flush: 36 / C(52, 5)).
NATURAL_ODDS = {5: 4 / comb(52, 5), 3: 1 / comb(52, 3)}
PARTIAL_ODDS = {5: 36 / comb(52, 5), 3: 0.0}
# A straight flush takes 10 % of the meter and leaves the rest, below the seed if need be
# (4.2, 4.5.1): boosted as a royal flush is, it would drain a demo meter faster than the
# wagers fill it. At the demo's rates (0.25 of a 1.00 wager, three hands in four) a stud
# meter at its seed of 10,000.00 takes in about 0.19 a hand; a straight flush boosted 6
# times drains 6 * 36 / C(52, 5) * 1,000.00, about 0.08: the meter keeps rising.
PARTIAL_BOOST_MAX = 6.0


class SimulateError(ValueError):
    """The command line or the floor file cannot be used: the message says why."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One simulated table. `jackpot_wager` is the prescribed wager (the credit at
    singapore_stud); None at western_stud, whose River bet is any amount up to the ante."""

    id: str
    game: GameId
    boxes: int
    jackpot_wager: Decimal | None
    token: str


@dataclass(frozen=True, slots=True)
class BoxBets:
    box: int
    ante: Decimal
    jackpot: Decimal = ZERO
    jackpot_dealer: Decimal = ZERO
    player: str | None = None


@dataclass(frozen=True, slots=True)
class DealtHand:
    box: int
    cards: tuple[Card, ...]
    folded: bool


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """A whole round drawn up front, so that a seed decides it whatever the server says."""

    bets: tuple[BoxBets, ...]
    hands: tuple[DealtHand, ...]
    dealer: tuple[Card, ...] | None
    void: bool


# -- the floor file ---------------------------------------------------------------------


def read_tables(
    path: Path, only: Sequence[str] | None = None, tokens: Mapping[str, str] | None = None
) -> list[TableSpec]:
    """The floor file's tables (all, or `only` in that order), each with its token
    (from `tokens`, else the demo convention `demo-table-<TABLE>`)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise SimulateError(f"{path}: {error}") from None
    specs: dict[str, TableSpec] = {}
    for entry in raw.get("tables", []):
        try:
            table_id, game_id = str(entry["id"]), GameId(entry["game"])
            boxes = int(entry["boxes"])
            wager = entry.get("jackpot_wager")
            prescribed = None if wager is None else Decimal(str(wager))
        except (KeyError, ValueError, TypeError, InvalidOperation) as error:
            raise SimulateError(f"{path}: table {entry.get('id')!r}: {error!r}") from None
        if prescribed is None and not game(game_id).river:
            raise SimulateError(f"{path}: table {table_id} has no jackpot_wager")
        token = (tokens or {}).get(table_id, f"demo-table-{table_id}")
        specs[table_id] = TableSpec(table_id, game_id, boxes, prescribed, token)
    unknown = [t for t in only or () if t not in specs]
    if unknown:
        raise SimulateError(f"{path} has no table {', '.join(unknown)}: it has {', '.join(specs)}")
    if not specs:
        raise SimulateError(f"{path} has no [[tables]]")
    return [specs[t] for t in only] if only else list(specs.values())


# -- drawing up a round (pure: everything random comes from `rng`) ----------------------


def plan_round(
    spec: TableSpec, rng: random.Random, boost: float = 1.0, void_odds: int = VOID_ODDS
) -> RoundPlan:
    bets = plan_bets(spec, rng)
    playing = [b.box for b in bets if b.ante > 0]  # a box without an ante gets no hand
    folds = [rng.random() < FOLD_ODDS for _ in playing]
    hands, dealer = deal(spec.game, playing, folds, rng, boost)
    return RoundPlan(tuple(bets), hands, dealer, rng.randrange(void_odds) == 0)


def plan_bets(spec: TableSpec, rng: random.Random) -> list[BoxBets]:
    rules = game(spec.game)
    dealer_cards = 0 if rules.river else rules.hand_size
    seats = min(spec.boxes, (len(DECK) - dealer_cards) // rules.hand_size)
    boxes = sorted(rng.sample(range(1, spec.boxes + 1), rng.randint(1, seats)))
    bets = []
    for box in boxes:
        ante = ZERO if rng.random() < NO_ANTE_ODDS else rng.choice(ANTES)
        bets.append(_jackpot_bets(spec, rng, BoxBets(box, ante)))
    if rules.envy:  # 3 Card Poker 3.7: now and then one player plays two adjacent boxes
        for i in range(len(bets) - 1):
            a, b = bets[i], bets[i + 1]
            if rng.random() < 0.1 and b.box == a.box + 1 and a.player is None and a.ante > 0:
                bets[i], bets[i + 1] = (
                    replace(a, player=f"P{a.box}"),
                    replace(b, player=f"P{a.box}"),
                )
    return bets


def _jackpot_bets(spec: TableSpec, rng: random.Random, bets: BoxBets) -> BoxBets:
    credit = spec.jackpot_wager
    jackpot, dealer = ZERO, ZERO
    if credit is None:  # western_stud: the River bet, whole units up to the ante
        if rng.random() < JACKPOT_ODDS:
            jackpot = Decimal(rng.randint(1, int(bets.ante) or 5))
    elif game(spec.game).dealer_wager:  # singapore 3.5: credits on the player's, the dealer's
        jackpot = credit * rng.choice((0, 1, 1, 1, 2, 3))
        if rng.random() < 0.25:
            dealer = credit * rng.choice((1, 1, 2))
    elif rng.random() < JACKPOT_ODDS:
        jackpot = credit
    if bets.ante == 0 and not (jackpot or dealer):
        jackpot = credit or Decimal(5)  # a no-ante box is there to have its wager returned
    return replace(bets, jackpot=jackpot, jackpot_dealer=dealer)


def boost_odds(game_id: GameId, boost: float) -> float:
    """The chance a hand is replaced by a drawn full-meter hand (a royal flush, A K Q of
    spades): with the natural chance, it is then about `boost` times as likely."""
    return min(1.0, max(0.0, boost - 1) * NATURAL_ODDS[game(game_id).hand_size])


def partial_odds(game_id: GameId, boost: float) -> float:
    """The chance a hand is replaced by another straight flush (a 10 % award): boosted
    at most PARTIAL_BOOST_MAX times, so straight flushes stay rare beside royal flushes
    and the meters stay above their seeds."""
    factor = min(boost, PARTIAL_BOOST_MAX)
    return min(1.0, max(0.0, factor - 1) * PARTIAL_ODDS[game(game_id).hand_size])


def deal(
    game_id: GameId,
    boxes: Sequence[int],
    folds: Sequence[bool],
    rng: random.Random,
    boost: float = 1.0,
) -> tuple[tuple[DealtHand, ...], tuple[Card, ...] | None]:
    """Hands for `boxes` (box order) and the dealer's, from one shuffled deck.

    Boosted hands are drawn first and their cards taken out of the deck, then the others
    are dealt from what remains: a round never holds a card twice (5.8.3).
    """
    rules = game(game_id)
    size = rules.hand_size
    deck = list(DECK)
    rng.shuffle(deck)
    holders = [*boxes, *([] if rules.river else [DEALER])]
    full, partial = boost_odds(game_id, boost), partial_odds(game_id, boost)
    boosted: dict[int, tuple[Card, ...]] = {}
    for holder in holders:
        # Only the singapore dealer's hand carries jackpot wagers (3.5); draw anyway, so
        # that the random stream does not depend on which holders may be boosted.
        draw = rng.random()
        if draw < full + partial and (holder != DEALER or rules.dealer_wager):
            cards = _meter_hand(game_id, set(deck), rng, full=draw < full)
            if cards is not None:
                boosted[holder] = cards
                deck = [c for c in deck if c not in cards]
    hands = []
    for box, fold in zip(boxes, folds, strict=True):
        cards = boosted.get(box) or _take(deck, size)
        folded = fold and box not in boosted  # nobody folds a royal
        # Western stud: the fifth card goes only to players still in.
        hands.append(DealtHand(box, cards[: size - 1] if rules.river and folded else cards, folded))
    dealer = None if rules.river else boosted.get(DEALER) or _take(deck, size)
    return tuple(hands), dealer


def _take(deck: list[Card], n: int) -> tuple[Card, ...]:
    cards = tuple(deck[:n])
    del deck[:n]
    return cards


def _meter_hand(
    game_id: GameId, available: set[Card], rng: random.Random, *, full: bool
) -> tuple[Card, ...] | None:
    if game_id is GameId.three_card_poker:
        candidates: tuple[tuple[Card, ...], ...] = (AKQ_SPADES,)
    else:
        candidates = ROYAL_FLUSHES if full else OTHER_STRAIGHT_FLUSHES
    free = [hand for hand in candidates if available.issuperset(hand)]
    return rng.choice(free) if free else None


# -- bodies as docs/api.md shows them ---------------------------------------------------------


def money(amount: Decimal) -> str:
    return f"{amount:.2f}"


def bets_body(plan: RoundPlan, closed_at: int) -> dict[str, Any]:
    boxes = []
    for b in plan.bets:
        item: dict[str, Any] = {"box": b.box, "ante": money(b.ante)}
        if b.jackpot:
            item["jackpot"] = money(b.jackpot)
        if b.jackpot_dealer:
            item["jackpot_dealer"] = money(b.jackpot_dealer)
        if b.player is not None:
            item["player"] = b.player
        boxes.append(item)
    return {"closed_at": format_time(closed_at), "boxes": boxes}


def outcome_body(plan: RoundPlan, dealt_at: int) -> dict[str, Any]:
    """Box i had its full hand at dealt_at + i gaps, the dealer after the last box."""
    body: dict[str, Any] = {
        "boxes": [
            {
                "box": h.box,
                "dealt_at": format_time(dealt_at + DEAL_GAP_MS * i),
                "cards": [str(c) for c in h.cards],
                "folded": h.folded,
            }
            for i, h in enumerate(plan.hands)
        ]
    }
    if plan.dealer is not None:
        body["dealer"] = {
            "cards": [str(c) for c in plan.dealer],
            "dealt_at": format_time(dealt_at + DEAL_GAP_MS * len(plan.hands)),
        }
    return body
