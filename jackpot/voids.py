"""Voids: boxes voided, contributions reversed, pending awards paid to nobody (5.20)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jackpot.commands import Correct, VoidRound
from jackpot.contributions import count_voided
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.link import (
    Link,
)
from jackpot.records import (
    FINAL,
    PENDING,
    VOID,
    AwardRecord,
    RoundRecord,
)
from jackpot.results import VoidResult
from jackpot.timeline import RETURN, REVERSAL, Event

if TYPE_CHECKING:  # the floor's handler table calls these
    from jackpot.floor_shape import FloorShape


def void_round(floor: FloorShape, cmd: VoidRound) -> VoidResult:
    """Void boxes of a round (all of them by default): their contributions are reversed
    and their pending awards paid to nobody, at the current position (5.17, 5.20)."""
    rnd = floor.round(cmd.table, cmd.round)
    if rnd.state == VOID:
        raise StateConflictError(f"round {cmd.round!r} is already void")
    boxes = _boxes_to_void(rnd, cmd)
    voided = set(boxes)
    _refuse_final_awards(floor, rnd, voided)
    link = floor.links[rnd.link] if rnd.link is not None else None
    reversed_ = _reverse_boxes(floor, link, rnd, boxes, cmd.version)
    cancelled = _withhold_pending_awards(floor, link, rnd, voided, cmd.version)
    for fixed in rnd.fixed:
        if fixed.award.box in voided or fixed.award.for_box in voided:
            fixed.voided = True
    whole = all(b.voided for b in rnd.boxes.values())
    if whole:
        rnd.state, rnd.void_reason = VOID, cmd.reason
        floor.done.append((floor.now, rnd.table, rnd.round))
    if link is not None and (
        whole or not any(b.contributions and not b.voided for b in rnd.boxes.values())
    ):
        link.open_rounds.pop((rnd.table, rnd.round), None)
    return VoidResult(rnd, tuple(reversed_), tuple(cancelled))


def _boxes_to_void(rnd: RoundRecord, cmd: VoidRound) -> list[int]:
    """The boxes named (each once, in the order given), or every box; each must exist."""
    boxes = sorted(rnd.boxes) if cmd.boxes is None else list(dict.fromkeys(cmd.boxes))
    for i, box in enumerate(boxes):
        if box not in rnd.boxes:
            raise InvalidCommandError(f"round {cmd.round!r} has no box {box}", ("boxes", i))
    return boxes


def _refuse_final_awards(floor: FloorShape, rnd: RoundRecord, voided: set[int]) -> None:
    """docs/design.md: a final major award cannot be voided; that is an audited operator
    correction (5.24)."""
    for award_id in rnd.awards:
        award = floor.awards[award_id]
        if award.box in voided and award.state == FINAL:
            raise StateConflictError(
                f"the {award.hand} award of box {award.box} is already final: "
                "ask a supervisor for a correction (rule 5.24)"
            )


def _reverse_boxes(
    floor: FloorShape, link: Link | None, rnd: RoundRecord, boxes: list[int], version: int
) -> list[tuple[int, int]]:
    """Mark the boxes voided and take back what each not yet voided contributed: (box,
    contribution + reserve) of each taken back."""
    reversed_: list[tuple[int, int]] = []
    for box in boxes:
        record = rnd.boxes[box]
        if record.voided:
            continue
        record.voided = True
        if record.contributions and rnd.event is not None and link is not None:
            reversed_.append((box, record.contribution + record.reserve))
            reverse_box(floor, link, rnd, box, version)
    return reversed_


def _withhold_pending_awards(
    floor: FloorShape, link: Link | None, rnd: RoundRecord, voided: set[int], version: int
) -> list[str]:
    """The voided boxes' pending awards, paid to nobody: their ids."""
    cancelled: list[str] = []
    for award_id in rnd.awards:
        award = floor.awards[award_id]
        if award.box in voided and award.state == PENDING and link is not None:
            withhold_award(floor, link, award, version)
            cancelled.append(award_id)
    return cancelled


def reverse_box(floor: FloorShape, link: Link, rnd: RoundRecord, box: int, version: int) -> None:
    """Take one box's contribution back, at the current position (docs/design.md, voids).

    No award dealt before the void changes, pending or final (5.20, 4.5.1): the
    reversal is an event at `now` on the timeline, after every event before it, and
    takes effect when the watermark passes it. A contribution that stands after that
    position (closed_at ahead of the server's clock) is simply taken out of its event.
    """
    event, amounts = rnd.event, rnd.boxes[box].contributions
    assert event is not None
    count_voided(link, rnd.boxes[box])
    timeline = link.timeline
    at = max(floor.now, timeline.watermark)
    if event.applied is None and (version < 2 or event.time > at):
        timeline.take(event, amounts)  # version 1: out of the pending event, in event time
        return
    if version >= 2:
        key = timeline.key(at, REVERSAL, rnd.table, box)
        reversal = Event(key, amounts, award=f"{rnd.table}/{rnd.round}/{box}", source=event)
        timeline.push(reversal)
        return
    # Version 1, already final: out of the final meter at once.
    assert event.applied is not None
    applied = []
    for meter, (m_in, r_in), (m, r) in zip(link.meters, event.applied, amounts, strict=True):
        from_meter = min(m, m_in)
        from_reserve = r + m - from_meter
        meter.reverse(from_meter, from_reserve, in_meter=event.key > meter.reset_key, gross=False)
        applied.append((m_in - from_meter, r_in - from_reserve))
    event.applied = tuple(applied)


def withhold_award(floor: FloorShape, link: Link, award: AwardRecord, version: int) -> None:
    """A voided box's pending award is paid to nobody, at the current position.

    It keeps its place on the timeline, so that no award dealt before the void changes
    (5.20; 4.5.1: each winner takes the value that follows the one before): there it
    takes its amount (a 100 % award resets the meter, its own amount funding the seed
    first), and a RETURN event at the void's position gives the rest back to the
    meter (`Meter.withhold`). One that
    stands after that position (dealt_at ahead of the server's clock), and any voided
    by an entry of version 1, simply leaves the timeline.
    """
    award.state = VOID
    timeline = link.timeline
    at = max(floor.now, timeline.watermark)
    if version < 2 or award.event.time > at:
        timeline.cancel(award.event)
        return
    key = timeline.key(at, RETURN, award.table, award.box)
    timeline.push(Event(key, award=award.id, meter=award.event.meter, source=award.event))


def void_final(floor: FloorShape, cmd: Correct) -> None:
    """5.24: void a round whose award is final; its awards stand (they were paid)."""
    if cmd.table is None or cmd.round is None:
        raise InvalidCommandError("void_round needs the table and the round", ("round",))
    rnd = floor.round(cmd.table, cmd.round)
    if rnd.state == VOID:
        raise StateConflictError(f"round {cmd.round!r} is already void")
    link = floor.links[rnd.link] if rnd.link is not None else None
    for record in rnd.boxes.values():
        if not record.voided and record.contributions and rnd.event is not None and link:
            reverse_box(floor, link, rnd, record.box, cmd.version)
        record.voided = True
    for award_id in rnd.awards:
        award = floor.awards[award_id]
        if award.state == PENDING and link is not None:
            withhold_award(floor, link, award, cmd.version)
    for fixed in rnd.fixed:
        fixed.voided = True
    rnd.state, rnd.void_reason = VOID, cmd.reason
    floor.done.append((floor.now, rnd.table, rnd.round))
    if link is not None:
        link.open_rounds.pop((rnd.table, rnd.round), None)
