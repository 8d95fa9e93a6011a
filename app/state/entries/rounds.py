"""The entries of a table's rounds (bets, outcome, void) and of the writer's timer."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from msgspec import UNSET, Meta, UnsetType

from app.state.entries.base import Base, Part, Version, version_of
from jackpot.commands import (
    CloseBets,
    Expire,
    Finalize,
    FixedAward,
    MeterClaim,
    RecordOutcome,
    VoidRound,
)
from jackpot.money import Money, Rate
from tables.bets import BetDecision, Draws
from tables.cards import parse_card

# -- bets ----------------------------------------------------------------------------


class PostedBox(Part, frozen=True):
    """A box's bets as posted (money in micro-units)."""

    box: int
    ante: Money
    jackpot: Money
    jackpot_dealer: Money
    player: str | None


class Decision(Part, frozen=True):
    """What became of a box's jackpot wager (3.4, 3.8, 5.4): derived by the rules."""

    box: int
    status: str
    wager: Money
    dealer_wager: Money
    reason: str | None
    ante: Money
    player: str | None

    @classmethod
    def of(cls, d: BetDecision) -> Decision:
        return cls(d.box, d.status, d.wager, d.dealer_wager, d.reason, d.ante, d.player)


class Drawn(Part, frozen=True):
    """Singapore Stud's draws when bets close (4.3-4.5): random, checked to be possible."""

    magic_card: str
    lucky_box: int
    lucky_dealer: bool

    @classmethod
    def of(cls, draws: Draws) -> Drawn:
        return cls(str(draws.magic_card), draws.lucky_box, draws.lucky_dealer)


def entry_draws(drawn: Drawn) -> Draws:
    """A round's draws as the rules take them (the entry's `draws`, as the state keeps it)."""
    return Draws(parse_card(drawn.magic_card), drawn.lucky_box, drawn.lucky_dealer)


class BetsEntry(Base, tag="bets", kw_only=True, frozen=True):
    kind: ClassVar[str] = "bets"
    table: str
    round: str
    closed_at: int
    boxes: list[PostedBox]
    decisions: list[Decision]
    draws: Drawn | None

    def command(self, link: str | None) -> CloseBets:
        # The decisions are the command's wagers as they are (box, wager, dealer_wager:
        # Money, integers in the journal's JSON); a returned or no wager is 0.
        wagers = tuple(self.decisions)
        return CloseBets(self.table, self.round, link, self.closed_at, self.now, wagers)

    def body(self) -> dict[str, Any]:
        return {"closed_at": self.closed_at, "boxes": msgspec.to_builtins(self.boxes)}


# -- outcome -------------------------------------------------------------------------


class PostedHand(Part, frozen=True):
    box: int
    dealt_at: int
    cards: list[str]
    folded: bool


class PostedDealer(Part, frozen=True):
    cards: list[str]
    dealt_at: int | None


class Claim(Part, frozen=True):
    """A meter award the hand wins: a share (/10,000) of the meter its pay-table row names,
    absent (unset) when the row names none: the link's first meter."""

    box: int
    target: str
    hand: str
    share: int
    dealt_at: int
    meter: str | UnsetType = UNSET


class Fixed(Part, frozen=True):
    """A fixed award: final at once, paid by the table, not from a meter."""

    box: int
    kind: str
    hand: str | None
    amount: int
    for_box: int | None
    target: str


def _meter_of(meter: str | UnsetType) -> str | None:
    return None if isinstance(meter, UnsetType) else meter


class OutcomeEntry(Base, tag="outcome", kw_only=True, frozen=True):
    kind: ClassVar[str] = "outcome"
    table: str
    round: str
    boxes: list[PostedHand]
    dealer: PostedDealer | None
    claims: list[Claim]
    fixed: list[Fixed]
    version: Version | UnsetType = UNSET

    def command(self) -> RecordOutcome:
        claims = tuple(
            MeterClaim(c.box, c.target, c.hand, Rate(c.share), c.dealt_at, _meter_of(c.meter))
            for c in self.claims
        )
        # When the hand that won a fixed award was dealt: the dealer's for a dealer-hand
        # award, the hitting box's for an envy bonus (4.7), else the box's own; the
        # entry's server time if the entry has none (it always has).
        dealt = {b.box: b.dealt_at for b in self.boxes}
        dealer = None if self.dealer is None else self.dealer.dealt_at

        def when(f: Fixed) -> int:
            at = (
                dealer
                if f.target == "dealer"
                else dealt.get(f.box if f.for_box is None else f.for_box)
            )
            return self.now if at is None else at

        fixed = tuple(
            FixedAward(f.box, f.kind, f.hand, Money(f.amount), f.for_box, f.target, when(f))
            for f in self.fixed
        )
        return RecordOutcome(
            self.table, self.round, self.now, claims, fixed, version_of(self.version)
        )

    def body(self) -> dict[str, Any]:
        return {
            "boxes": msgspec.to_builtins(self.boxes),
            "dealer": msgspec.to_builtins(self.dealer),
        }


# -- void, and the writer's timer: finalize, expire ----------------------------------


class VoidEntry(Base, tag="void", kw_only=True, frozen=True):
    kind: ClassVar[str] = "void"
    table: str
    round: str
    reason: str
    boxes: list[int] | None
    version: Version | UnsetType = UNSET

    def command(self) -> VoidRound:
        boxes = None if self.boxes is None else tuple(self.boxes)
        return VoidRound(
            self.table, self.round, self.now, self.reason, boxes, version_of(self.version)
        )

    def body(self) -> dict[str, Any]:
        return {"reason": self.reason, "boxes": self.boxes}


class FinalizeEntry(Base, tag="finalize", kw_only=True, frozen=True):
    kind: ClassVar[str] = "finalize"

    def command(self) -> Finalize:
        return Finalize(self.now)


class ExpireEntry(Base, tag="expire", kw_only=True, frozen=True):
    kind: ClassVar[str] = "expire"
    rounds: list[Annotated[list[str], Meta(min_length=2, max_length=2)]]  # [table, round]

    def command(self) -> Expire:
        return Expire(self.now, tuple((table, round_id) for table, round_id in self.rounds))
