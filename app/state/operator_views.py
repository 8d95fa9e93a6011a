"""Operator answers: seed changes, resets, corrections and dual-control proposals."""

from __future__ import annotations

from typing import Any

from app.state.in_play_state import InPlayChanged, Retired, in_play_answer
from app.state.shape import FloorData
from app.state.timefmt import format_time
from app.state.transfers import Transferred
from app.state.views import reset_view
from jackpot.money import format_money
from jackpot.records import CorrectionRecord, ResetRecord, SeedChangeRecord


def operator_answer(service: FloorData, kind: str, result: object) -> dict[str, Any]:
    if isinstance(result, SeedChangeRecord):
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
    if isinstance(result, CorrectionRecord):
        return correction_view(result)
    if isinstance(result, InPlayChanged):
        return in_play_answer(result)
    if isinstance(result, Transferred | Retired):
        return result.answer()
    if isinstance(result, dict) and "change" in result:
        return proposal_view(result)
    raise TypeError(f"no answer for {kind}")


def correction_view(c: CorrectionRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": c.id,
        "kind": c.kind,
        "link": c.link,
        "meter": c.meter,
        "amount": format_money(c.amount),
        "value_before": format_money(c.value_before),
        "value_after": format_money(c.value_after),
        "at": format_time(c.at),
        "by": c.by,
        "reason": c.reason,
    }
    if c.table is not None:
        data["table"], data["round"] = c.table, c.round
    return data


def proposal_view(p: dict[str, Any]) -> dict[str, Any]:
    change = {k: v for k, v in p["change"].items()}
    for key in ("seed", "amount"):
        if isinstance(change.get(key), int):  # a transfer's may be "above_seed" or "all"
            change[key] = format_money(change[key])
    data = {
        "id": p["id"],
        "state": p["state"],
        "change": change,
        "proposed_by": p["by"],
        "proposed_at": format_time(p["at"]),
    }
    if "decided_by" in p:
        data["decided_by"] = p["decided_by"]
        data["decided_at"] = format_time(p["decided_at"])
    return data


def audit_view(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "at": format_time(record["at"])}
