"""Must-hit-by levels: a trigger armed on the meter, won by the first contribution to reach it.

docs/design.md "Must-hit-by levels". A meter with `must_hit_by` carries a hidden trigger
drawn by the writer (jackpot.mystery) in [must_hit_from, must_hit_by). Contributions
become final in event order (the timeline's: closed_at, the tie-break, table); the first
that takes the meter to or past the trigger wins the level for the box, in box order,
whose contribution crossed it, at the meter's value at that instant. The award is final
at once (every contribution before it is final); the meter resets and waits for the next
draw: finalising stops there, so no contribution reaches the meter unarmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from jackpot.commands import ArmTrigger
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.link import Link
from jackpot.meter import Meter
from jackpot.money import FULL_SHARE, Money
from jackpot.mystery import Trigger, check_range, reveal_problems
from jackpot.records import FINAL, AwardRecord, RoundRecord
from jackpot.results import ArmResult
from jackpot.timeline import WIN, Event

if TYPE_CHECKING:  # the floor's handler table calls these
    from jackpot.floor_shape import FloorShape

MUST_HIT = "must_hit_by"  # the `hand` of a must-hit-by award


@dataclass(frozen=True, slots=True)
class Reveal:
    """A hit's trigger made public: with its commitment, anyone checks it by hand."""

    commitment: str
    trigger: Money
    nonce: str
    low: Money
    high: Money


@dataclass(slots=True)
class MysteryAward(AwardRecord):
    """A must-hit-by level's award: final when decided, with its trigger revealed."""

    reveal: Reveal | None = None


def trigger_range(meter: Meter) -> tuple[Money, Money] | None:
    """[from, by) of a must-hit-by meter; None for any other meter."""
    by = meter.config.must_hit_by
    if by is None:
        return None
    low = meter.config.must_hit_from
    return (meter.config.seed if low is None else low), by


def arm(floor: FloorShape, cmd: ArmTrigger) -> ArmResult:
    """A drawn trigger armed on its meter (at the first start and after every hit)."""
    link = floor.link(cmd.link)
    meter = link.meters[floor.meter_index(link, cmd.meter)]
    bounds = trigger_range(meter)
    if bounds is None:
        raise InvalidCommandError(f"meter {cmd.meter!r} has no must_hit_by", ("meter",))
    if meter.trigger is not None:
        raise StateConflictError(f"meter {cmd.meter!r} already has a trigger")
    check_range(*bounds)
    if cmd.revealed is not None:
        hit = last_hit(floor, link.id, meter.config.id)
        shown = None if hit is None or hit.reveal is None else hit.reveal
        if shown is None or (shown.trigger, shown.nonce) != cmd.revealed:
            raise InvalidCommandError(
                f"the revealed trigger of {link.id}/{meter.config.id} is not its last hit's"
            )
    drawn = Trigger(cmd.trigger, cmd.nonce)
    # The writer's draw is in range by construction; a journal is checked all the same.
    if reveal_problems(drawn.commitment, cmd.trigger, cmd.nonce, *bounds):
        raise InvalidCommandError(f"the trigger is outside [{bounds[0]}, {bounds[1]})")
    meter.trigger = drawn
    return ArmResult(link.id, meter.config.id, drawn.commitment)


def last_hit(floor: FloorShape, link: str, meter: str) -> MysteryAward | None:
    """The level's latest must-hit-by award: the last made of those in memory (kept in
    the order they were made) and those kept after they left it (`left_hits`)."""
    found = [a for a in floor.left_hits.get(f"{link}/{meter}", ()) if isinstance(a, MysteryAward)]
    for award in reversed(floor.awards.values()):
        if isinstance(award, MysteryAward) and award.link == link and award.meter == meter:
            found.append(award)
            break
    # A level's hits take their link's sequence as they are made.
    return max(found, key=lambda a: a.sequence or 0, default=None)


def unarmed(floor: FloorShape) -> list[tuple[str, str, Money, Money]]:
    """(link, meter, from, by) of every must-hit-by meter waiting for a draw."""
    waiting = []
    for link in floor.links.values():
        for meter in link.meters:
            bounds = trigger_range(meter)
            if bounds is not None and meter.trigger is None:
                waiting.append((link.id, meter.config.id, *bounds))
    return waiting


def crossing(
    floor: FloorShape, link: Link, event: Event, before: list[Money]
) -> AwardRecord | None:
    """After a final contribution: the first armed level it took to its trigger, won."""
    for index, meter in enumerate(link.meters):
        trigger = meter.trigger
        if trigger is None or meter.value < trigger.value or event.amounts[index][0] == 0:
            continue
        rnd = _round_of(floor, event)
        box = _crossing_box(rnd, index, before[index], trigger.value, meter)
        if box is None:
            continue  # only voided boxes reached it: the next contribution wins
        return _award(floor, link, event, rnd, box, index)
    return None


def _round_of(floor: FloorShape, event: Event) -> RoundRecord:
    table = event.key[3]
    for (t, _), rnd in floor.rounds.items():
        if t == table and rnd.event is event:
            return rnd
    raise AssertionError("a final contribution's round is kept until it settles")


def _crossing_box(
    rnd: RoundRecord, index: int, value: int, trigger: int, meter: Meter
) -> int | None:
    """Box order is deal order: the first box whose contribution reaches the trigger.

    A voided box, or one whose wager was returned, never triggers (docs/design.md); its
    money still counts at its place until its void reverses it.
    """
    ceiling = meter.config.ceiling
    for box in sorted(rnd.boxes):
        record = rnd.boxes[box]
        if not record.contributions:
            continue
        value += record.contributions[index][0]
        if ceiling is not None:
            value = min(value, ceiling)
        if value >= trigger and not record.voided and record.contributions[index][0] > 0:
            return box
    return None


def _award(
    floor: FloorShape, link: Link, event: Event, rnd: RoundRecord, box: int, index: int
) -> AwardRecord:
    """The level won at the round's instant: its whole value (whole cents), then reset."""
    meter = link.meters[index]
    trigger = meter.trigger
    assert trigger is not None
    bounds = trigger_range(meter)
    assert bounds is not None
    value_before = meter.value
    amount, funding = meter.award(FULL_SHARE)
    meter.reset_key = event.key
    meter.trigger = None  # the writer draws the next one at once
    award_id = f"{rnd.table}/{rnd.round}/{box}/{MUST_HIT}:{meter.config.id}"
    # Its own key (serial) at the round's instant: the snapshot lists events by serial.
    key = link.timeline.key(event.time, WIN, rnd.table, box)
    win = Event(key, award=award_id, meter=index, share=FULL_SHARE)
    link.sequence += 1
    award = MysteryAward(
        id=award_id,
        link=link.id,
        meter=meter.config.id,
        table=rnd.table,
        round=rnd.round,
        box=box,
        target="player",
        hand=MUST_HIT,
        share=FULL_SHARE,
        dealt_at=rnd.effective_at,
        effective_at=event.time,
        late=rnd.late,
        tiebreak=event.key[2],
        claimed_at=floor.now,
        event=win,
        state=FINAL,
        meter_value=value_before,
        amount=amount,
        order=None,  # finalize sets its place among the awards it makes final
        sequence=link.sequence,
        finalized_at=floor.now,
        funding=funding,
        reveal=Reveal(trigger.commitment, trigger.value, trigger.nonce, *bounds),
    )
    floor.awards[award_id] = award
    rnd.awards.append(award_id)
    return award


def armed(link: Link) -> bool:
    """The link has a must-hit-by level with a trigger: its contributions are watched."""
    return any(meter.trigger is not None for meter in link.meters)


def due_at(floor: FloorShape) -> list[int]:
    """When pending contributions could reach an armed trigger once final: they must be
    finalised even when no award is pending (server time, as Link.due_at)."""
    dues = []
    for link in floor.links.values():
        heap = link.timeline.heap
        if not heap or not armed(link):
            continue
        dues.append(link.held_until(heap[0][0][0], floor.timing))
    return dues
