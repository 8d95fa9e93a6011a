"""The audit log as the console filters and downloads it: by link, table and action."""

from __future__ import annotations

from typing import Any

from app.state.timefmt import format_time

# The CSV's columns: the record's own, its before/after spelled out (a proposal's
# before/after name the change instead of values).
AUDIT_COLUMNS = (
    "id", "at", "who", "action", "link", "meter", "value_before", "value_after",
    "seed_before", "seed_after", "amount", "round", "change", "approved_by", "reason",
    "reason_code",
)  # fmt: skip


def audit_matches(
    record: dict[str, Any], link: str | None, table: str | None, action: str | None
) -> bool:
    """`action` is the record's action (`correct:adjust`) or its first part (`correct`,
    `propose`); `table` the table of the round a correction names, or the table
    suspended or resumed."""
    if link is not None and record.get("link") != link:
        return False
    named = record.get("table") or str(record.get("round", "")).partition("/")[0]
    if table is not None and named != table:
        return False
    return action is None or action in (record["action"], record["action"].partition(":")[0])


def audit_csv_row(record: dict[str, Any]) -> dict[str, Any]:
    before, after = record.get("before") or {}, record.get("after") or {}
    return {
        **{k: record.get(k) for k in ("id", "who", "action", "link", "meter", "amount")},
        "at": format_time(record["at"]),
        "value_before": before.get("value"),
        "value_after": after.get("value"),
        "seed_before": before.get("seed"),
        "seed_after": after.get("seed"),
        "round": record.get("round"),
        "change": before.get("change") or after.get("change"),
        "approved_by": record.get("approved_by"),
        "reason": record.get("reason"),
        "reason_code": record.get("reason_code"),
    }
