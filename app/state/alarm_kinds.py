"""The `acknowledge` kind: a supervisor has seen one of the console's alarms. It is a
journal entry, not only a line in a log, because the audit log is the journal's and who
knew of a held jackpot or a silent table, and when, is what a regulator asks after an
incident; it changes no money, no parameter and no one's rights."""

from __future__ import annotations

from typing import Any

from app.state.entries import AcknowledgeEntry, Entry
from app.state.shape import FloorData
from app.state.timefmt import format_time

ACTION = "acknowledge"
SHOWN = 500  # the floor view lists this many of the latest acknowledgements


def acknowledge(service: FloorData, entry: AcknowledgeEntry) -> Any:
    """The audit record (as `_propose` and `_reject`, the result is not a core record)."""
    record = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by, "action": ACTION,
        "link": None, "meter": None, "before": None, "after": {"alarm": entry.alarm},
        "reason": entry.note,
    }  # fmt: skip
    service.audit.append(record)
    return record


def acknowledge_answer(service: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    assert isinstance(entry, AcknowledgeEntry)
    return {
        "alarm": entry.alarm,
        "by": entry.by,
        "at": format_time(entry.now),
        "note": entry.note,
        "audit": result["id"],
    }


def acknowledgements(service: FloorData) -> list[dict[str, Any]]:
    """The latest acknowledgement of each alarm, newest first (at most SHOWN)."""
    seen: dict[str, dict[str, Any]] = {}
    for record in reversed(service.audit):
        if record["action"] != ACTION:
            continue
        alarm = record["after"]["alarm"]
        if alarm not in seen:
            seen[alarm] = {"alarm": alarm, "by": record["who"], "at": format_time(record["at"])}
            if len(seen) == SHOWN:
                break
    return list(seen.values())
