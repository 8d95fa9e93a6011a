"""A reset or a lowering correction names a listed reason (jackpot/reduction_reasons.py)."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from app.state.commands import Command, CorrectCommand, ProposeCommand, ResetCommand
from jackpot.reduction_reasons import check_reason_code, lowers


def check_reduction(command: Command | None) -> None:
    """When a change is requested or proposed: never on replay, so that the entries of
    servers that kept no code still apply (their audit records have none)."""
    change = command.change if isinstance(command, ProposeCommand) else command
    if isinstance(change, ResetCommand):
        required = lowers("reset")
    elif isinstance(change, CorrectCommand):
        required = lowers("correct", change.correction, change.amount)
    else:
        return
    check_reason_code(
        None if change.reason_code is UNSET else change.reason_code, required=required
    )


def with_reason_code(record: dict[str, Any], change: Any) -> dict[str, Any]:
    """The audit record with the change's code, when it has one (older ones have none)."""
    code = getattr(change, "reason_code", UNSET)
    if code is not UNSET:
        record["reason_code"] = code
    return record
