"""The `start` kind (registered in app/state/kinds.py): the record of a writer beginning
to lead, with its software identity; it changes nothing else (docs/journal.md `start`)."""

from __future__ import annotations

from typing import Any

from app.state.commands import StartCommand
from app.state.entries import Entry, StartEntry
from app.state.shape import FloorData


def prepare_start(state: FloorData, request: Any, now: int, rng: Any) -> Entry:
    command = request.command
    assert isinstance(command, StartCommand)
    return StartEntry(
        now=now,
        software=command.software,
        params_sha256=state.parameters.sha256,
        host=command.host,
    )


def apply_start(state: FloorData, entry: StartEntry) -> dict[str, Any]:
    return {"software": entry.software, "params_sha256": entry.params_sha256, "host": entry.host}


def start_answer(state: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    answer: dict[str, Any] = result
    return answer
