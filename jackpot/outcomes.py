"""An outcome: meter claims priced at their deal time (4.5.2, 4.9.1) and fixed awards."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jackpot.commands import MeterClaim, RecordOutcome
from jackpot.config import Timing
from jackpot.errors import ClockSkewError, InvalidCommandError, StateConflictError
from jackpot.expiry import expired_error
from jackpot.link import Link
from jackpot.records import EXPIRED, OPEN, SETTLED, VOID, AwardRecord, FixedRecord, RoundRecord
from jackpot.results import OutcomeResult
from jackpot.timeline import WIN, Event

if TYPE_CHECKING:  # the floor's handler table calls this one
    from jackpot.floor_shape import FloorShape


def check_awaits_outcome(rnd: RoundRecord, timing: Timing) -> None:
    """Only an open round takes an outcome: not a void, expired or settled one."""
    if rnd.state == VOID:
        raise StateConflictError(f"round {rnd.round!r} is void")
    if rnd.state == EXPIRED:
        raise expired_error(rnd, timing)
    if rnd.state != OPEN:
        raise StateConflictError(f"round {rnd.round!r} already has an outcome")


def record_outcome(floor: FloorShape, cmd: RecordOutcome) -> OutcomeResult:
    now, timing = floor.now, floor.timing
    rnd = floor.round(cmd.table, cmd.round)
    check_awaits_outcome(rnd, timing)
    link = floor.links[rnd.link] if rnd.link is not None else None
    for i, claim in enumerate(cmd.claims):
        _check_claim(floor, rnd, link, i, claim)
    if len({(c.box, c.target) for c in cmd.claims}) != len(cmd.claims):
        raise InvalidCommandError("a box claims the same hand twice", ("claims",))
    # An outcome after round_timeout is late; so is a win the watermark has passed.
    # Late wins pay the value at the current position. Only the late event itself
    # takes it: an on-time win of a round whose bets were late keeps its deal-time
    # place (4.5.2, 4.9.1); entries of version 1 demoted it too.
    timed_out = now - rnd.effective_at > timing.round_timeout_ms
    demoted = rnd.late and cmd.version < 2
    awards: list[AwardRecord] = []
    for claim in cmd.claims:
        assert link is not None
        late = timed_out or demoted or claim.dealt_at < link.timeline.watermark
        effective = now if late else claim.dealt_at
        index = link.meter_index(claim.meter)
        key = link.timeline.key(effective, WIN, rnd.table, claim.box)
        award_id = f"{rnd.table}/{rnd.round}/{claim.box}/{claim.target}"
        event = Event(key, award=award_id, meter=index, share=claim.share)
        award = AwardRecord(
            id=award_id,
            link=link.id,
            meter=link.config.meters[index].id,
            table=rnd.table,
            round=rnd.round,
            box=claim.box,
            target=claim.target,
            hand=claim.hand,
            share=claim.share,
            dealt_at=claim.dealt_at,
            effective_at=effective,
            late=late,
            tiebreak=key[2],
            claimed_at=now,
            event=event,
        )
        floor.awards[award_id] = award
        link.timeline.push(event)
        awards.append(award)
        rnd.awards.append(award_id)
    rnd.fixed = [FixedRecord(f) for f in cmd.fixed]
    rnd.state, rnd.outcome_at, rnd.outcome_late = SETTLED, now, timed_out
    if not awards:
        floor.done.append((now, rnd.table, rnd.round))
    if link is not None:
        link.open_rounds.pop((rnd.table, rnd.round), None)
    return OutcomeResult(rnd, tuple(awards))


def _check_claim(
    floor: FloorShape, rnd: RoundRecord, link: Link | None, i: int, claim: MeterClaim
) -> None:
    box, target, dealt_at, meter = claim.box, claim.target, claim.dealt_at, claim.meter
    loc: tuple[str | int, ...] = ("claims", i)
    record = rnd.boxes.get(box)
    wager = 0
    if record is not None and not record.voided:
        wager = record.dealer_wager if target == "dealer" else record.wager
    if link is None or wager == 0:
        raise InvalidCommandError(f"box {box} has no accepted {target}-hand jackpot wager", loc)
    if dealt_at < rnd.closed_at:
        raise InvalidCommandError(f"box {box} dealt_at is before the round's closed_at", loc)
    if dealt_at > floor.now + floor.timing.max_clock_skew_ms:
        raise ClockSkewError(f"box {box} dealt_at is ahead of the server's clock", loc)
    try:
        link.meter_index(meter)
    except KeyError:
        raise InvalidCommandError(f"link {link.id!r} has no meter {meter!r}", loc) from None
