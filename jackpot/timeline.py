"""A link's timeline: events ordered by event time, final once the watermark passes them.

docs/design.md "Time, order and money": contributions take effect at their round's
closed_at, wins at their box's dealt_at. Events after the watermark are pending and
kept in a heap ordered by `Key`; finalising pops them in that order and applies them
to the meters, so that arrival order within the bounds never changes a result.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator
from dataclasses import dataclass

# Same instant: contributions first (a win at t includes every contribution with
# time <= t, docs/design.md), then wins, then operator resets, then the reversals of voided
# contributions, then the returns of voided awards' amounts (a void takes effect at the
# current position: an award dealt at or before its instant keeps what it was dealt, 5.20).
CONTRIBUTION, WIN, RESET, REVERSAL, RETURN = 0, 1, 2, 3, 4

# (time, kind, tiebreak, table, box, serial): a total order. `serial` is unique per
# link, so two keys are never equal and the event objects are never compared.
Key = tuple[int, int, int, str, int, int]


def tiebreak(time: int, table: str) -> int:
    """Same instant at two tables: a deterministic order that favours no table.

    4.5.2 leaves the order of hands dealt at the same instant to the House. Ordering by
    table id would always favour T01; a hash of (instant, table) is as reproducible,
    is recorded with each award, and gives every table the same chance.
    """
    digest = hashlib.sha256(f"{time}|{table}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


@dataclass(slots=True, eq=False)
class Event:
    """A pending (or applied) timeline event. Mutable: a void cancels it in place."""

    key: Key
    # CONTRIBUTION: per meter (to_meter, to_reserve) as contributed; after applying,
    # `applied` holds what went where (the ceiling may have sent part to the reserve).
    # WIN of a voided award: once applied, `applied` is ((amount taken, amount held),).
    amounts: tuple[tuple[int, int], ...] = ()
    applied: tuple[tuple[int, int], ...] | None = None
    award: str | None = None  # WIN / RESET: the award or reset record's id
    meter: int = 0  # WIN / RESET: index of the meter in the link
    share: int = 0  # WIN: share of the meter
    cancelled: bool = False
    # REVERSAL: the round's contribution event it takes `amounts` (one box's) back from;
    # `award` is then "table/round/box". RETURN: the voided award's WIN event whose
    # amount it gives back to the meter; `award` is the award's id.
    source: Event | None = None

    @property
    def time(self) -> int:
        return self.key[0]

    @property
    def kind(self) -> int:
        return self.key[1]


class Timeline:
    """The pending events of one link, in event order, and the watermark."""

    __slots__ = (
        "heap", "watermark", "serial", "pending_sums", "pending_awards", "pending_reversals",
        "_awards",
    )  # fmt: skip

    def __init__(self, meters: int) -> None:
        self.heap: list[tuple[Key, Event]] = []
        # Every event with time < watermark is final. It never moves back.
        self.watermark = -(2**62)
        self.serial = 0
        # Per meter, the pending (to_meter, to_reserve) sums, for display values.
        self.pending_sums = [[0, 0] for _ in range(meters)]
        self.pending_awards = 0  # pending WIN / RESET events not cancelled
        self.pending_reversals = 0  # pending REVERSAL, RETURN events (derived: not in snapshots)
        self._awards: PendingAwards | None = None  # derived: built when first asked

    def key(self, time: int, kind: int, table: str, box: int) -> Key:
        self.serial += 1
        return (time, kind, tiebreak(time, table), table, box, self.serial)

    def push(self, event: Event) -> None:
        heapq.heappush(self.heap, (event.key, event))
        if event.kind == CONTRIBUTION:
            for sums, (m, r) in zip(self.pending_sums, event.amounts, strict=True):
                sums[0] += m
                sums[1] += r
        elif event.kind >= REVERSAL:
            self.pending_reversals += 1
        else:
            self.pending_awards += 1
            if self._awards is not None:
                self._awards.add(event)

    def cancel(self, event: Event) -> None:
        """Take a pending event out of the timeline (lazy: skipped when popped)."""
        if event.cancelled:
            return
        event.cancelled = True
        self._unpend(event)

    def take(self, event: Event, amounts: tuple[tuple[int, int], ...]) -> None:
        """Take part of a pending contribution out (a void of some of its round's boxes)."""
        if not event.cancelled:
            for sums, (m, r) in zip(self.pending_sums, amounts, strict=True):
                sums[0] -= m
                sums[1] -= r
        event.amounts = tuple(
            (m - dm, r - dr) for (m, r), (dm, dr) in zip(event.amounts, amounts, strict=True)
        )

    def pop_until(self, watermark: int) -> Iterator[Event]:
        """Raise the watermark and yield, in order, the events it makes final."""
        self.watermark = max(self.watermark, watermark)
        heap = self.heap
        while heap and heap[0][0][0] < self.watermark:
            event = heapq.heappop(heap)[1]
            if event.cancelled:
                continue
            self._unpend(event)
            yield event

    def _unpend(self, event: Event) -> None:
        """An event leaves the pending ones (final or cancelled): out of their sums and counts."""
        if event.kind == CONTRIBUTION:
            for sums, (m, r) in zip(self.pending_sums, event.amounts, strict=True):
                sums[0] -= m
                sums[1] -= r
        elif event.kind >= REVERSAL:
            self.pending_reversals -= 1
        else:
            self.pending_awards -= 1
            if self._awards is not None:
                self._awards.drop(event)

    def pending(self) -> list[Event]:
        """The live pending events in event order (for provisional values)."""
        return [event for _, event in sorted(self.heap) if not event.cancelled]

    def pending_award_events(self) -> list[Event]:
        """The pending WIN and RESET events in event order, without sorting the rest."""
        if not self.pending_awards:
            return []
        return sorted(self._award_index().live.values(), key=_key)

    def pending_until(self, key: Key) -> list[Event]:
        """The live pending events up to `key` (included) in event order: the heap's nodes
        above them are before it too, so only those are visited."""
        heap, found, stack = self.heap, [], [0]
        n = len(heap)
        while stack:
            i = stack.pop()
            if i < n and heap[i][0] <= key:
                if not heap[i][1].cancelled:
                    found.append(heap[i])
                stack += (2 * i + 1, 2 * i + 2)
        return [event for _, event in sorted(found)]

    def _award_index(self) -> PendingAwards:
        if self._awards is None or self._awards.of is not self.heap:  # built, or loaded
            self._awards = PendingAwards(self.heap)
        return self._awards

    def earliest_award_time(self) -> int | None:
        if not self.pending_awards:
            return None
        return self._award_index().earliest()


def _key(event: Event) -> Key:
    return event.key


class PendingAwards:
    """A timeline's pending WIN and RESET events by key, for the earliest of them without
    walking every pending contribution: a heap cleaned lazily (an event made final or
    cancelled leaves `live` at once, its entry when it reaches the top). Built from the
    timeline's heap when first asked (after a load as after a replay)."""

    __slots__ = ("of", "live", "order")

    def __init__(self, heap: list[tuple[Key, Event]]) -> None:
        self.of = heap
        self.live = {id(e): e for _, e in heap if e.kind in (WIN, RESET) and not e.cancelled}
        self.order = [(e.key, id(e)) for e in self.live.values()]
        heapq.heapify(self.order)

    def add(self, event: Event) -> None:
        self.live[id(event)] = event
        heapq.heappush(self.order, (event.key, id(event)))

    def drop(self, event: Event) -> None:
        self.live.pop(id(event), None)

    def earliest(self) -> int | None:
        order = self.order
        while order:
            key, ident = order[0]
            event = self.live.get(ident)
            if event is not None and event.key == key:
                return event.time
            heapq.heappop(order)
        return None
