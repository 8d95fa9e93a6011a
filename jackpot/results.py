"""What applying a command to the floor answers: one result type per kind of command."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.records import (
    AwardRecord,
    CorrectionRecord,
    ResetRecord,
    RoundRecord,
    SeedChangeRecord,
)
from jackpot.transfers import TransferRecord


@dataclass(frozen=True, slots=True)
class BetsResult:
    round: RoundRecord


@dataclass(frozen=True, slots=True)
class OutcomeResult:
    round: RoundRecord
    awards: tuple[AwardRecord, ...]


@dataclass(frozen=True, slots=True)
class VoidResult:
    round: RoundRecord
    reversed: tuple[tuple[int, int], ...]  # (box, contribution reversed: meter + reserve)
    cancelled: tuple[str, ...]  # pending meter awards voided (paid to nobody)


@dataclass(frozen=True, slots=True)
class FinalizeResult:
    finalized: tuple[AwardRecord | ResetRecord, ...]
    stale: tuple[RoundRecord, ...]  # rounds that just passed round_timeout
    pruned: tuple[tuple[str, str], ...] = ()  # settled rounds no longer kept in memory
    reversed: tuple[str, ...] = ()  # "table/round/box": voided contributions now reversed
    # Voided awards that took their amount at their place, paid to nobody (docs/design.md,
    # voids), and the awards whose amount just returned to the meter at the void's position.
    withheld: tuple[AwardRecord, ...] = ()
    returned: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ExpireResult:
    rounds: tuple[RoundRecord, ...]


@dataclass(frozen=True, slots=True)
class ArmResult:
    """A must-hit-by level armed: only its commitment is told (jackpot/mystery_levels.py)."""

    link: str
    meter: str
    commitment: str


Result = (
    ArmResult
    | BetsResult
    | OutcomeResult
    | VoidResult
    | FinalizeResult
    | ExpireResult
    | SeedChangeRecord
    | ResetRecord
    | CorrectionRecord
    | TransferRecord
)
