"""The application state: the jackpot Floor plus what the tables tell us, driven by entries.

Every accepted request becomes one journal entry (app/state/entries/). `prepare` checks a
request against the rules and the state and builds its entry without changing anything;
`apply` applies an entry (by its kind: app/state/kinds.py). The writer calls both;
recovery only `apply`, so a replayed entry never re-derives a result from configuration
that may have changed since (the draws, accepted wagers and claims are in the entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import msgspec

from app.state.entries import (
    BetsEntry,
    Claim,
    Decision,
    Drawn,
    Entry,
    Fixed,
    OutcomeEntry,
    PostedBox,
    PostedDealer,
    PostedHand,
    VoidEntry,
    entry_draws,
    entry_from_dict,
)
from app.state.entries import idempotency_key as idempotency_key
from app.state.floor_data import FloorConfig as FloorConfig
from app.state.floor_data import RoundExtras as RoundExtras
from app.state.floor_data import TableConfig as TableConfig
from app.state.kinds import KINDS
from jackpot.commands import SEMANTICS
from jackpot.errors import ClockSkewError, OpenRoundsLimitError, UnknownError
from jackpot.floor import Floor, Result, check_awaits_outcome
from jackpot.money import Money
from tables.bets import BetDecision, BetStatus, RandomSource, decide_bets, draw
from tables.cards import parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


@dataclass(slots=True)
class Service:
    config: FloorConfig
    floor: Floor = field(init=False)
    extras: dict[tuple[str, str], RoundExtras] = field(default_factory=dict)
    # (table|round|kind) -> sha256 of the body, for the rounds in memory; the journal's
    # unique key answers for older ones.
    idem: dict[str, str] = field(default_factory=dict)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    audit: list[dict[str, Any]] = field(default_factory=list)
    # Meter awards made final by a finalize entry that is applied but not yet committed
    # (the writer applies a group while the one before is being committed): answers and
    # views show them pending until it is, so that no table is told a final amount that a
    # failed commit would take back. Kept by the writer; empty in a rebuilt service.
    uncommitted: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.floor = Floor(self.config.links, self.config.timing, self.config.retain_ms)

    def table(self, table: str) -> TableConfig:
        try:
            return self.config.tables[table]
        except KeyError:
            raise UnknownError(f"no table {table!r}", ("table",)) from None

    # -- prepare: check a request, build its entry; changes nothing --------------------

    def prepare_bets(
        self, table: str, round_id: str, body: dict[str, Any], now: int, rng: RandomSource
    ) -> BetsEntry:
        settings = self.table(table).settings
        limit = self.config.max_open_rounds
        if self.floor.open_count(table, at_least=limit) >= limit:
            raise OpenRoundsLimitError(
                f"table {table!r} has {limit} open rounds (bets and no outcome or void), "
                f"the floor's max_open_rounds: post their outcomes or void them (a round "
                f"open longer than {self.config.timing.expire_after_ms} ms expires)"
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
        self, table: str, round_id: str, body: dict[str, Any], now: int
    ) -> OutcomeEntry:
        config = self.table(table)
        rnd = self.floor.round(table, round_id)
        check_awaits_outcome(rnd, self.config.timing)
        extras = self.extras[(table, round_id)]
        self._check_dealt_at(body, max(now, self.floor.now))
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

    def _check_dealt_at(self, body: dict[str, Any], now: int) -> None:
        """docs/design.md: a time more than max_clock_skew ahead of the server's clock is
        refused: every box's dealt_at and the dealer's, not only a winning hand's."""
        skew = self.config.timing.max_clock_skew_ms
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

    def prepare_void(self, table: str, round_id: str, body: dict[str, Any], now: int) -> VoidEntry:
        self.table(table)
        self.floor.round(table, round_id)
        boxes = body.get("boxes")
        return VoidEntry(
            version=SEMANTICS,
            now=now,
            table=table,
            round=round_id,
            reason=body["reason"],
            boxes=None if boxes is None else list(boxes),
        )

    # -- apply: the only way state changes (live and on replay) ------------------------

    def apply(self, entry: Entry | Mapping[str, Any]) -> Result:
        """Apply one entry (a journal entry's JSON object is decoded first: EntryError if
        it is not one). Atomic: a refused entry (JackpotError) changes nothing."""
        typed = entry if isinstance(entry, msgspec.Struct) else entry_from_dict(entry)
        return KINDS[typed.kind].apply(self, typed)


class _Hands(msgspec.Struct, frozen=True):
    boxes: list[PostedHand]
    dealer: PostedDealer | None


def _decision(d: Decision, *, voided: bool) -> BetDecision:
    """A bets decision as the state keeps it, for settling the outcome."""
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d.box, "none", Money(0), Money(0), "void", Money(0), d.player)
    status = cast(BetStatus, d.status)  # the rules' (decide_bets), as journaled
    return BetDecision(d.box, status, d.wager, d.dealer_wager, d.reason, d.ante, d.player)
