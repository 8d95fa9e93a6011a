"""A table's round event made its entry: checked against the rules and the state, with
nothing changed (the kinds table applies it: app/state/kinds.py). The verifier re-derives
an outcome's claims with `prepare_outcome` too.
"""

from __future__ import annotations

from typing import cast

from app.state.commands import BetsCommand, OutcomeCommand, VoidCommand
from app.state.entries import (
    BetsEntry,
    Claim,
    Decision,
    Drawn,
    Fixed,
    OutcomeEntry,
    VoidEntry,
    entry_draws,
)
from app.state.floor_data import FloorData
from jackpot.commands import SEMANTICS
from jackpot.errors import ClockSkewError, OpenRoundsLimitError
from jackpot.floor import check_awaits_outcome
from jackpot.money import Money
from tables.bets import BetDecision, BetStatus, RandomSource, decide_bets, draw
from tables.cards import parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


def prepare_bets(
    state: FloorData,
    table: str,
    round_id: str,
    command: BetsCommand,
    now: int,
    rng: RandomSource,
) -> BetsEntry:
    settings = state.table(table).settings
    limit = state.config.max_open_rounds
    if state.floor.open_count(table, at_least=limit) >= limit:
        raise OpenRoundsLimitError(
            f"table {table!r} has {limit} open rounds (bets and no outcome or void), "
            f"the floor's max_open_rounds: post their outcomes or void them (a round "
            f"open longer than {state.config.timing.expire_after_ms} ms expires)"
        )
    # The entry's records are the command's boxes as they are; its decisions made once.
    decisions = decide_bets(settings, command.boxes, Decision)
    # Singapore Stud's Magic Card, Lucky Player and Lucky Dealer are drawn by the
    # server when bets close (4.3-4.5), from the caller's secure generator.
    draws = draw(settings, rng)
    return BetsEntry(
        now=now,
        table=table,
        round=round_id,
        closed_at=command.closed_at,
        boxes=list(command.boxes),
        decisions=decisions,
        draws=None if draws is None else Drawn.of(draws),
    )


def prepare_outcome(
    state: FloorData, table: str, round_id: str, command: OutcomeCommand, now: int
) -> OutcomeEntry:
    config = state.table(table)
    rnd = state.floor.round(table, round_id)
    check_awaits_outcome(rnd, state.config.timing)
    extras = state.extras[(table, round_id)]
    _check_dealt_at(state, command, max(now, state.floor.now))
    hands = [
        BoxHand(h.box, parse_hand(h.cards, ("boxes", i, "cards")), h.folded, h.dealt_at)
        for i, h in enumerate(command.boxes)
    ]
    dealer = None
    if command.dealer is not None:
        d = command.dealer
        dealer = DealerHand(parse_hand(d.cards, ("dealer", "cards")), d.dealt_at)
    decisions = [_decision(d, voided=rnd.boxes[d.box].voided) for d in extras.decisions]
    draws = None if extras.draws is None else entry_draws(extras.draws)
    claims = settle(config.settings, decisions, hands, dealer, draws)
    meter_claims = []
    fixed = []
    for c in claims:
        if isinstance(c, FixedClaim):
            fixed.append(Fixed(c.box, c.kind, c.hand, c.amount, c.for_box, c.target))
        else:
            meter_claims.append(Claim(c.box, c.target, c.hand, c.share, c.dealt_at))
    return OutcomeEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        boxes=list(command.boxes),
        dealer=command.dealer,
        claims=meter_claims,
        fixed=fixed,
    )


def _check_dealt_at(state: FloorData, command: OutcomeCommand, now: int) -> None:
    """docs/design.md: a time more than max_clock_skew ahead of the server's clock is
    refused: every box's dealt_at and the dealer's, not only a winning hand's."""
    skew = state.config.timing.max_clock_skew_ms
    dealer = command.dealer
    times: list[tuple[str, tuple[str | int, ...], int | None]] = [
        (f"box {h.box}", ("boxes", i, "dealt_at"), h.dealt_at) for i, h in enumerate(command.boxes)
    ]
    times.append(
        ("the dealer", ("dealer", "dealt_at"), None if dealer is None else dealer.dealt_at)
    )
    for who, loc, dealt_at in times:
        if dealt_at is not None and dealt_at > now + skew:
            raise ClockSkewError(
                f"{who}: dealt_at is {dealt_at - now} ms ahead of the server's clock "
                f"(max_clock_skew {skew} ms)",
                loc,
            )


def prepare_void(
    state: FloorData, table: str, round_id: str, command: VoidCommand, now: int
) -> VoidEntry:
    state.table(table)
    state.floor.round(table, round_id)
    return VoidEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        reason=command.reason,
        boxes=None if command.boxes is None else list(command.boxes),
    )


def _decision(d: Decision, *, voided: bool) -> BetDecision:
    """A bets decision as the state keeps it, for settling the outcome."""
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d.box, "none", Money(0), Money(0), "void", Money(0), d.player)
    status = cast(BetStatus, d.status)  # the rules' (decide_bets), as journaled
    return BetDecision(d.box, status, d.wager, d.dealer_wager, d.reason, d.ante, d.player)
