"""The table of entry kinds: how each is made from a request, applied to the state, answered.

`KINDS[kind]` is the one place a kind is dispatched on (cosmicpython's handler table):
the writer prepares a request's entry with it, applies it and answers; the replay
(recovery, reports) and `jackpot verify` apply and answer with it. An entry's fields and
the core's command it records are its class in app/state/entries.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from msgspec import to_builtins

from app.state.commands import (
    BetsCommand,
    Command,
    OutcomeCommand,
    ProposeCommand,
    VoidCommand,
)
from app.state.entries import (
    ApproveEntry,
    BetsEntry,
    CorrectEntry,
    Entry,
    ExpireEntry,
    FinalizeEntry,
    OperatorEntry,
    OutcomeEntry,
    ProposeEntry,
    RejectEntry,
    ResetEntry,
    VoidEntry,
    change_of,
    entry_from_dict,
    idempotency_key,
)
from app.state.floor_data import FloorData, RoundExtras
from app.state.operator_views import operator_answer
from app.state.round_entries import prepare_bets, prepare_outcome, prepare_void
from app.state.views import bets_answer, outcome_answer, void_answer
from jackpot.errors import StateConflictError, UnknownError
from jackpot.floor import FinalizeResult, Result, VoidResult
from jackpot.money import format_money
from jackpot.operator_changes import check_change
from tables.bets import RandomSource


class Request(Protocol):
    """A request as the writer hands it over (app/writer/group.py, Submission)."""

    kind: str
    table: str | None
    round: str | None
    command: Command | None
    by: str | None


Prepare = Callable[[FloorData, Request, int, RandomSource], Entry]
Answer = Callable[[FloorData, Any, Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of entry: `apply` changes the state (atomically: a refusal by the core
    changes nothing) and returns the core's result; `prepare` makes the entry of a
    request (None: the writer's timer makes it); `answer` is the request's answer
    from the state the entry leaves and its result (None: it answers no one)."""

    apply: Callable[[FloorData, Any], Result]
    prepare: Prepare | None = None
    answer: Answer | None = None
    status: int = 200  # the HTTP status of a first answer


# -- table events: bets, outcome, void ------------------------------------------------


def _round(request: Request) -> tuple[str, str]:
    assert request.table is not None and request.round is not None  # the route's path
    return request.table, request.round


def _prepare_bets(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, BetsCommand)
    return prepare_bets(service, *_round(r), r.command, now, rng)


def _apply_bets(service: FloorData, entry: BetsEntry) -> Result:
    result = service.floor.apply(entry.command(service.table(entry.table).link))
    service.extras[(entry.table, entry.round)] = RoundExtras(
        entry.boxes, entry.decisions, entry.draws
    )
    return result


def _prepare_outcome(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, OutcomeCommand)
    return prepare_outcome(service, *_round(r), r.command, now)


def _apply_outcome(service: FloorData, entry: OutcomeEntry) -> Result:
    result = service.floor.apply(entry.command())
    hands = {"boxes": to_builtins(entry.boxes), "dealer": to_builtins(entry.dealer)}
    service.extras[(entry.table, entry.round)].hands = hands
    return result


def _prepare_void(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, VoidCommand)
    return prepare_void(service, *_round(r), r.command, now)


def _apply_void(service: FloorData, entry: VoidEntry) -> Result:
    return service.floor.apply(entry.command())


def _void_answer(service: FloorData, entry: VoidEntry, result: Any) -> dict[str, Any]:
    assert isinstance(result, VoidResult)
    return void_answer(service, entry.table, entry.round, list(result.reversed))


# -- the writer's timer: finalize, expire ---------------------------------------------


def _apply_finalize(service: FloorData, entry: FinalizeEntry) -> Result:
    result = service.floor.apply(entry.command())
    assert isinstance(result, FinalizeResult)
    for table, round_id in result.pruned:  # settled long enough ago: the journal answers
        service.extras.pop((table, round_id), None)
        for event in ("bets", "outcome", "void"):
            service.idem.pop(idempotency_key(table, round_id, event), None)
    return result


def _apply_expire(service: FloorData, entry: ExpireEntry) -> Result:
    return service.floor.apply(entry.command())


# -- operators' changes: seed, reset, correct, and dual control -----------------------


def _prepare_change(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    """An operator's entry: the command's fields (the route checked them) and who."""
    command = r.command
    if isinstance(command, ProposeCommand):
        fields: dict[str, Any] = {"change": command.proposed()}
    else:
        fields = to_builtins(command)
    return entry_from_dict({"kind": r.kind, "now": now, "by": r.by, **fields}, "request")


def _meter(service: FloorData, link_id: str, meter_id: str) -> dict[str, Any]:
    """A meter's display value and seed, for the audit log (UnknownError: no such meter)."""
    link = service.floor.link(link_id)
    index = service.floor.meter_index(link, meter_id)
    meter = link.meters[index]
    return {
        "value": format_money(link.display_values()[index]),
        "seed": format_money(meter.next_seed if meter.next_seed is not None else meter.seed),
    }


def _apply_change(
    service: FloorData, entry: OperatorEntry, approved_by: str | None = None
) -> Result:
    """Who, when, what, before, after, why: every operator action, from the journal."""
    before = _meter(service, entry.link, entry.meter)
    result = service.floor.apply(entry.command())
    correction = entry.correction if isinstance(entry, CorrectEntry) else None
    record: dict[str, Any] = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": entry.kind if correction is None else f"correct:{correction}",
        "link": entry.link, "meter": entry.meter, "before": before,
        "after": _meter(service, entry.link, entry.meter), "reason": entry.reason,
    }  # fmt: skip
    if approved_by:
        record["approved_by"] = approved_by
    if isinstance(entry, CorrectEntry):
        record["amount"] = format_money(entry.amount)
        if entry.table:
            record["round"] = f"{entry.table}/{entry.round}"
    service.audit.append(record)
    return result


def _propose(service: FloorData, entry: ProposeEntry) -> Any:
    """A supervisor's change, held until a different one approves it (dual control)."""
    change = entry.proposed()
    proposed = change.entry(entry.now, entry.by)
    # Checked now (unknown link or meter: 404; a seed above the ceiling) so that
    # approving cannot fail on it.
    _meter(service, change.link, change.meter)
    if not isinstance(proposed, ResetEntry):
        check_change(service.floor, proposed.command())
    pid = f"change-{len(service.proposals) + 1}"
    proposal = {
        "id": pid, "state": "proposed", "change": dict(entry.change), "by": entry.by,
        "at": entry.now, "reason": change.reason,
    }  # fmt: skip
    service.proposals[pid] = proposal
    service.audit.append({
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": f"propose:{change.kind}", "link": change.link, "meter": change.meter,
        "before": None, "after": {"change": pid}, "reason": change.reason,
    })  # fmt: skip
    return proposal


def _proposal(service: FloorData, entry: ApproveEntry | RejectEntry) -> dict[str, Any]:
    """The proposal a second supervisor decides: open, and proposed by another."""
    proposal = service.proposals.get(entry.id)
    if proposal is None:
        raise UnknownError(f"no change {entry.id!r}")
    if proposal["state"] != "proposed":
        raise StateConflictError(f"change {entry.id} is already {proposal['state']}")
    if entry.by == proposal["by"]:
        raise StateConflictError("dual control: a different supervisor must decide this change")
    return proposal


def _approve(service: FloorData, entry: ApproveEntry) -> Any:
    """The change applied as if it were an entry now, with the proposer as `by`."""
    proposal = _proposal(service, entry)
    changed = change_of(proposal["change"], entry.id).entry(entry.now, proposal["by"])
    result = _apply_change(service, changed, approved_by=entry.by)
    proposal.update(state="approved", decided_by=entry.by, decided_at=entry.now)
    return result


def _reject(service: FloorData, entry: RejectEntry) -> Any:
    proposal = _proposal(service, entry)
    proposal.update(state="rejected", decided_by=entry.by, decided_at=entry.now)
    service.audit.append({
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": f"reject:{proposal['change']['kind']}",
        "link": proposal["change"]["link"], "meter": proposal["change"]["meter"],
        "before": {"change": proposal["id"]}, "after": None, "reason": entry.reason,
    })  # fmt: skip
    return proposal


def _operator_answer(service: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    return operator_answer(service, entry.kind, result)


def _table_answer(view: Callable[[FloorData, str, str], dict[str, Any]]) -> Answer:
    return lambda service, entry, result: view(service, entry.table, entry.round)


_CHANGE = Kind(_apply_change, _prepare_change, _operator_answer)

KINDS: dict[str, Kind] = {
    "bets": Kind(_apply_bets, _prepare_bets, _table_answer(bets_answer), 201),
    "outcome": Kind(_apply_outcome, _prepare_outcome, _table_answer(outcome_answer), 201),
    "void": Kind(_apply_void, _prepare_void, _void_answer),
    "finalize": Kind(_apply_finalize),
    "expire": Kind(_apply_expire),
    "seed": _CHANGE,
    "reset": _CHANGE,
    "correct": _CHANGE,
    "propose": Kind(_propose, _prepare_change, _operator_answer),
    "approve": Kind(_approve, _prepare_change, _operator_answer),
    "reject": Kind(_reject, _prepare_change, _operator_answer),
}
