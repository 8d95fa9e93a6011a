"""The period's reductions for the reconciliation: every reset and lowering correction,
with its listed reason (jackpot/reduction_reasons.py), from the audit log the journal
rebuilds."""

from __future__ import annotations

from typing import Any

from app.state.timefmt import format_time
from jackpot.money import parse_money
from jackpot.reduction_reasons import lowers


def _lowers(record: dict[str, Any]) -> bool:
    kind, _, correction = str(record["action"]).partition(":")
    amount = record.get("amount")
    signed = -parse_money(amount[1:]) if amount and amount.startswith("-") else 0
    return lowers(kind, correction or None, signed)


def reductions(audit: list[dict[str, Any]], start: int, end: int) -> list[dict[str, Any]]:
    """Applied in [start, end) (not proposed: a proposal lowers nothing until approved).
    `reason_code` is null for a change journaled before codes were required."""
    return [
        {
            "at": format_time(record["at"]),
            "who": record["who"],
            "action": record["action"],
            "link": record["link"],
            "meter": record["meter"],
            "reason_code": record.get("reason_code"),
            "reason": record["reason"],
            **({"amount": record["amount"]} if "amount" in record else {}),
            **({"approved_by": record["approved_by"]} if "approved_by" in record else {}),
        }
        for record in audit
        if start <= record["at"] < end and _lowers(record)
    ]
