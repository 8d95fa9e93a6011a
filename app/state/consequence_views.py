"""What a waiting change would do if approved now (docs/api.md "Dual control"): each open
proposal's `consequence`, from the meter as it stands (every pending event counted, as
the floor shows it) by the rules that apply the change (jackpot/consequences.py)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from app.state.entries.operators import CorrectChange, ResetChange, SeedChange, change_of
from app.state.shape import FloorData
from jackpot.consequences import (
    Consequence,
    MeterNow,
    of_adjust,
    of_hand_paid,
    of_reset,
    of_seed,
    of_void_round,
)
from jackpot.money import format_money

NAMES = {"value_before": "value_now", "reserve_before": "reserve_now"}


def consequence(service: FloorData, change: dict[str, Any]) -> dict[str, Any] | None:
    """The figures, money as text; None when the meter or the round is no longer known,
    or for any other change than a seed, a reset or a correction."""
    typed = change_of(change, "change")
    if not isinstance(typed, SeedChange | ResetChange | CorrectChange):
        return None
    floor = service.floor
    link = floor.links.get(typed.link)
    if link is None:
        return None
    index = next((i for i, m in enumerate(link.config.meters) if m.id == typed.meter), None)
    if index is None:
        return None
    value, reserve = link.provisional()[index]
    meter = link.meters[index]
    now = MeterNow(value, reserve, meter.seed, meter.next_seed)
    if isinstance(typed, SeedChange):
        figures: Consequence | None = of_seed(now, typed.seed)
    elif isinstance(typed, ResetChange):
        figures = of_reset(now)
    elif typed.correction == "adjust":
        figures = of_adjust(now, typed.amount)
    elif typed.correction == "hand_paid":
        figures = of_hand_paid(now, typed.amount, reset=typed.reset)
    else:
        figures = _void_round(service, now, index, typed.table, typed.round)
    if figures is None:
        return None
    return {NAMES.get(k, k): format_money(v) for k, v in asdict(figures).items()}


def _void_round(
    service: FloorData, now: MeterNow, index: int, table: str | None, round_id: str | None
) -> Consequence | None:
    """The round's contributions to this meter not yet taken back (docs/design.md "Voids")."""
    rnd = service.floor.rounds.get((table or "", round_id or ""))
    if rnd is None:
        return None
    live = [b.contributions[index] for b in rnd.boxes.values() if b.contributions and not b.voided]
    return of_void_round(now, sum(m for m, _ in live), sum(r for _, r in live))


def with_consequence(
    service: FloorData, proposal: dict[str, Any], view: dict[str, Any]
) -> dict[str, Any]:
    """A proposal's view, with its `consequence` while it waits for a decision."""
    if proposal["state"] != "proposed":
        return view
    return {**view, "consequence": consequence(service, proposal["change"])}
