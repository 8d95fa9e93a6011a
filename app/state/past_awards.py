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
recovery and `jackpot verify` rebuild it).

A meter award leaves the same way, once its round is pruned and it is void (its place on
the timeline passed) or paid; one pruned final and unpaid stays in `floor.awards`, named
in `floor.past_meter`. What the views show of a level without it stays in the state: its
newest hits that left (`floor.left_hits`: the floor's last HITS, and a must-hit-by level's
last reveal) and how many left, by state (`floor.left_awards`).
"""

from __future__ import annotations

import heapq
import json
from typing import Any

from app.state.past_award import PastAward
from app.state.payments import PAID, fixed_award_id, state_of, with_payment
from app.state.shape import FloorData
from app.state.views import Listed, fixed_listed, meter_listed
from jackpot.mystery_levels import MysteryAward
from jackpot.records import FINAL, VOID, AwardRecord, PastFixed
from tables.settle import KINDS

# A level's last hits the floor shows (app/state/live_views.py); `GET /v1/awards?link=L&
# meter=M&limit=25` lists the same.
HITS = 25


def leaving(listed: Listed, award_id: str, payment: dict[str, Any] | None, seq: int) -> PastAward:
    row = with_payment(listed.row(), payment)
    return PastAward(
        award_id, listed.link, listed.table, listed.round, listed.meter, listed.kind,
        row["state"], listed.box, listed.dealt_at, listed.sequence, KINDS.index(listed.kind),
        seq, _json(row), None if payment is None else _json(payment),
    )  # fmt: skip


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _paid(state: FloorData, award_id: str) -> dict[str, Any] | None:
    record = state.payments.get(award_id)
    return record if record is not None and state_of(record) == PAID else None


def _leave(state: FloorData, past: PastFixed, payment: dict[str, Any] | None) -> PastAward:
    award_id = fixed_award_id(past.table, past.round, past.award)
    listed = fixed_listed(past.table, past.round, past.link, past.award, past.voided, 0)
    state.payments.pop(award_id, None)  # kept in its row from now on
    return leaving(listed, award_id, payment, state.seq + 1)


def settle_pruned(state: FloorData, since: int, since_meter: int = 0) -> list[PastAward]:
    """The fixed awards of the rounds just pruned (`floor.past_fixed[since:]`) that are
    void or paid leave memory; the final unpaid ones stay listed there. Likewise their
    meter awards (`floor.past_meter[since_meter:]`)."""
    # Only the just pruned are taken off and put back: the unpaid ones before them (the
    # casino's liability, as long as it grows) are not copied at every finalize.
    past_fixed = state.floor.past_fixed
    gone: list[PastAward] = []
    pruned = past_fixed[since:]
    del past_fixed[since:]
    for past in pruned:
        payment = _paid(state, fixed_award_id(past.table, past.round, past.award))
        if past.voided or payment is not None:
            gone.append(_leave(state, past, payment))
        else:
            past_fixed.append(past)
    past_meter = state.floor.past_meter
    pruned_meter = past_meter[since_meter:]
    del past_meter[since_meter:]
    for award_id in pruned_meter:
        award = state.floor.awards[award_id]
        payment = _paid(state, award_id)
        if _passed(award) and (award.state == VOID or payment is not None):
            gone.append(_leave_meter(state, award, payment))
        else:
            past_meter.append(award_id)
    return gone


def _passed(award: AwardRecord) -> bool:
    """Nothing on the timeline names it any more: final, or void and its place passed
    (withheld) or taken off (the watermark and `Floor.pending_count` look it up till then;
    a pruned round's have passed: retain_ms exceeds round_timeout_ms + hold_ms)."""
    return award.state == FINAL or award.finalized_at is not None or award.event.cancelled


def _leave_meter(state: FloorData, award: AwardRecord, payment: dict[str, Any] | None) -> PastAward:
    floor = state.floor
    listed = meter_listed(state, award)
    del floor.awards[award.id]
    state.payments.pop(award.id, None)  # kept in its row from now on
    floor.left_awards[award.state] = floor.left_awards.get(award.state, 0) + 1
    _keep_hit(floor.left_hits.setdefault(f"{award.link}/{award.meter}", []), award)
    return leaving(listed, award.id, payment, state.seq + 1)


def hit_order(a: AwardRecord) -> tuple[int, int, str, str, int]:
    """The listing's order of a level's awards (app/state/views.py `Listed.order`)."""
    return (a.dealt_at, a.sequence or 0, a.table, a.round, a.box)


def _keep_hit(kept: list[AwardRecord], award: AwardRecord) -> None:
    """A level keeps its HITS newest awards that left (of them all, newest dealt first:
    those that stayed in memory are shown beside them) and its last must-hit-by hit."""
    kept.append(award)
    newest = heapq.nlargest(HITS, kept, key=hit_order)
    hits = [a for a in kept if isinstance(a, MysteryAward)]
    last = max(hits, key=lambda a: a.sequence or 0, default=None)
    kept[:] = newest + ([last] if last is not None and all(a is not last for a in newest) else [])


def settle_paid(state: FloorData, award_id: str) -> list[PastAward]:
    """A pruned award whose payment is now complete leaves memory."""
    payment = _paid(state, award_id)
    if payment is None:
        return []
    past_meter = state.floor.past_meter
    if award_id in state.floor.awards and award_id in past_meter:
        past_meter.remove(award_id)
        return [_leave_meter(state, state.floor.awards[award_id], payment)]
    past_fixed = state.floor.past_fixed
    for i, past in enumerate(past_fixed):
        if fixed_award_id(past.table, past.round, past.award) == award_id:
            del past_fixed[i]
            return [_leave(state, past, payment)]
    return []
