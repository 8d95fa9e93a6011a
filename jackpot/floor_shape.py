"""What a command's handler reads and changes of the floor: its shape, so that the
handlers (contributions, outcomes, voids, the watermark, expiry, operator changes, must-hit
levels) depend on it and `jackpot/floor.py`, which lists them, is not imported back."""

from __future__ import annotations

from collections import deque
from typing import Protocol

from jackpot.config import Timing
from jackpot.link import Link
from jackpot.records import (
    AwardRecord,
    CorrectionRecord,
    Expiry,
    PastFixed,
    ResetRecord,
    RoundRecord,
    SeedChangeRecord,
)


class FloorShape(Protocol):
    timing: Timing
    retain_ms: int
    done: deque[tuple[int, str, str]]
    links: dict[str, Link]
    rounds: dict[tuple[str, str], RoundRecord]
    awards: dict[str, AwardRecord]
    resets: dict[str, ResetRecord]
    seed_changes: list[SeedChangeRecord]
    corrections: list[CorrectionRecord]
    past_fixed: list[PastFixed]
    past_meter: list[str]
    left_hits: dict[str, list[AwardRecord]]
    left_awards: dict[str, int]
    now: int
    expired: dict[str, int]
    table_flows: dict[str, list[int]]
    recent_expired: deque[Expiry]

    def link(self, link: str) -> Link: ...
    def round(self, table: str, round_id: str) -> RoundRecord: ...
    def meter_index(self, link: Link, meter: str) -> int: ...
    def opened(self, rnd: RoundRecord) -> None: ...
