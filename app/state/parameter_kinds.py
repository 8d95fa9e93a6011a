"""The parameters' kinds (registered in app/state/kinds.py): a `config` entry puts
parameters in force; with dual control, a change of money parameters is proposed at start
and put in force by a supervisor's `config_approve` (docs/operations.md)."""

from __future__ import annotations

import re
from typing import Any

from app.state.commands import ConfigCommand, ConfigDecisionCommand
from app.state.entries import (
    ConfigApproveEntry,
    ConfigEntry,
    ConfigProposeEntry,
    ConfigRejectEntry,
    Entry,
)
from app.state.parameters import (
    ParametersRefused,
    ParametersUnchanged,
    config_of,
    differences,
    parameters_sha256,
    reconfigure,
    refusals,
    touches_money,
)
from app.state.shape import FloorData
from jackpot.errors import StateConflictError, UnknownError
from jackpot.floor import Floor

NEVER = -(2**62)  # a Floor's `now` before its first command

_METER = re.compile(r"^links\[([^\]]+)\](?:\.meters\[([^\]]+)\])?")


def _checked(state: FloorData, params: dict[str, Any], sha256: str, previous: str | None) -> Any:
    """The configuration of `params`, once their sha256 and their place (after the
    parameters in force) are the entry's and the state allows the change."""
    if parameters_sha256(params) != sha256:
        raise StateConflictError(f"config: sha256 {sha256} is not that of the parameters")
    if previous != state.parameters.sha256:
        raise StateConflictError(
            f"config: previous {previous} is not the parameters in force "
            f"({state.parameters.sha256})"
        )
    config = config_of(params, state.config.mystery_key)
    problems = refusals(state, config)
    if problems:
        raise ParametersRefused(problems)
    return config


# -- prepare: the parameters read at start ---------------------------------------------


def prepare_config(state: FloorData, request: Any, now: int, rng: Any) -> Entry:
    """The floor file's parameters as an entry: in force at once, or with dual control
    (in force) a proposal when they change money parameters. ParametersUnchanged when
    they are those in force (or those already proposed): nothing to record."""
    command = request.command
    assert isinstance(command, ConfigCommand)
    recorded = state.parameters
    sha256 = parameters_sha256(command.params)
    proposal = recorded.proposal
    if sha256 == recorded.sha256 or (proposal is not None and proposal["sha256"] == sha256):
        raise ParametersUnchanged("the parameters are those recorded")
    _checked(state, command.params, sha256, recorded.sha256)
    if held_for_approval(state, command.params):
        problems = author_refusals(state, command.by)
        if problems:
            raise ParametersRefused(problems)
        return ConfigProposeEntry(
            now=now, params=command.params, sha256=sha256, previous=recorded.sha256,
            path=command.path, file_sha256=command.file_sha256, by=command.by,
        )  # fmt: skip
    return ConfigEntry(
        now=now, params=command.params, sha256=sha256, previous=recorded.sha256,
        path=command.path, file_sha256=command.file_sha256, by=None,
    )  # fmt: skip


def held_for_approval(state: FloorData, params: dict[str, Any]) -> bool:
    """Whether `params` start as a proposal: dual control in force and money parameters
    changed (docs/operations.md "Changing a parameter")."""
    recorded = state.parameters
    if recorded.params is None or not state.config.dual_control:
        return False
    return touches_money(differences(recorded.params, params))


def author_refusals(state: FloorData, by: str | None) -> list[str]:
    """A proposal names its author, a supervisor of the parameters in force, so that a
    second supervisor approves it."""
    params = state.parameters.params or {}
    supervisors = {op["name"] for op in params.get("operators", ()) if op["role"] == "supervisor"}
    if by in supervisors:
        return []
    named = "no one" if by is None else repr(by)
    return [
        f"dual_control: a change of money parameters names its author, a supervisor "
        f"({', '.join(sorted(supervisors))}), with --changed-by (JACKPOT_CHANGED_BY): "
        f"{named} is not"
    ]


def prepare_decision(state: FloorData, request: Any, now: int, rng: Any) -> Entry:
    command = request.command
    assert isinstance(command, ConfigDecisionCommand) and request.by is not None
    if command.reason is None:
        return ConfigApproveEntry(now=now, id=command.id, by=request.by)
    return ConfigRejectEntry(now=now, id=command.id, by=request.by, reason=command.reason)


# -- apply -------------------------------------------------------------------------------


def apply_config(state: FloorData, entry: ConfigEntry) -> dict[str, Any]:
    config = _checked(state, entry.params, entry.sha256, entry.previous)
    return _in_force(state, entry, config, entry.by)


def _in_force(
    state: FloorData, entry: ConfigEntry | ConfigProposeEntry, config: Any, by: str | None
) -> dict[str, Any]:
    recorded = state.parameters
    changes = differences(recorded.params, entry.params)
    if state.floor.now == NEVER:
        # Nothing applied yet (a journal's first entry): the floor is made from these
        # parameters alone, whatever floor file the state was first built with.
        state.floor = Floor(config.links, config.timing, config.retain_ms)
    else:
        reconfigure(state.floor, config)
    state.config = config
    recorded.params, recorded.sha256, recorded.seq, recorded.at = (
        entry.params, entry.sha256, state.seq + 1, entry.now,
    )  # fmt: skip
    recorded.proposal = None  # parameters put in force supersede any waiting proposal
    change = _change(state, entry, "in_force", changes)
    if isinstance(entry, ConfigProposeEntry):
        change["by"] = entry.by
    if by is not None:
        change["approved_by"] = by
    recorded.history.append(change)
    _audit(state, entry, changes, by)
    return change


def _change(
    state: FloorData,
    entry: ConfigEntry | ConfigProposeEntry,
    status: str,
    changes: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "seq": state.seq + 1, "at": entry.now, "state": status, "sha256": entry.sha256,
        "previous": entry.previous, "path": entry.path, "file_sha256": entry.file_sha256,
        "changes": changes,
    }  # fmt: skip


def _audit(
    state: FloorData,
    entry: ConfigEntry | ConfigProposeEntry,
    changes: list[dict[str, Any]],
    by: str | None,
) -> None:
    """One audit row per parameter changed: before, after, the file's path and sha256
    (the first parameters recorded change nothing: the entry itself is their record)."""
    why = f"floor file {entry.path or '(unnamed)'} sha256 {entry.file_sha256 or '(unknown)'}"
    author = entry.by if isinstance(entry, ConfigProposeEntry) else None
    for change in changes:
        where = _METER.match(change["parameter"])
        record: dict[str, Any] = {
            "id": len(state.audit) + 1, "at": entry.now, "who": author or "floor file",
            "action": "config", "link": where.group(1) if where else None,
            "meter": where.group(2) if where else None, "parameter": change["parameter"],
            "before": {"value": change["before"]}, "after": {"value": change["after"]},
            "reason": why, "sha256": entry.sha256,
        }  # fmt: skip
        if by is not None:
            record["approved_by"] = by
        state.audit.append(record)


def apply_propose(state: FloorData, entry: ConfigProposeEntry) -> dict[str, Any]:
    _checked(state, entry.params, entry.sha256, entry.previous)
    recorded = state.parameters
    changes = differences(recorded.params, entry.params)
    change = {**_change(state, entry, "proposed", changes), "by": entry.by}
    proposal = {**change, "params": entry.params}
    recorded.proposal = proposal
    recorded.history.append(change)
    state.audit.append({
        "id": len(state.audit) + 1, "at": entry.now, "who": entry.by or "floor file",
        "action": "propose:config", "link": None, "meter": None, "before": None,
        "after": {"change": entry.sha256}, "reason": f"{len(changes)} parameters changed",
    })  # fmt: skip
    return proposal


def _proposal(state: FloorData, pid: str, by: str) -> dict[str, Any]:
    """The proposal waiting, decided by a supervisor other than its author."""
    proposal = waiting_proposal(state, pid)
    if proposal.get("by") == by:
        raise StateConflictError("dual control: a different supervisor must decide this change")
    return proposal


def waiting_proposal(state: FloorData, pid: str) -> dict[str, Any]:
    proposal = state.parameters.proposal
    if proposal is None or proposal["sha256"] != pid:
        raise UnknownError(f"no parameters proposal {pid!r} waiting")
    return proposal


def apply_approve(state: FloorData, entry: ConfigApproveEntry) -> dict[str, Any]:
    proposal = _proposal(state, entry.id, entry.by)
    proposed = ConfigProposeEntry(
        now=entry.now, params=proposal["params"], sha256=proposal["sha256"],
        previous=proposal["previous"], path=proposal["path"],
        file_sha256=proposal["file_sha256"], by=proposal.get("by"),
    )  # fmt: skip
    config = _checked(state, proposed.params, proposed.sha256, proposed.previous)
    return _in_force(state, proposed, config, entry.by)


def apply_reject(state: FloorData, entry: ConfigRejectEntry) -> dict[str, Any]:
    proposal = _proposal(state, entry.id, entry.by)
    recorded = state.parameters
    recorded.proposal = None
    change = {k: v for k, v in proposal.items() if k != "params"}
    change.update(seq=state.seq + 1, at=entry.now, state="rejected", rejected_by=entry.by)
    recorded.history.append(change)
    state.audit.append({
        "id": len(state.audit) + 1, "at": entry.now, "who": entry.by,
        "action": "reject:config", "link": None, "meter": None,
        "before": {"change": entry.id}, "after": None, "reason": entry.reason,
    })  # fmt: skip
    return change


def config_answer(state: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    """The change as recorded: its state, sha256s, file and the parameters changed."""
    answer: dict[str, Any] = {k: v for k, v in result.items() if k not in ("seq", "params")}
    return answer
