"""Why a meter award is still pending: the open rounds that hold it (docs/design.md "The
watermark"). An award at t waits for every open round on its link that closed at or
before t, until that round's outcome or void, or until it turns stale at closed_at +
round_timeout, whichever comes first; and for t + hold in any case."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.config import Timing
from jackpot.link import Link


@dataclass(frozen=True, slots=True, order=True)
class Hold:
    """An open round holding awards: `ends_by` is the latest its hold can last (it turns
    stale then and stops holding)."""

    open_since: int  # the round's closed_at: bets closed, no outcome or void since
    table: str
    round: str
    ends_by: int


def holding(link: Link, effective_at: int, now: int, timing: Timing) -> list[Hold]:
    """The open rounds that hold an award placed at `effective_at`, oldest first: closed
    at or before it and not stale at `now` (jackpot/link.py `watermark_at`)."""
    order = link.order()
    if now >= order.flagged_at:  # the rounds taken out of the order are stale at `now`
        found = [(at, (t, r)) for at, t, r in order.upto(effective_at)]
    else:
        found = [(at, key) for key, at in link.open_rounds.items() if at <= effective_at]
    return sorted(
        Hold(at, table, round_id, at + timing.round_timeout_ms)
        for at, (table, round_id) in found
        if now - at <= timing.round_timeout_ms
    )


def final_by(effective_at: int, holds: list[Hold], timing: Timing) -> int:
    """The latest server time the award can still be pending: its hold, and every round
    holding it turning stale."""
    return max([effective_at + timing.hold_ms, *(h.ends_by for h in holds)])
