"""Operator answers: seed changes and resets as the operators' API shows them."""

from __future__ import annotations

from typing import Any

from app.service import Service
from app.timefmt import format_time
from app.views import reset_view
from jackpot.money import format_money
from jackpot.records import ResetRecord, SeedChange


def operator_answer(service: Service, kind: str, result: object) -> dict[str, Any]:
    if isinstance(result, SeedChange):
        return {
            "link": result.link,
            "meter": result.meter,
            "seed_before": format_money(result.before),
            "seed": format_money(result.after),
            "effective": "at the next reset",
            "by": result.by,
            "reason": result.reason,
            "at": format_time(result.at),
        }
    if isinstance(result, ResetRecord):
        return reset_view(result)
    raise TypeError(f"no answer for {kind}")
