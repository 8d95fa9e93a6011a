"""Operators' changes in the state: the audit log and dual control (a second supervisor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from app.state.entry_commands import entry_command
from jackpot.commands import Correct, SetSeed
from jackpot.errors import StateConflictError, UnknownError
from jackpot.floor import Floor, Result
from jackpot.money import format_money
from jackpot.operator_changes import check_change


class Service(Protocol):
    """What the audit log and dual control need of the state (app.state.floor_state)."""

    floor: Floor
    audit: list[dict[str, Any]]
    proposals: dict[str, dict[str, Any]]

    def apply(self, entry: Mapping[str, Any]) -> Result: ...


OPERATOR_KINDS = ("seed", "reset", "correct")


def _no_table(table: str) -> str | None:
    return None  # an operator change names no table's link


def meter_before(service: Service, entry: Mapping[str, Any]) -> dict[str, Any]:
    link = service.floor.link(entry["link"])
    index = service.floor.meter_index(link, entry["meter"])
    meter = link.meters[index]
    return {
        "value": format_money(link.display_values()[index]),
        "seed": format_money(meter.next_seed if meter.next_seed is not None else meter.seed),
    }


def record_audit(
    service: Service, entry: Mapping[str, Any], before: dict[str, Any] | None, result: object
) -> None:
    """Who, when, what, before, after, why: every operator action, from the journal."""
    assert before is not None
    link = service.floor.link(entry["link"])
    index = service.floor.meter_index(link, entry["meter"])
    meter = link.meters[index]
    after = {
        "value": format_money(link.display_values()[index]),
        "seed": format_money(meter.next_seed if meter.next_seed is not None else meter.seed),
    }
    record: dict[str, Any] = {
        "id": len(service.audit) + 1,
        "at": entry["now"],
        "who": entry["by"],
        "action": entry["kind"] if entry["kind"] != "correct" else f"correct:{entry['correction']}",
        "link": entry["link"],
        "meter": entry["meter"],
        "before": before,
        "after": after,
        "reason": entry["reason"],
    }
    if entry.get("approved_by"):
        record["approved_by"] = entry["approved_by"]
    if entry["kind"] == "correct":
        record["amount"] = format_money(entry["amount"])
        if entry.get("table"):
            record["round"] = f"{entry['table']}/{entry['round']}"
    service.audit.append(record)


def decide_change(service: Service, entry: Mapping[str, Any]) -> Any:
    kind = entry["kind"]
    if kind == "propose":
        change = dict(entry["change"])
        # Checked now (unknown link or meter: 404) so that approving cannot fail on it.
        meter_before(service, {**change, "now": entry["now"]})
        if change["kind"] in ("seed", "correct"):  # its bounds: a seed above the ceiling
            command = entry_command({**change, "now": entry["now"], "by": entry["by"]}, _no_table)
            assert isinstance(command, SetSeed | Correct)
            check_change(service.floor, command)
        pid = f"change-{len(service.proposals) + 1}"
        proposal = {
            "id": pid, "state": "proposed", "change": change, "by": entry["by"],
            "at": entry["now"], "reason": change["reason"],
        }  # fmt: skip
        service.proposals[pid] = proposal
        service.audit.append({
            "id": len(service.audit) + 1, "at": entry["now"], "who": entry["by"],
            "action": f"propose:{change['kind']}", "link": change["link"],
            "meter": change["meter"], "before": None, "after": {"change": pid},
            "reason": change["reason"],
        })  # fmt: skip
        return proposal
    found = service.proposals.get(entry["id"])
    if found is None:
        raise UnknownError(f"no change {entry['id']!r}")
    proposal = found
    if proposal["state"] != "proposed":
        raise StateConflictError(f"change {entry['id']} is already {proposal['state']}")
    if entry["by"] == proposal["by"]:
        raise StateConflictError("dual control: a different supervisor must decide this change")
    if kind == "reject":
        proposal.update(state="rejected", decided_by=entry["by"], decided_at=entry["now"])
        service.audit.append({
            "id": len(service.audit) + 1, "at": entry["now"], "who": entry["by"],
            "action": f"reject:{proposal['change']['kind']}",
            "link": proposal["change"]["link"], "meter": proposal["change"]["meter"],
            "before": {"change": proposal["id"]}, "after": None, "reason": entry["reason"],
        })  # fmt: skip
        return proposal
    inner = {
        **proposal["change"], "now": entry["now"], "by": proposal["by"],
        "approved_by": entry["by"],
    }  # fmt: skip
    result = service.apply(inner)
    proposal.update(state="approved", decided_by=entry["by"], decided_at=entry["now"])
    return result
