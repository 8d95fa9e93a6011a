"""A transfer: money moved from one meter to another, value to value and reserve to
reserve, never created or lost (docs/api.md "Transfers").

Regulators require the amount of a progressive taken off the floor to be moved to another
one (Nevada Regulation 5.110, Michigan R 432.1838(4)). `move` is the whole rule on two
meters' money; `transfer` applies it to the floor's meters and keeps their ledgers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from jackpot.commands import Amount, TransferMoney
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.money import Money, format_exact, format_money
from jackpot.timeline import RESET, WIN

if TYPE_CHECKING:  # the floor's handler table calls `transfer`
    from jackpot.floor_shape import FloorShape

ABOVE_SEED: Final = "above_seed"  # what the value holds above the seed
ALL: Final = "all"  # the whole value, to the micro-unit (a link emptied before it is retired)


@dataclass(frozen=True, slots=True)
class Holding:
    """One meter's money at one instant: its value, its reserve, and its seed."""

    value: Money
    reserve: Money
    seed: Money


@dataclass(frozen=True, slots=True)
class Moved:
    """Both meters after the transfer, and what went across: `amount` from value to value,
    `reserve` from reserve to reserve."""

    source: Holding
    target: Holding
    amount: Money
    reserve: Money


def move(
    source: Holding,
    target: Holding,
    amount: Amount,
    *,
    include_reserve: bool,
    below_seed: bool,
    ceiling: Money | None,
) -> Moved:
    """Move `amount` of the source's value to the target's value and, with
    `include_reserve`, the source's whole reserve to the target's reserve.

    The source never goes below its seed (what players are shown as the least it pays)
    unless `below_seed` (its link is out of play), and never below zero; the target never
    goes beyond its `ceiling`. A transfer that would move nothing is refused."""
    if isinstance(amount, str):
        above = Money(max(0, source.value - source.seed))
        value = above if amount == ABOVE_SEED else source.value
    else:
        value = amount
        if value <= 0:
            raise InvalidCommandError("the amount must be above zero", ("amount",))
    reserve = source.reserve if include_reserve else Money(0)
    lowest = 0 if below_seed else source.seed
    if source.value - value < lowest:
        what = "zero" if below_seed else f"its seed {format_money(source.seed)}"
        more = "" if below_seed else " (its link may go below the seed only while suspended)"
        raise StateConflictError(
            f"the transfer would take the meter from {format_exact(source.value)} below "
            f"{what}{more}",
            ("amount",),
        )
    if value == 0 and reserve == 0:
        raise StateConflictError("nothing to transfer: no value above the seed, no reserve")
    if ceiling is not None and target.value + value > ceiling:
        raise StateConflictError(
            f"the transfer would take the target meter to {format_exact(target.value + value)}, "
            f"above its ceiling {format_money(ceiling)}",
            ("amount",),
        )
    return Moved(
        Holding(Money(source.value - value), Money(source.reserve - reserve), source.seed),
        Holding(Money(target.value + value), Money(target.reserve + reserve), target.seed),
        value,
        reserve,
    )


@dataclass(frozen=True, slots=True)
class TransferRecord:
    link: str
    meter: str
    to_link: str
    to_meter: str
    amount: Money
    reserve: Money
    at: int


def _busy(floor: FloorShape, link_id: str, index: int) -> str | None:
    """Why a meter cannot take part in a transfer now, if it cannot."""
    link = floor.link(link_id)
    meter = link.meters[index]
    if meter.config.must_hit_by is not None:
        return "is a must-hit-by level: money not contributed would move its hit"
    for event in link.timeline.pending():
        if event.meter == index and event.kind in (WIN, RESET):
            what = "an award" if event.kind == WIN else "a reset"
            return f"has {what} pending: it takes the value at its place once final"
    return None


def check(floor: FloorShape, cmd: TransferMoney) -> Moved:
    """What the transfer would move, changing nothing; refused (JackpotError) while either
    meter has a pending award or reset or is a must-hit-by level, or as `move` refuses."""
    src_link, dst_link = floor.link(cmd.link), floor.link(cmd.to_link)
    i, j = floor.meter_index(src_link, cmd.meter), floor.meter_index(dst_link, cmd.to_meter)
    if (cmd.link, i) == (cmd.to_link, j):
        raise InvalidCommandError("a meter cannot transfer to itself", ("to_meter",))
    for link_id, index, which in ((cmd.link, i, "source"), (cmd.to_link, j, "target")):
        why = _busy(floor, link_id, index)
        if why is not None:
            meter_id = floor.link(link_id).config.meters[index].id
            raise StateConflictError(f"the {which} meter {link_id}/{meter_id} {why}")
    src, dst = src_link.meters[i], dst_link.meters[j]
    return move(
        Holding(src.value, src.reserve, src.seed),
        Holding(dst.value, dst.reserve, dst.seed),
        cmd.amount,
        include_reserve=cmd.include_reserve,
        below_seed=cmd.below_seed,
        ceiling=dst.config.ceiling,
    )


def transfer(floor: FloorShape, cmd: TransferMoney) -> TransferRecord:
    """Apply a transfer to the two meters' final values, at the current position (as a
    correction is); both ledgers count it (`transferred_*`)."""
    moved = check(floor, cmd)
    src_link, dst_link = floor.link(cmd.link), floor.link(cmd.to_link)
    src = src_link.meters[floor.meter_index(src_link, cmd.meter)]
    dst = dst_link.meters[floor.meter_index(dst_link, cmd.to_meter)]
    src.value, src.reserve = moved.source.value, moved.source.reserve
    dst.value, dst.reserve = moved.target.value, moved.target.reserve
    src.transferred_out += moved.amount
    src.transferred_out_reserve += moved.reserve
    dst.transferred_in += moved.amount
    dst.transferred_in_reserve += moved.reserve
    return TransferRecord(
        cmd.link, cmd.meter, cmd.to_link, cmd.to_meter, moved.amount, moved.reserve, floor.now
    )
