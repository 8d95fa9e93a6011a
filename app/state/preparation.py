"""Preparation: a request checked against the rules and the state, and its entry built.

Each function reads the state (`FloorData`) and changes nothing; the writer journals the
entry and applies it (app/state/kinds.py). A replay applies entries only, so nothing here
runs again on configuration that may since have changed.
"""

from __future__ import annotations

from typing import Any, cast

import msgspec

from app.state.entries import (
    BetsEntry,
    Claim,
    Decision,
    Drawn,
    Fixed,
    OutcomeEntry,
    PostedBox,
    PostedDealer,
    PostedHand,
    VoidEntry,
    entry_draws,
)
from app.state.shape import FloorData
from jackpot.commands import SEMANTICS
from jackpot.errors import ClockSkewError, OpenRoundsLimitError
from jackpot.money import Money
from jackpot.outcomes import check_awaits_outcome
from tables.bets import BetDecision, BetStatus, RandomSource, decide_bets, draw
from tables.cards import parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


def prepare_bets(
    state: FloorData, table: str, round_id: str, body: dict[str, Any], now: int, rng: RandomSource
) -> BetsEntry:
    settings = state.table(table).settings
    limit = state.config.max_open_rounds
    if state.floor.open_count(table, at_least=limit) >= limit:
        raise OpenRoundsLimitError(
            f"table {table!r} has {limit} open rounds (bets and no outcome or void), "
            f"the floor's max_open_rounds: post their outcomes or void them (a round "
            f"open longer than {state.config.timing.expire_after_ms} ms expires)"
        )
    # The amounts are Money already (BetsRequest.domain parsed them). The entry's
    # records are checked as they are, and its decisions made once.
    boxes = [PostedBox(**b) for b in body["boxes"]]
    decisions = decide_bets(settings, boxes, Decision)
    # Singapore Stud's Magic Card, Lucky Player and Lucky Dealer are drawn by the
    # server when bets close (4.3-4.5), from the caller's secure generator.
    draws = draw(settings, rng)
    return BetsEntry(
        now=now,
        table=table,
        round=round_id,
        closed_at=body["closed_at"],
        boxes=boxes,
        decisions=decisions,
        draws=None if draws is None else Drawn.of(draws),
    )


def prepare_outcome(
    state: FloorData, table: str, round_id: str, body: dict[str, Any], now: int
) -> OutcomeEntry:
    config = state.table(table)
    rnd = state.floor.round(table, round_id)
    check_awaits_outcome(rnd, state.config.timing)
    extras = state.extras[(table, round_id)]
    _check_dealt_at(state, body, max(now, state.floor.now))
    hands = [
        BoxHand(
            h["box"],
            parse_hand(h["cards"], ("boxes", i, "cards")),
            h["folded"],
            h["dealt_at"],
        )
        for i, h in enumerate(body["boxes"])
    ]
    dealer = None
    if body.get("dealer") is not None:
        d = body["dealer"]
        dealer = DealerHand(parse_hand(d["cards"], ("dealer", "cards")), d.get("dealt_at"))
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
    # The posted hands as the entry records them (validated by the route already).
    posted = msgspec.convert({"boxes": body["boxes"], "dealer": body.get("dealer")}, _Hands)
    return OutcomeEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        boxes=posted.boxes,
        dealer=posted.dealer,
        claims=meter_claims,
        fixed=fixed,
    )


def _check_dealt_at(state: FloorData, body: dict[str, Any], now: int) -> None:
    """docs/design.md: a time more than max_clock_skew ahead of the server's clock is
    refused: every box's dealt_at and the dealer's, not only a winning hand's."""
    skew = state.config.timing.max_clock_skew_ms
    dealer = body.get("dealer") or {}
    times: list[tuple[str, tuple[str | int, ...], int | None]] = [
        (f"box {h['box']}", ("boxes", i, "dealt_at"), h["dealt_at"])
        for i, h in enumerate(body["boxes"])
    ]
    times.append(("the dealer", ("dealer", "dealt_at"), dealer.get("dealt_at")))
    for who, loc, dealt_at in times:
        if dealt_at is not None and dealt_at > now + skew:
            raise ClockSkewError(
                f"{who}: dealt_at is {dealt_at - now} ms ahead of the server's clock "
                f"(max_clock_skew {skew} ms)",
                loc,
            )


def prepare_void(
    state: FloorData, table: str, round_id: str, body: dict[str, Any], now: int
) -> VoidEntry:
    state.table(table)
    state.floor.round(table, round_id)
    boxes = body.get("boxes")
    return VoidEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        reason=body["reason"],
        boxes=None if boxes is None else list(boxes),
    )


class _Hands(msgspec.Struct, frozen=True):
    boxes: list[PostedHand]
    dealer: PostedDealer | None


def _decision(d: Decision, *, voided: bool) -> BetDecision:
    """A bets decision as the state keeps it, for settling the outcome."""
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d.box, "none", Money(0), Money(0), "void", Money(0), d.player)
    status = cast(BetStatus, d.status)  # the rules' (decide_bets), as journaled
    return BetDecision(d.box, status, d.wager, d.dealer_wager, d.reason, d.ante, d.player)
