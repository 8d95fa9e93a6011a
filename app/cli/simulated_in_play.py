"""What a simulated table does when told the progressive is not in play (docs/api.md,
"Is the progressive in play?"; rules 5.17, 5.18.2 c): it deals on without the jackpot
wagers there, and says so, until it is told it is back in play."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.cli.simulated_rounds import ZERO, RoundPlan

HEARTBEAT_S = 2.0  # how often a simulated table asks (its heartbeat)


@dataclass(frozen=True, slots=True)
class Told:
    """What the table was last told: in play, or which boxes are not (None: every box)."""

    in_play: bool = True
    boxes: frozenset[int] = frozenset()
    reason: str | None = None

    @classmethod
    def of(cls, status: Mapping[str, Any]) -> Told:
        in_play = bool(status.get("in_play", True))
        boxes = frozenset(int(b) for b in status.get("suspended_boxes") or ())
        reason = status.get("reason")
        return cls(in_play, boxes, None if reason is None else str(reason))

    @property
    def all_in(self) -> bool:
        return self.in_play and not self.boxes

    def out(self, box: int) -> bool:
        return not self.in_play or box in self.boxes

    def line(self, table: str) -> str:
        if self.all_in:
            return f"{table} progressive back in play: jackpot wagers taken again"
        where = "" if not self.in_play else f" on box {', '.join(map(str, sorted(self.boxes)))}"
        return f"{table} progressive not in play{where} ({self.reason}): no jackpot wagers there"


def honoured(plan: RoundPlan, told: Told) -> RoundPlan:
    """The round without the jackpot wagers where they are not in play; a box left with
    neither ante nor wager is not played (nor dealt)."""
    if told.all_in:
        return plan
    bets = tuple(
        replace(b, jackpot=ZERO, jackpot_dealer=ZERO) if told.out(b.box) else b for b in plan.bets
    )
    played = {b.box for b in bets if b.ante or b.jackpot or b.jackpot_dealer}
    return replace(
        plan,
        bets=tuple(b for b in bets if b.box in played),
        hands=tuple(h for h in plan.hands if h.box in played),
    )
