"""A request's journal entry and its answer, by its kind (app/state/kinds.py)."""

from __future__ import annotations

import random
from typing import Any

from app.state.entries import Entry
from app.state.floor_state import FloorState
from app.state.kinds import KINDS
from app.state.views import outcome_answer
from app.writer.group import Submission


def entry_of(service: FloorState, sub: Submission, now: int, rng: random.Random) -> Entry:
    """The entry a request makes, with the server time (and the seeds it draws, for bets)."""
    prepare = KINDS[sub.kind].prepare
    if prepare is None:  # finalize, expire: the writer's timer makes them, no request
        raise ValueError(f"{sub.kind} is not a request")
    return prepare(service, sub, now, rng)


def answer_of(service: FloorState, entry: Entry, result: object) -> dict[str, Any]:
    """The answer recorded with the entry: the state as the entry leaves it."""
    answer = KINDS[entry.kind].answer
    assert answer is not None  # every kind a request makes answers it
    return answer(service, entry, result)


def outcome_now(service: FloorState, sub: Submission) -> dict[str, Any]:
    """An outcome's answer with its awards as they stand now (final amounts included)."""
    return outcome_answer(service, sub.table or "", sub.round or "")


def status_of(sub: Submission) -> int:
    return KINDS[sub.kind].status
