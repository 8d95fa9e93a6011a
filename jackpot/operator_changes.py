"""Operator changes to a meter: its next seed, a reset, an audited correction (5.24)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jackpot.commands import CEILING_BOUND, Correct, ResetMeter, SetSeed
from jackpot.errors import InvalidCommandError
from jackpot.money import format_money
from jackpot.records import (
    CorrectionRecord,
    ResetRecord,
    SeedChangeRecord,
)
from jackpot.timeline import RESET, Event
from jackpot.voids import void_final

if TYPE_CHECKING:  # the floor's handler table calls these
    from jackpot.floor_shape import FloorShape


def check_change(floor: FloorShape, cmd: SetSeed | Correct) -> None:
    """Refuse, changing nothing, a seed or a correction that the meter's bounds forbid
    now (dual control checks a proposal so; applying it checks again)."""
    link = floor.link(cmd.link)
    meter = link.meters[floor.meter_index(link, cmd.meter)]
    if isinstance(cmd, Correct) and cmd.kind == "adjust" and meter.value + cmd.amount < 0:
        raise InvalidCommandError("a correction cannot take a meter below zero", ("amount",))
    if isinstance(cmd, Correct) and cmd.kind == "hand_paid" and cmd.amount <= 0:
        raise InvalidCommandError("the amount paid must be above zero", ("amount",))
    ceiling = meter.config.ceiling
    if ceiling is None or cmd.version < CEILING_BOUND:
        return  # no ceiling, or written before the ceiling bounded them: replayed as applied
    # The floor file's bound (app/config/floor_file.py): a reset never takes the meter
    # beyond its ceiling, beyond which contributions go to the reserve (docs/api.md).
    if isinstance(cmd, SetSeed) and cmd.seed > ceiling:
        raise InvalidCommandError(
            f"seed {format_money(cmd.seed)} is above the meter's ceiling {format_money(ceiling)}",
            ("seed",),
        )
    after = meter.value + cmd.amount if isinstance(cmd, Correct) else meter.value
    if isinstance(cmd, Correct) and cmd.kind == "adjust" and cmd.amount > 0 and after > ceiling:
        raise InvalidCommandError(
            f"the correction would take the meter to {format_money(after)}, above its "
            f"ceiling {format_money(ceiling)}",
            ("amount",),
        )


def set_seed(floor: FloorShape, cmd: SetSeed) -> SeedChangeRecord:
    check_change(floor, cmd)
    link = floor.link(cmd.link)
    meter = link.meters[floor.meter_index(link, cmd.meter)]
    before = meter.next_seed if meter.next_seed is not None else meter.seed
    meter.next_seed = cmd.seed  # takes effect at the meter's next reset (docs/api.md)
    change = SeedChangeRecord(link.id, cmd.meter, before, cmd.seed, floor.now, cmd.by, cmd.reason)
    floor.seed_changes.append(change)
    return change


def reset_meter(floor: FloorShape, cmd: ResetMeter) -> ResetRecord:
    link = floor.link(cmd.link)
    index = floor.meter_index(link, cmd.meter)
    reset_id = f"reset/{link.id}/{cmd.meter}/{len(floor.resets) + 1}"
    # The reset stands at `now` on the timeline: contributions and wins with an
    # earlier event time still arriving within the hold come before it.
    event = Event(link.timeline.key(floor.now, RESET, "", 0), award=reset_id, meter=index)
    record = ResetRecord(reset_id, link.id, cmd.meter, floor.now, cmd.by, cmd.reason, event)
    floor.resets[reset_id] = record
    link.timeline.push(event)
    return record


def correct(floor: FloorShape, cmd: Correct) -> CorrectionRecord:
    link = floor.link(cmd.link)
    meter = link.meters[floor.meter_index(link, cmd.meter)]
    before = meter.value
    check_change(floor, cmd)
    if cmd.kind == "adjust":
        meter.correct(cmd.amount)
    elif cmd.kind == "hand_paid":
        meter.pay(cmd.amount, reset=cmd.reset)
        meter.reset_key = max(meter.reset_key, link.timeline.key(floor.now, RESET, "", 0))
    elif cmd.kind == "void_round":
        void_final(floor, cmd)
    else:
        raise InvalidCommandError(f"unknown correction {cmd.kind!r}", ("kind",))
    record = CorrectionRecord(
        id=f"correction/{len(floor.corrections) + 1}",
        kind=cmd.kind,
        link=link.id,
        meter=cmd.meter,
        amount=cmd.amount,
        value_before=before,
        value_after=meter.value,
        at=floor.now,
        by=cmd.by,
        reason=cmd.reason,
        table=cmd.table,
        round=cmd.round,
    )
    floor.corrections.append(record)
    return record
