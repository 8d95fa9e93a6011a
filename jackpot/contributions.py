"""Bets closed: a round's boxes recorded, their contributions one event on the timeline,
and their qualifying wagers metered on every meter of their link (accepted, and voided
since: the regulator's counters)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from jackpot.commands import CloseBets, Wager
from jackpot.errors import ClockSkewError, InvalidCommandError, StaleRoundError, StateConflictError
from jackpot.money import RATE_SCALE
from jackpot.records import BoxRecord, RoundRecord
from jackpot.results import BetsResult
from jackpot.timeline import CONTRIBUTION, Event

if TYPE_CHECKING:  # the floor's handler table calls this one
    from jackpot.floor_shape import FloorShape
    from jackpot.link import Link


def close_bets(floor: FloorShape, cmd: CloseBets) -> BetsResult:
    now, timing = floor.now, floor.timing
    if cmd.closed_at > now + timing.max_clock_skew_ms:
        raise ClockSkewError(
            f"closed_at is {cmd.closed_at - now} ms ahead of the server's clock "
            f"(max_clock_skew {timing.max_clock_skew_ms} ms)",
            ("closed_at",),
        )
    if now - cmd.closed_at > timing.round_timeout_ms:
        raise StaleRoundError(
            f"bets closed {now - cmd.closed_at} ms ago, more than round_timeout "
            f"({timing.round_timeout_ms} ms): void the round (rule 5.17)",
            ("closed_at",),
        )
    if (cmd.table, cmd.round) in floor.rounds:
        raise StateConflictError(f"round {cmd.round!r} already has bets")
    link = floor.link(cmd.link) if cmd.link is not None else None
    # Bets that arrive more than `hold` after they closed are late: they take effect
    # at the current position, never before an award that may already be final.
    late = now - cmd.closed_at > timing.hold_ms
    effective = now if late else cmd.closed_at
    if link is not None:
        effective = max(effective, link.timeline.watermark)
    boxes: dict[int, BoxRecord] = {}
    rates = link.rates if link is not None else ()
    # Per box total wagered, its per-meter (to_meter, to_reserve) and how many boxes
    # wagered it: a round's boxes mostly wager the same, computed once.
    shares: dict[int, tuple[tuple[tuple[int, int], ...], int]] = {}
    none: tuple[tuple[int, int], ...] = ()
    for w in cmd.wagers:
        box, wager, dealer_wager = w.box, w.wager, w.dealer_wager
        if box in boxes:
            raise InvalidCommandError("a box appears twice", ("boxes",))
        total = wager + dealer_wager
        amounts = none
        if total and rates:
            share = shares.get(total)
            if share is None:
                # Exact: a whole-cent wager times a four-place rate is whole micro-units.
                amounts = tuple(
                    [(total * r // RATE_SCALE, total * q // RATE_SCALE) for r, q in rates]
                )
                shares[total] = (amounts, 1)
            else:
                amounts = share[0]
                shares[total] = (amounts, share[1] + 1)
        boxes[box] = BoxRecord(box, wager, dealer_wager, amounts)
    event = None
    if link is not None and shares:
        # Per meter, the round's (to_meter, to_reserve) summed over its boxes.
        sums = [
            (
                sum([amounts[i][0] * n for amounts, n in shares.values()]),
                sum([amounts[i][1] * n for amounts, n in shares.values()]),
            )
            for i in range(len(rates))
        ]
        key = link.timeline.key(effective, CONTRIBUTION, cmd.table, 0)
        event = Event(key, amounts=tuple(sums))
        link.timeline.push(event)
    record = RoundRecord(
        table=cmd.table,
        round=cmd.round,
        link=cmd.link,
        closed_at=cmd.closed_at,
        effective_at=effective,
        received_at=now,
        late=late,
        boxes=boxes,
        event=event,
    )
    floor.rounds[(cmd.table, cmd.round)] = record
    if event is not None and link is not None:
        count_accepted(link, cmd.wagers)
        link.open_round((cmd.table, cmd.round), effective)
        link.stale_check_at = min(link.stale_check_at, effective + timing.round_timeout_ms + 1)
    floor.opened(record)
    return BetsResult(record)


# -- qualifying wagers, metered on every meter of their link --------------------------


def _counted(wager: int, dealer_wager: int) -> int:
    # singapore-stud 3.5: a wager on the player's hand and one on the dealer's are two.
    return (wager > 0) + (dealer_wager > 0)


def count_accepted(link: Link, wagers: Iterable[Wager]) -> None:
    """Every accepted jackpot wager qualifies for every meter of its link: each meter
    contributes from it at its own rate (docs/design.md, vocabulary)."""
    count = amount = 0
    for w in wagers:  # as `_counted`, inline: once per box of every bets
        count += (w.wager > 0) + (w.dealer_wager > 0)
        amount += w.wager + w.dealer_wager
    if not count:
        return
    for meter in link.meters:
        meter.wagers += count
        meter.wagered += amount


def count_voided(link: Link, box: BoxRecord) -> None:
    """A voided box's wagers are metered apart; the accepted ones stay as they were."""
    count = _counted(box.wager, box.dealer_wager)
    for meter in link.meters:
        meter.wagers_voided += count
        meter.wagered_voided += box.wager + box.dealer_wager
