"""A request's journal entry, as the state prepares it, and its answer, as the state then reads."""

from __future__ import annotations

import random
from typing import Any

from app.state.floor_state import Service
from app.state.views import bets_answer, outcome_answer, void_answer
from app.writer.group import Submission
from jackpot.floor import VoidResult


def entry_of(service: Service, sub: Submission, now: int, rng: random.Random) -> dict[str, Any]:
    """The entry a request makes, with the server time (and the seeds it draws, for bets)."""
    if sub.kind == "bets":
        assert sub.table is not None and sub.round is not None
        return service.prepare_bets(sub.table, sub.round, sub.body, now, rng)
    if sub.kind == "outcome":
        assert sub.table is not None and sub.round is not None
        return service.prepare_outcome(sub.table, sub.round, sub.body, now)
    if sub.kind == "void":
        assert sub.table is not None and sub.round is not None
        return service.prepare_void(sub.table, sub.round, sub.body, now)
    # Operator changes: seed, reset, correct, and dual control's propose/approve/reject.
    return {"kind": sub.kind, "now": now, "by": sub.by, **sub.body}


def answer_of(service: Service, sub: Submission, result: object) -> dict[str, Any]:
    """The answer recorded with the entry: the state as the entry leaves it."""
    if sub.kind == "bets":
        return bets_answer(service, sub.table or "", sub.round or "")
    if sub.kind == "outcome":
        return outcome_now(service, sub)
    if sub.kind == "void":
        assert isinstance(result, VoidResult)
        return void_answer(service, sub.table or "", sub.round or "", list(result.reversed))
    from app.state.operator_views import operator_answer

    return operator_answer(service, sub.kind, result)


def outcome_now(service: Service, sub: Submission) -> dict[str, Any]:
    """An outcome's answer with its awards as they stand now (final amounts included)."""
    return outcome_answer(service, sub.table or "", sub.round or "")


def status_of(sub: Submission) -> int:
    return 201 if sub.kind in ("bets", "outcome") else 200
