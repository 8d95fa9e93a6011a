"""Past awards: the awards that leave the state's memory for the journal database's
`past_awards` table, so that memory and snapshots stay bounded however much the floor has
paid (docs/design.md, "Past awards").

A fixed award leaves memory once nothing the writer decides can need it again: its round
was pruned (settled retain_ms ago: it can no longer be voided) and it is void or paid.
One pruned final and unpaid (or paid, awaiting its witness) stays in `floor.past_fixed`:
a payment finds it there, and it is the casino's liability. It leaves when its payment is
complete. Each award leaves once, as the row `GET /v1/awards` lists, payment included:
the table is written in the same transaction as the journal rows of the entry that made
it leave, and a replay of the journal makes the same rows leave at the same entries (so
recovery and `jackpot verify` rebuild it). Meter awards stay in memory.
"""

from __future__ import annotations

import json
from typing import Any

from app.state.past_award import PastAward
from app.state.payments import PAID, fixed_award_id, state_of, with_payment
from app.state.shape import FloorData
from app.state.views import Listed, fixed_listed
from jackpot.records import PastFixed
from tables.settle import KINDS


def leaving(listed: Listed, award_id: str, payment: dict[str, Any] | None, seq: int) -> PastAward:
    row = with_payment(listed.row(), payment)
    return PastAward(
        award_id, listed.link, listed.table, listed.round, listed.meter, listed.kind,
        row["state"], listed.box, listed.dealt_at, listed.sequence, KINDS.index(listed.kind),
        seq, json.dumps(row, separators=(",", ":"), ensure_ascii=False),
    )  # fmt: skip


def _paid(state: FloorData, award_id: str) -> dict[str, Any] | None:
    record = state.payments.get(award_id)
    return record if record is not None and state_of(record) == PAID else None


def _leave(state: FloorData, past: PastFixed, payment: dict[str, Any] | None) -> PastAward:
    award_id = fixed_award_id(past.table, past.round, past.award)
    listed = fixed_listed(past.table, past.round, past.link, past.award, past.voided, 0)
    state.payments.pop(award_id, None)  # kept in its row from now on
    return leaving(listed, award_id, payment, state.seq + 1)


def settle_pruned(state: FloorData, since: int) -> list[PastAward]:
    """The fixed awards of the rounds just pruned (`floor.past_fixed[since:]`) that are
    void or paid leave memory; the final unpaid ones stay listed there."""
    past_fixed = state.floor.past_fixed
    gone: list[PastAward] = []
    kept = past_fixed[:since]
    for past in past_fixed[since:]:
        payment = _paid(state, fixed_award_id(past.table, past.round, past.award))
        if past.voided or payment is not None:
            gone.append(_leave(state, past, payment))
        else:
            kept.append(past)
    past_fixed[:] = kept
    return gone


def settle_paid(state: FloorData, award_id: str) -> list[PastAward]:
    """A pruned fixed award whose payment is now complete leaves memory."""
    payment = _paid(state, award_id)
    if payment is None:
        return []
    past_fixed = state.floor.past_fixed
    for i, past in enumerate(past_fixed):
        if fixed_award_id(past.table, past.round, past.award) == award_id:
            del past_fixed[i]
            return [_leave(state, past, payment)]
    return []
