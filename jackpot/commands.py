"""The commands the core applies, each with the server time it was accepted at (`now`).

A command is also the journal entry: replaying the same commands in the same order
gives the same state, because every time the core uses (event times, `now`) and every
random draw is inside the command. The core never reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from jackpot.money import Money, Rate

# The rules an entry is replayed by: entries of the first version have no `version`
# (1) and replay as they were applied then (docs/journal.md, "Versions"); 2: a round with
# late bets keeps event time for an on-time win, a void takes effect at the current position;
# 3: a seed, or an adjust, beyond the meter's ceiling is refused (before, applied).
SEMANTICS = 3

# A transfer's amount (jackpot/transfers.py): money, what the value holds above the seed,
# or the whole value.
Amount = Money | Literal["above_seed", "all"]


@dataclass(frozen=True, slots=True)
class TransferMoney:
    """Money moved between two meters (jackpot/transfers.py): `below_seed` is the app's
    word that the source's link is out of play (a journaled suspension), so that a replay
    decides alike."""

    link: str
    meter: str
    to_link: str
    to_meter: str
    amount: Amount
    include_reserve: bool
    below_seed: bool
    now: int


CEILING_BOUND = 3  # the first version whose seeds and adjusts the ceiling bounds


@dataclass(frozen=True, slots=True)
class BoxWager:
    """A box's accepted jackpot wagers (the service has already applied 5.4 and 3.5)."""

    box: int
    wager: Money  # player-hand jackpot wager (0: none)
    dealer_wager: Money = Money(0)  # singapore_stud dealer-hand wager (1.13: contributes too)


class Wager(Protocol):
    """A box's accepted jackpot wagers: a BoxWager, or any record with its fields (the
    service's journal entry has them)."""

    @property
    def box(self) -> int: ...
    @property
    def wager(self) -> Money: ...
    @property
    def dealer_wager(self) -> Money: ...


@dataclass(frozen=True, slots=True)
class CloseBets:
    table: str
    round: str
    link: str | None  # None: a table with no meter (western_stud)
    closed_at: int  # table clock, epoch ms: contributions take effect here
    now: int
    wagers: tuple[Wager, ...]


@dataclass(frozen=True, slots=True)
class MeterClaim:
    """A hand that wins a share of a meter, priced at its dealt_at (4.5.2 / 4.9.1)."""

    box: int
    target: str  # "player" or "dealer" (singapore_stud dealer-hand wagers)
    hand: str
    share: Rate
    dealt_at: int
    meter: str | None = None  # None: the link's first meter


@dataclass(frozen=True, slots=True)
class FixedAward:
    """A fixed amount or odds award: final at once, paid by the table, not from a meter."""

    box: int
    kind: str  # fixed, envy, magic_card, lucky_player, lucky_dealer, river
    hand: str | None
    amount: Money
    for_box: int | None = None
    target: str = "player"  # singapore_stud: "dealer" for a dealer-hand wager's award
    # When the hand that won it was dealt (an envy bonus: the hitting hand's, 4.7; a
    # dealer-hand award: the dealer's): for listing awards by time. Not a pay rule.
    dealt_at: int | None = None


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    table: str
    round: str
    now: int
    claims: tuple[MeterClaim, ...]
    fixed: tuple[FixedAward, ...] = ()
    version: int = SEMANTICS


@dataclass(frozen=True, slots=True)
class VoidRound:
    table: str
    round: str
    now: int
    reason: str
    boxes: tuple[int, ...] | None = None  # None: the whole round
    version: int = SEMANTICS


@dataclass(frozen=True, slots=True)
class Finalize:
    """Advance the watermark to `now`: awards it passes become final, in event order."""

    now: int


@dataclass(frozen=True, slots=True)
class Expire:
    """Rounds open longer than expire_after with no outcome or void (the writer's timer
    picks them, by their received_at): they leave the open set, their contributions stay."""

    now: int
    rounds: tuple[tuple[str, str], ...]  # (table, round)


@dataclass(frozen=True, slots=True)
class SetSeed:
    link: str
    meter: str
    seed: Money
    now: int
    by: str
    reason: str
    version: int = SEMANTICS


@dataclass(frozen=True, slots=True)
class ResetMeter:
    """An operator's reset: takes its place in the timeline at `now`, like an award."""

    link: str
    meter: str
    now: int
    by: str
    reason: str


@dataclass(frozen=True, slots=True)
class Correct:
    """An audited correction, for what the rules leave to the House (5.24).

    kind "adjust": add `amount` (signed) to the meter's value, the house giving or
    taking it; "hand_paid": a jackpot the table paid by hand at the last registered
    value while the system was down (5.18.1): `amount` is what was actually paid, the
    meter pays it and, with `reset`, returns to its seed; "void_round": void a round
    whose meter award is already final (its contributions reversed, its awards stand).
    """

    kind: str
    link: str
    meter: str
    now: int
    by: str
    reason: str
    amount: Money = Money(0)
    reset: bool = True
    table: str | None = None
    round: str | None = None
    version: int = SEMANTICS


@dataclass(frozen=True, slots=True)
class ArmTrigger:
    """A must-hit-by level's trigger, drawn by the writer (jackpot/mystery_levels.py)."""

    link: str
    meter: str
    now: int
    trigger: Money
    nonce: str
    # The level's previous trigger and nonce, revealed (its last hit's): checked.
    revealed: tuple[Money, str] | None = None


Command = (
    CloseBets | RecordOutcome | VoidRound | Finalize | Expire | SetSeed | ResetMeter | Correct
    | ArmTrigger | TransferMoney
)  # fmt: skip
