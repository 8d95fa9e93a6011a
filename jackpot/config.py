"""A floor's jackpot configuration: links, meters and the timing bounds of the watermark."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.money import Money, Rate


@dataclass(frozen=True, slots=True)
class MeterConfig:
    id: str
    seed: Money
    rate: Rate  # share of each accepted jackpot wager added to the meter
    reserve_rate: Rate  # share put aside to fund the next reset
    ceiling: Money | None = None  # beyond it, contributions go to the reserve
    name: str = ""
    # A must-hit-by level (jackpot/mystery_levels.py): won when the meter reaches a
    # trigger drawn in [must_hit_from, must_hit_by); must_hit_from None: the seed.
    must_hit_by: Money | None = None
    must_hit_from: Money | None = None
    # Where contributions beyond the ceiling go: "reserve", "house", or the id of another
    # meter of the same link (jackpot/link.py).
    overflow_to: str = "reserve"


@dataclass(frozen=True, slots=True)
class LinkConfig:
    id: str
    meters: tuple[MeterConfig, ...]
    name: str = ""


@dataclass(frozen=True, slots=True)
class Timing:
    """docs/design.md "When an award is final": all in milliseconds."""

    hold_ms: int = 2_000
    round_timeout_ms: int = 180_000
    max_clock_skew_ms: int = 2_000
    # A round open this long with no outcome or void is expired (jackpot/expiry.py): the
    # floor file's expire_after (a number of round timeouts) times round_timeout_ms.
    expire_after_ms: int = 1_800_000
