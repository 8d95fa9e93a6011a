"""The watermark: what the hold has passed becomes final in timeline order (4.5.2)."""

from __future__ import annotations

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


def finalize(floor: FloorShape, cmd: Finalize) -> FinalizeResult:  # noqa: C901, PLR0912, PLR0915 - one ordered pass over each timeline; its order is the rule (4.5.2)
    """Advance the watermark to the floor's time (`cmd.now`, or later if it stepped back)."""
    now, timing = floor.now, floor.timing
    finalized: list[AwardRecord | ResetRecord] = []
    reversed_: list[str] = []
    withheld: list[AwardRecord] = []
    returned: list[str] = []
    stale: list[RoundRecord] = []
    timeout = timing.round_timeout_ms
    for link in floor.links.values():
        if now >= link.stale_check_at:
            next_check = 2**62
            for key, effective_at in link.open_rounds.items():
                rnd = floor.rounds[key]
                if rnd.stale:
                    continue
                if now - effective_at > timeout:
                    rnd.stale = True  # flagged to operators; it no longer holds others
                    stale.append(rnd)
                else:
                    next_check = min(next_check, effective_at + timeout + 1)
            link.stale_check_at = next_check
        order = 0
        mystery = mystery_levels.armed(link)
        table: str | None = None  # the previous event's: what it changed is its table's
        before: tuple[int, ...] = ()
        for event in link.timeline.pop_until(link.watermark_at(now, timing)):
            flows = link_flows(link)  # after the previous event: before this one
            if table is not None:
                attribute(floor.table_flows, table, before, flows)
            table, before = event.key[3], flows
            if event.kind == CONTRIBUTION:
                values = [m.value for m in link.meters] if mystery else []
                event.applied = applied_contribution(link.meters, event)
                hit = mystery_levels.crossing(floor, link, event, values) if mystery else None
                if hit is not None:
                    order += 1
                    hit.order = order
                    finalized.append(hit)
                    break  # the rest waits for the next trigger's draw (mystery_levels)
                continue
            if event.kind == REVERSAL:
                reverse_contribution(link.meters, event)
                assert event.award is not None
                reversed_.append(event.award)
                continue
            if event.kind == RETURN:
                give_back(link.meters, event)
                assert event.award is not None
                returned.append(event.award)
                continue
            meter = link.meters[event.meter]
            value_before = meter.value
            if event.kind == WIN and floor.awards[str(event.award)].state == VOID:
                if event.share == RATE_SCALE:
                    heap = (e for _, e in link.timeline.heap if not e.cancelled)
                    for reversal in own_reversals(heap, event, link.meters):
                        reversal.share = IN_RETURN
                withheld.append(_withheld(floor, link, event, value_before))
                if event.share == RATE_SCALE:
                    meter.reset_key = event.key  # as for a win (jackpot.link.withhold)
                continue
            result = apply_event(link.meters, event)
            assert result is not None and event.award is not None
            if event.kind == RESET:
                meter.reset_key = event.key
                reset = floor.resets[event.award]
                reset.state, reset.finalized_at = FINAL, now
                reset.value_before, reset.funding = value_before, result[1]
                finalized.append(reset)
                continue
            if event.share == RATE_SCALE:
                meter.reset_key = event.key
            order += 1
            link.sequence += 1
            award = floor.awards[event.award]
            award.state, award.amount, award.funding = FINAL, result[0], result[1]
            award.meter_value = value_before
            award.order, award.sequence, award.finalized_at = order, link.sequence, now
            finalized.append(award)
        if table is not None:
            attribute(floor.table_flows, table, before, link_flows(link))
    for record in finalized:
        if isinstance(record, AwardRecord):
            floor.done.append((now, record.table, record.round))
    return FinalizeResult(
        tuple(finalized),
        tuple(stale),
        _prune(floor),
        tuple(reversed_),
        tuple(withheld),
        tuple(returned),
    )


def _withheld(floor: FloorShape, link: Link, event: Event, value_before: Money) -> AwardRecord:
    """A voided award at its place (`_withhold`): it takes its amount for nobody."""
    amount, funding, held = withhold(link.meters, event)
    event.applied = ((amount, held),)  # for its RETURN (jackpot.link.give_back)
    award = floor.awards[str(event.award)]
    award.amount, award.funding, award.meter_value = amount, funding, value_before
    award.finalized_at = floor.now
    return award


def _prune(floor: FloorShape) -> tuple[tuple[str, str], ...]:
    """Drop rounds settled or void more than retain_ms ago (their awards stay)."""
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
        pruned.append((table, round_id))
    return tuple(pruned)
