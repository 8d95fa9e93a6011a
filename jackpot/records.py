"""What the core remembers of rounds, awards and resets (read by the service, never written)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jackpot.commands import FixedAward
from jackpot.meter import Funding
from jackpot.money import Money
from jackpot.timeline import Event

OPEN, SETTLED, VOID = "open", "settled", "void"
# Open longer than expire_after with no outcome: out of the open set; a void still reverses it.
EXPIRED = "expired"
PENDING, FINAL = "pending", "final"


@dataclass(slots=True)
class BoxRecord:
    box: int
    wager: int
    dealer_wager: int
    # per meter of the link: (to_meter, to_reserve) as contributed, before any ceiling;
    # () when the box has no jackpot wager on a link
    contributions: tuple[tuple[int, int], ...]
    voided: bool = False

    @property
    def contribution(self) -> int:
        return sum(m for m, _ in self.contributions)

    @property
    def reserve(self) -> int:
        return sum(r for _, r in self.contributions)


@dataclass(slots=True)
class FixedRecord:
    award: FixedAward
    voided: bool = False


@dataclass(frozen=True, slots=True)
class PastFixed:
    """A fixed award of a round no longer kept in memory: it is listed with the others."""

    table: str
    round: str
    link: str | None
    award: FixedAward
    voided: bool


@dataclass(slots=True)
class RoundRecord:
    table: str
    round: str
    link: str | None
    closed_at: int  # as the table sent it
    effective_at: int  # where its contributions stand on the timeline (now, if late)
    received_at: int
    late: bool
    boxes: dict[int, BoxRecord]
    # The round's contributions, summed over its boxes, as one timeline event (they share
    # the instant and the table); None when no box has a jackpot wager on a link.
    event: Event | None
    state: str = OPEN
    stale: bool = False  # open longer than round_timeout: stopped holding others back
    outcome_at: int | None = None
    outcome_late: bool = False
    awards: list[str] = field(default_factory=list)
    fixed: list[FixedRecord] = field(default_factory=list)
    void_reason: str | None = None


@dataclass(slots=True)
class AwardRecord:
    """A meter award: pending until the watermark passes it, then final with its amount."""

    id: str
    link: str
    meter: str
    table: str
    round: str
    box: int
    target: str
    hand: str
    share: int
    dealt_at: int
    effective_at: int  # dealt_at, or the server time it arrived at when late
    late: bool
    tiebreak: int
    claimed_at: int
    event: Event
    state: str = PENDING
    meter_value: int | None = None  # the meter's value at the award's instant
    amount: int | None = None
    order: int | None = None  # place among the awards finalised together on the link
    sequence: int | None = None  # place among all the link's meter awards, ever
    finalized_at: int | None = None
    funding: Funding | None = None


@dataclass(slots=True)
class ResetRecord:
    """An operator reset: final, like an award, once the watermark passes it."""

    id: str
    link: str
    meter: str
    requested_at: int
    by: str
    reason: str
    event: Event
    state: str = PENDING
    value_before: int | None = None
    finalized_at: int | None = None
    funding: Funding | None = None


@dataclass(slots=True)
class SeedChangeRecord:
    link: str
    meter: str
    before: int
    after: int
    at: int
    by: str
    reason: str


@dataclass(slots=True)
class CorrectionRecord:
    id: str
    kind: str
    link: str
    meter: str
    amount: int
    value_before: int
    value_after: int
    at: int
    by: str
    reason: str
    table: str | None = None
    round: str | None = None


@dataclass(frozen=True, slots=True)
class Expiry:
    """One round taken out of the open set by an expire entry, as the report lists it."""

    table: str
    round: str
    link: str | None
    closed_at: int
    expired_at: int
    contribution: Money  # what its boxes put on the meter (it stays there) ...
    reserve: Money  # ... and in the reserve
