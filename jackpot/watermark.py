"""The watermark: what the hold has passed becomes final in timeline order (4.5.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jackpot import mystery_levels
from jackpot.commands import Finalize
from jackpot.link import (
    IN_RETURN,
    Link,
    applied_contribution,
    apply_event,
    give_back,
    own_reversals,
    reverse_contribution,
    withhold,
)
from jackpot.money import RATE_SCALE, Money
from jackpot.records import (
    FINAL,
    OPEN,
    PENDING,
    VOID,
    AwardRecord,
    PastFixed,
    ResetRecord,
    RoundRecord,
)
from jackpot.results import FinalizeResult
from jackpot.table_ledger import attribute, link_flows
from jackpot.timeline import CONTRIBUTION, RESET, RETURN, REVERSAL, WIN, Event

if TYPE_CHECKING:  # the floor's handler table calls these
    from jackpot.floor_shape import FloorShape


@dataclass
class _Advance:
    """What one advance of the watermark did, in the order it did it."""

    finalized: list[AwardRecord | ResetRecord] = field(default_factory=list)
    stale: list[RoundRecord] = field(default_factory=list)
    reversed_: list[str] = field(default_factory=list)
    withheld: list[AwardRecord] = field(default_factory=list)
    returned: list[str] = field(default_factory=list)


def finalize(floor: FloorShape, cmd: Finalize) -> FinalizeResult:
    """Advance the watermark to the floor's time (`cmd.now`, or later if it stepped back)."""
    advance = _Advance()
    for link in floor.links.values():
        if floor.now >= link.stale_check_at:
            advance.stale += _flag_stale_rounds(floor, link)
        _pass_timeline(floor, link, advance)
    for record in advance.finalized:
        if isinstance(record, AwardRecord):
            floor.done.append((floor.now, record.table, record.round))
    return FinalizeResult(
        tuple(advance.finalized),
        tuple(advance.stale),
        _prune(floor),
        tuple(advance.reversed_),
        tuple(advance.withheld),
        tuple(advance.returned),
    )


def _flag_stale_rounds(floor: FloorShape, link: Link) -> list[RoundRecord]:
    """Rounds open longer than the round timeout, flagged, oldest first; and when to look
    again: when the oldest round left open turns stale."""
    order = link.order()
    stale = []
    for key in order.pop_stale(floor.now, floor.timing.round_timeout_ms):
        rnd = floor.rounds[key]
        if not rnd.stale:
            rnd.stale = True  # flagged to operators; it no longer holds others
            stale.append(rnd)
    oldest = order.oldest()
    link.stale_check_at = 2**62 if oldest is None else oldest[0] + floor.timing.round_timeout_ms + 1
    return stale


def _pass_timeline(floor: FloorShape, link: Link, advance: _Advance) -> None:
    """Apply the link's events the hold has passed, in timeline order (4.5.2)."""
    order = 0  # of the awards made final in this pass
    mystery = mystery_levels.armed(link)
    table: str | None = None  # the previous event's: what it changed is its table's
    before: tuple[int, ...] = ()
    for event in link.timeline.pop_until(link.watermark_at(floor.now, floor.timing)):
        flows = link_flows(link)  # after the previous event: before this one
        if table is not None:
            attribute(floor.table_flows, table, before, flows)
        table, before = event.key[3], flows
        if event.kind == CONTRIBUTION:
            hit = _contribute(floor, link, event, mystery)
            if hit is not None:
                order += 1
                hit.order = order
                advance.finalized.append(hit)
                break  # the rest waits for the next trigger's draw (mystery_levels)
        elif event.kind == REVERSAL:
            reverse_contribution(link.meters, event)
            assert event.award is not None
            advance.reversed_.append(event.award)
        elif event.kind == RETURN:
            give_back(link.meters, event)
            assert event.award is not None
            advance.returned.append(event.award)
        elif event.kind == WIN and floor.awards[str(event.award)].state == VOID:
            advance.withheld.append(_withhold_voided_win(floor, link, event))
        elif event.kind == RESET:
            advance.finalized.append(_finalize_reset(floor, link, event))
        else:
            order += 1
            advance.finalized.append(_finalize_win(floor, link, event, order))
    if table is not None:
        attribute(floor.table_flows, table, before, link_flows(link))


def _contribute(floor: FloorShape, link: Link, event: Event, mystery: bool) -> AwardRecord | None:
    """A contribution joins the meters; on an armed link, the level it makes hit, if any."""
    values = [m.value for m in link.meters] if mystery else []
    event.applied = applied_contribution(link.meters, event)
    return mystery_levels.crossing(floor, link, event, values) if mystery else None


def _withhold_voided_win(floor: FloorShape, link: Link, event: Event) -> AwardRecord:
    """A voided award's win at its place, paid to nobody; a 100 % one resets the meter,
    and its own box's pending reversals are then taken from the meter (`own_reversals`)."""
    meter = link.meters[event.meter]
    value_before = meter.value
    if event.share == RATE_SCALE:
        heap = (e for _, e in link.timeline.heap if not e.cancelled)
        for reversal in own_reversals(heap, event, link.meters):
            reversal.share = IN_RETURN
    withheld = _withheld(floor, link, event, value_before)
    if event.share == RATE_SCALE:
        meter.reset_key = event.key  # as for a win (jackpot.link.withhold)
    return withheld


def _finalize_reset(floor: FloorShape, link: Link, event: Event) -> ResetRecord:
    """A reset takes the meter back to its seed; its record becomes final."""
    meter = link.meters[event.meter]
    value_before = meter.value
    result = apply_event(link.meters, event)
    assert result is not None and event.award is not None
    meter.reset_key = event.key
    reset = floor.resets[event.award]
    reset.state, reset.finalized_at = FINAL, floor.now
    reset.value_before, reset.funding = value_before, result[1]
    return reset


def _finalize_win(floor: FloorShape, link: Link, event: Event, order: int) -> AwardRecord:
    """A win takes its amount from the meter as it stands: the award becomes final."""
    meter = link.meters[event.meter]
    value_before = meter.value
    result = apply_event(link.meters, event)
    assert result is not None and event.award is not None
    if event.share == RATE_SCALE:
        meter.reset_key = event.key
    link.sequence += 1
    award = floor.awards[event.award]
    award.state, award.amount, award.funding = FINAL, result[0], result[1]
    award.meter_value = value_before
    award.order, award.sequence, award.finalized_at = order, link.sequence, floor.now
    return award


def _withheld(floor: FloorShape, link: Link, event: Event, value_before: Money) -> AwardRecord:
    """A voided award at its place (`_withhold`): it takes its amount for nobody."""
    amount, funding, held = withhold(link.meters, event)
    event.applied = ((amount, held),)  # for its RETURN (jackpot.link.give_back)
    award = floor.awards[str(event.award)]
    award.amount, award.funding, award.meter_value = amount, funding, value_before
    award.finalized_at = floor.now
    return award


def _prune(floor: FloorShape) -> tuple[tuple[str, str], ...]:
    """Drop rounds settled or void more than retain_ms ago (their awards stay, listed in
    `past_fixed` and `past_meter`)."""
    pruned = []
    while floor.done and floor.done[0][0] < floor.now - floor.retain_ms:
        _, table, round_id = floor.done.popleft()
        rnd = floor.rounds.get((table, round_id))
        if rnd is None or rnd.state == OPEN:
            continue
        if any(floor.awards[a].state == PENDING for a in rnd.awards):
            continue  # pushed again when its awards become final
        del floor.rounds[(table, round_id)]
        floor.past_fixed += [
            PastFixed(table, round_id, rnd.link, f.award, f.voided) for f in rnd.fixed
        ]
        floor.past_meter += rnd.awards
        pruned.append((table, round_id))
    return tuple(pruned)
