"""A link: its meters, its timeline and the open rounds that hold its watermark back; and
how a contribution reaches its meters, with what passes a ceiling sent where the floor says.

A meter's `overflow_to` (docs/api.md, floor configuration): its reserve (the default),
the house, or another meter of the same link, which takes it as a contribution to its
own value (up to its own ceiling, beyond which its own `overflow_to` applies). The floor
file refuses a cycle, so passing on ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from jackpot.config import LinkConfig, Timing
from jackpot.holding_order import HoldingOrder
from jackpot.meter import Funding, Meter
from jackpot.money import FULL_SHARE, Money
from jackpot.timeline import CONTRIBUTION, RESET, RETURN, REVERSAL, WIN, Event, Timeline


@dataclass(slots=True)
class Link:
    config: LinkConfig
    meters: list[Meter]
    timeline: Timeline
    # (table, round) -> effective_at of every open round that holds the watermark:
    # bets accepted with a jackpot wager, no outcome yet, not void, not stale.
    open_rounds: dict[tuple[str, str], int] = field(default_factory=dict)
    sequence: int = 0  # meter awards finalised on this link, ever
    rates: tuple[tuple[int, int], ...] = ()  # per meter (rate, reserve_rate)
    # No open round can turn stale before this server time: finalize looks for stale
    # rounds only then (derived state: recomputed at the first finalize after a load).
    stale_check_at: int = field(default=-(2**62), compare=False)
    # open_rounds by effective_at (derived: built from them when first asked)
    _order: HoldingOrder | None = field(default=None, compare=False, repr=False)

    @classmethod
    def new(cls, config: LinkConfig) -> Link:
        rates = tuple((m.rate, m.reserve_rate) for m in config.meters)
        return cls(
            config, [Meter.new(m) for m in config.meters], Timeline(len(config.meters)), rates=rates
        )

    @property
    def id(self) -> str:
        return self.config.id

    def meter_index(self, meter: str | None) -> int:
        if meter is None:
            return 0
        for i, m in enumerate(self.config.meters):
            if m.id == meter:
                return i
        raise KeyError(meter)

    def order(self) -> HoldingOrder:
        """`open_rounds` by effective_at (jackpot/holding_order.py)."""
        if self._order is None or self._order.of is not self.open_rounds:
            self._order = HoldingOrder(self.open_rounds)
        return self._order

    def open_round(self, key: tuple[str, str], effective_at: int) -> None:
        """A round with a jackpot wager took bets: it holds the watermark until its outcome."""
        self.open_rounds[key] = effective_at
        if self._order is not None and self._order.of is self.open_rounds:
            self._order.add(key, effective_at)

    def watermark_at(self, now: int, timing: Timing) -> int:
        """Every event with a time strictly before this is final (docs/design.md, the watermark).

        An award dealt at t is final when (1) the server's clock has passed t + hold, so
        every bets-closed event with a time <= t has arrived, and (2) no open round on
        the link closed at or before t, since only such a round could still hold an
        earlier win. A round open longer than round_timeout stops holding (it is stale).
        """
        bound = now - timing.hold_ms
        if not self.open_rounds:
            return bound
        order = self.order()
        oldest = order.oldest()
        # The rounds not in the order were stale at its last check, so at `now` if later.
        if now >= order.flagged_at:
            if oldest is None:
                return bound
            if now - oldest[0] <= timing.round_timeout_ms:
                # The earliest open round is not stale, so no later one is: it is the bound.
                return min(bound, oldest[0])
        # Rounds stale at `now` not yet taken out by the stale check: look at each.
        for effective_at in self.open_rounds.values():
            if now - effective_at <= timing.round_timeout_ms and effective_at < bound:
                bound = effective_at
        return bound

    def due_at(self, timing: Timing) -> int | None:
        """The server time at which the earliest pending award could become final."""
        t = self.timeline.earliest_award_time()
        return None if t is None else self.held_until(t, timing)

    def held_until(self, t: int, timing: Timing) -> int:
        """When an event at `t` could become final: past its hold, and past the round
        timeout of every open round closed at or before it."""
        due = t + timing.hold_ms + 1
        order = self.order()
        for effective_at, _, _ in order.upto(t):
            due = max(due, effective_at + timing.round_timeout_ms + 1)
        if due > order.flagged_at:
            return due  # a round taken out as stale ends by the check's time: no later
        for effective_at in self.open_rounds.values():
            if effective_at <= t:
                due = max(due, effective_at + timing.round_timeout_ms + 1)
        return due

    def display_values(self) -> list[Money]:
        """Each meter's value now, counting pending events in event order (provisional).

        With no pending award, the pending contributions simply add up (up to the
        ceiling). With one, the pending events are replayed on copies of the meters, so
        the display drops to the seed at a pending royal flush ("jackpot pending").
        """
        simple = not self.timeline.pending_awards and not self.timeline.pending_reversals
        if simple and not passes_on(self.meters):
            values = []
            for meter, (to_meter, _) in zip(self.meters, self.timeline.pending_sums, strict=True):
                value = meter.value + to_meter
                ceiling = meter.config.ceiling
                if ceiling is not None and value > ceiling:
                    value = max(meter.value, ceiling)
                values.append(Money(value))
            return values
        # The contributions between two awards go to a copy at once: with its ceiling,
        # contributing a then b leaves the value that contributing a + b does (amounts are
        # never negative), as the sums above assume. What the reserve gets does not count.
        copies = [replace(m) for m in self.meters]
        held = [0] * len(copies)  # per meter: to_meter not yet given to the copy
        split = self.pending_head()
        pending = self.timeline.pending() if split is None else split[0]
        replay = Replay(copies, pending)
        for event in pending:
            if event.kind == CONTRIBUTION:
                held = [h + m for h, (m, _) in zip(held, event.amounts, strict=True)]
                continue
            held = _contribute(copies, held)
            replay.step(event)
        if split is not None:  # the contributions after the last award, summed
            held = [h + m for h, (m, _) in zip(held, split[1], strict=True)]
        _contribute(copies, held)
        return [m.value for m in copies]

    def provisional(self) -> list[tuple[Money, Money]]:
        """Each meter's (value, reserve) now, as if every pending event were final.

        One instant for both: the pending events are applied in event order to copies of
        the meters, as finalising them would, so a contribution past the ceiling is in
        the reserve when the value stops at the ceiling, and a pending reset's funding
        has left the reserve when the value is back at the seed.
        """
        simple = not self.timeline.pending_awards and not self.timeline.pending_reversals
        if simple and not passes_on(self.meters):
            return [
                pending_contributions(meter, to_meter, to_reserve)
                for meter, (to_meter, to_reserve) in zip(
                    self.meters, self.timeline.pending_sums, strict=True
                )
            ]
        copies = [replace(m) for m in self.meters]
        split = None if passes_on(self.meters) else self.pending_head()
        pending = list(self.timeline.pending()) if split is None else split[0]
        replay = Replay(copies, pending)
        for event in pending:
            if event.kind == CONTRIBUTION:
                applied_contribution(copies, event)
            else:
                replay.step(event)
        if split is not None:  # the contributions after the last award, at once
            rest = zip(copies, split[1], strict=True)
            return [pending_contributions(c, m, r) for c, (m, r) in rest]
        return [(m.value, m.reserve) for m in copies]

    def pending_head(self) -> tuple[list[Event], list[tuple[int, int]]] | None:
        """With awards or resets pending and no void's reversal or return: the pending
        events up to the last award or reset, in event order, and per meter the
        (to_meter, to_reserve) of the contributions after it (summed: no event between
        them). None otherwise: every pending event is replayed."""
        timeline = self.timeline
        if timeline.pending_reversals or not timeline.pending_awards:
            return None
        head = timeline.pending_until(timeline.pending_award_events()[-1].key)
        rest = [list(sums) for sums in timeline.pending_sums]
        for event in head:
            if event.kind == CONTRIBUTION:
                for sums, (m, r) in zip(rest, event.amounts, strict=True):
                    sums[0] -= m
                    sums[1] -= r
        return head, [(m, r) for m, r in rest]


class Replay:
    """Pending events other than contributions, applied in event order to copies of the
    meters as finalising would apply them, without changing the events (provisional
    values: what the display and an instant's read show)."""

    __slots__ = ("copies", "voided", "held_for", "returning", "_pending")

    def __init__(self, copies: list[Meter], pending: list[Event]) -> None:
        self.copies = copies
        # A voided award's WIN is followed by its RETURN: what it holds for that, here.
        self.voided = {id(e.source) for e in pending if e.kind == RETURN}
        self.held_for: dict[int, int] = {}
        self.returning: set[int] = set()  # reversals this replay flags as IN_RETURN
        self._pending = pending

    def step(self, event: Event) -> None:
        copies = self.copies
        if event.kind == REVERSAL:
            returning = id(event) in self.returning
            reverse_contribution(copies, event, commit=False, returning=returning)
            return
        if event.kind == RETURN:
            give_back(copies, event, self.held_for)
            return
        if id(event) in self.voided:
            if event.share == FULL_SHARE:
                found = own_reversals(self._pending, event, copies)
                self.returning.update(id(r) for r in found)
            self.held_for[id(event)] = withhold(copies, event)[2]
        else:
            apply_event(copies, event)
        if event.kind == RESET or event.share == FULL_SHARE:
            copies[event.meter].reset_key = event.key  # as finalising does


def _contribute(meters: list[Meter], held: list[int]) -> list[int]:
    """Give each meter its held contribution; nothing is held after."""
    contribute(meters, [(to_meter, 0) for to_meter in held])
    return [0] * len(meters)


def apply_event(meters: list[Meter], event: Event) -> tuple[Money, Funding | None] | None:
    """Apply one timeline event to the meters: a win's (amount, funding), a reset's funding.

    Pure with respect to the event: what a contribution actually did (the ceiling may
    send part of it to the reserve) is returned through `applied_contribution`.
    """
    meter = meters[event.meter]
    if event.kind == WIN:
        return meter.award(event.share)
    if event.kind == RESET:
        return Money(0), meter.reset(operator=True)
    return None


def pending_contributions(meter: Meter, to_meter: int, to_reserve: int) -> tuple[Money, Money]:
    """A meter's (value, reserve) after pending contributions summing to (to_meter,
    to_reserve), none of them passed on to another meter: what `Meter.contribute` leaves
    applying them one by one (amounts are never negative, so the value climbs to the
    ceiling and every cent beyond it goes where `overflow_to` says)."""
    value = meter.value + to_meter
    ceiling = meter.config.ceiling
    if ceiling is not None and value > ceiling:
        value = max(meter.value, ceiling)
    beyond = meter.value + to_meter - value
    to_reserve += beyond if meter.config.overflow_to == "reserve" else 0
    return Money(value), Money(meter.reserve + to_reserve)


def applied_contribution(meters: list[Meter], event: Event) -> tuple[tuple[int, int], ...]:
    return contribute(meters, event.amounts)


# REVERSAL `share`: its contribution was in the meter when its box's voided award took
# the meter's value (`own_reversals`): it comes back with that award's amount.
IN_RETURN = 1


def own_reversals(events: Iterable[Event], win: Event, meters: list[Meter]) -> list[Event]:
    """The pending reversals of a voided 100 % award's own box (`award` is the box's id
    and the target's) whose contribution the award took with the meter's value.

    Its reset leaves them outside the meter, yet they return to it with the award's
    amount at the void's position: the reversal at that position (5.20: no earlier
    award changes) takes them from the meter, not from the house.
    """
    assert win.award is not None
    box = win.award.rsplit("/", 1)[0]
    reset_key = meters[win.meter].reset_key
    return [
        e
        for e in events
        if e.kind == REVERSAL
        and e.award == box
        and e.source is not None
        and reset_key < e.source.key < win.key
    ]


def reverse_contribution(
    meters: list[Meter], event: Event, *, commit: bool = True, returning: bool = False
) -> None:
    """Apply a REVERSAL event: one voided box's contribution leaves at the void's position.

    The ceiling may have sent part of the round's meter share to the reserve: reverse
    from the meter what the round put there, the rest from the reserve. What the meter
    no longer holds (a reset came between the contribution and the void), or the meter
    or reserve holds less of, the house covers (Meter.reverse). With `commit`, the
    round's event remembers what is left of it (for a later void of another box); a
    display's provisional replay does not commit, and reads a still pending round's
    contribution as contributed.
    """
    source = event.source
    assert source is not None
    applied = source.applied if source.applied is not None else source.amounts
    left = []
    for meter, (m_in, r_in), (m, r) in zip(meters, applied, event.amounts, strict=True):
        from_meter = min(m, m_in)
        beyond = m - from_meter  # what passed the ceiling: in the reserve, or sent on
        passed = beyond if meter.config.overflow_to != "reserve" else 0
        from_reserve = r + beyond - passed
        in_meter = source.key > meter.reset_key or returning or event.share == IN_RETURN
        meter.reverse(from_meter, from_reserve, in_meter=in_meter)
        meter.reverse_passed(passed)
        left.append((m_in - from_meter, r_in - from_reserve))
    if commit:
        source.applied = tuple(left)


def withhold(meters: list[Meter], event: Event) -> tuple[Money, Funding | None, int]:
    """Apply the WIN of a voided award (`Meter.withhold`): (amount, funding, held).

    A 100 % one resets the meter as a win does, and the caller moves the meter's
    `reset_key` as for a win: a reversal after it finds the meter as the history
    without the void does (5.20).
    """
    return meters[event.meter].withhold(event.share)


def give_back(meters: list[Meter], event: Event, held_for: dict[int, int] | None = None) -> int:
    """Apply a RETURN event: what a voided award holds returns to its meter.

    The award's WIN event comes before it (it stands at or before the void's position),
    so the amount is known: in `held_for` during a display's provisional replay, else in
    the WIN event's `applied`, ((amount, held),), set when it became final.
    """
    win = event.source
    assert win is not None
    if held_for is not None and id(win) in held_for:
        held = held_for[id(win)]
    else:
        assert win.applied is not None
        held = win.applied[0][1]
    meters[win.meter].give_back(held)
    return held


# -- contributions and overflow across a link's meters -------------------------------


def contribute(
    meters: Sequence[Meter], amounts: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """Each meter's own (to_meter, to_reserve); returns what each kept on its value and
    reserve (what a void takes back from it), after passing on what went to a meter."""
    applied = []
    passing = [0] * len(meters)
    for i, (meter, (to_meter, to_reserve)) in enumerate(zip(meters, amounts, strict=True)):
        before = meter.overflow_to_meter
        applied.append(meter.contribute(to_meter, to_reserve))
        passing[i] = meter.overflow_to_meter - before
    _pass_on(meters, passing)
    return tuple(applied)


def _pass_on(meters: Sequence[Meter], passing: list[int]) -> None:
    index = {meter.config.id: i for i, meter in enumerate(meters)}
    for _ in range(len(meters)):  # a chain visits each meter once at most
        if not any(passing):
            return
        further = [0] * len(meters)
        for i, amount in enumerate(passing):
            if amount:
                j = index[meters[i].config.overflow_to]
                target = meters[j]
                before = target.overflow_to_meter
                target.overflow_from_meter += amount
                target.contribute(amount, 0)
                further[j] += target.overflow_to_meter - before
        passing = further
    assert not any(passing), "overflow_to forms a cycle (the floor file refuses one)"


def passes_on(meters: Sequence[Meter]) -> bool:
    """Some meter of the link sends its overflow to another."""
    return any(m.config.overflow_to not in ("reserve", "house") for m in meters)
