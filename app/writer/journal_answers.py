"""Answers told from the journal when the state cannot tell them: a late retry's first
answer (a 409 for another body), and the 409 for an event of a round that has left memory."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.state.timefmt import format_time
from app.store.journal import JournalRow
from app.writer.group import Reply, Submission
from app.writer.ports import WriterMetrics
from jackpot.errors import StateConflictError

Lookup = Callable[[str], Awaitable[JournalRow | None]]


def recorded_answer(
    sub: Submission, row: JournalRow, metrics: WriterMetrics[Any]
) -> tuple[int, Reply]:
    """The journal has this event (a late retry): its first answer, or Conflict (409) if
    the body is another."""
    if row.body_sha256 != sub.body_sha256():
        metrics.event(sub.kind, sub.table, "refused")
        raise sub.conflict()
    metrics.event(sub.kind, sub.table, "retry")
    return 200, row.answer or "{}"


async def left_memory(sub: Submission, lookup: Lookup) -> StateConflictError | None:
    """An outcome or void of a round whose bets are recorded but which has left memory
    (retain_ms after it settled, was void or expired): a 409 that says so, not "no
    bets were recorded". docs/design.md, voids: past that, an audited operator correction."""
    if sub.kind == "bets" or sub.table is None or sub.round is None:
        return None
    key = f"{sub.table}|{sub.round}|"
    if await lookup(key + "bets") is None:
        return None
    other = "void" if sub.kind == "outcome" else "outcome"
    row = await lookup(key + other)
    if row is None:
        state = "expired (open longer than expire_after with no outcome or void)"
    else:
        done = "was void" if other == "void" else "settled"
        state = f"{done} at {format_time(row.recorded_at_ms)}"
    what = f"round {sub.round!r} at table {sub.table!r} has left memory: it {state}"
    if sub.kind == "void":
        return StateConflictError(
            f"{what}, so it can no longer be voided by its table; a supervisor's audited "
            "correction of the meter (POST /v1/links/{link}/meters/{meter}/corrections) "
            "is the remedy"
        )
    return StateConflictError(f"{what}, so its outcome can no longer be recorded")
