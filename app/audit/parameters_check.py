"""What `jackpot verify` says of the parameters: which configuration the replay starts
from (none for a journal that records its parameters from entry 1; the floor file given
for an older one), and how the file given differs from the parameters last recorded."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import Any

from app.audit.findings import Report
from app.state.floor_state import FloorConfig
from app.state.parameters import differences, parameters_sha256
from app.store.journal import JournalSource
from jackpot.config import Timing

# Before a journal's first `config` entry nothing is in force: no link, no table.
NOTHING = FloorConfig(currency="", timing=Timing(), links=(), tables={})


async def first_kind(journal: JournalSource) -> str | None:
    """The kind of the journal's first entry (None: the journal is empty)."""
    rows = journal.read(0, batch=1)
    async with contextlib.aclosing(rows):  # type: ignore[type-var]
        row = await anext(rows, None)
    return None if row is None else row.kind


def starting_config(first: str | None, given: FloorConfig | None) -> FloorConfig | None:
    """The configuration the replay starts from: nothing for a journal that records its
    parameters from entry 1 (or is empty), but the mystery key given with the file, which
    opens the journal's must-hit-by draws; else the floor file given (None: none given,
    and the journal cannot be replayed without one)."""
    if first in (None, "config"):
        key = None if given is None else given.mystery_key
        return dataclasses.replace(NOTHING, mystery_key=key)
    return given


def parameter_notes(
    report: Report, first: str | None, floor: Mapping[str, Any] | None, source: str | None
) -> Report:
    """The report with what the run has to say about the parameters and the file."""
    notes: list[str] = []
    if first not in (None, "config"):
        recorded = report.parameters
        until = f"up to seq {recorded['seq'] - 1:,}" if recorded else "every entry"
        notes.append(
            f"parameters: this journal's first entry is not a config entry: {until} "
            f"replayed under the floor file given ({source or 'the default'}), as before "
            "parameters were recorded"
        )
    recorded = report.parameters
    if recorded is not None:
        notes.append(
            f"parameters in force: recorded at seq {recorded['seq']:,}, sha256 {recorded['sha256']}"
        )
        if floor is not None:
            notes.extend(_file_notes(recorded, floor, source))
    return dataclasses.replace(report, notes=(*report.notes, *notes))


def _file_notes(
    recorded: Mapping[str, Any], floor: Mapping[str, Any], source: str | None
) -> list[str]:
    """How the file given differs from the parameters in force (information only: the
    replay never reads it once parameters are recorded)."""
    name = source or "the floor file given"
    if parameters_sha256(floor) == recorded["sha256"]:
        return [f"floor file {name}: the parameters in force"]
    changes = differences(recorded["params"], floor)
    lines = [f"floor file {name}: differs from the parameters in force (information only):"]
    lines.extend(f"  {c['parameter']}: {c['before']!r} -> {c['after']!r}" for c in changes)
    return lines
