"""Property: within the bounds, awards and meters do not depend on arrival order
(docs/design.md "Late events")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import Command
from jackpot.floor import Floor
from jackpot.snapshot import dump
from tests.unit.jackpot.support import (
    ROYAL,
    STRAIGHT_FLUSH,
    TIMING,
    bets,
    finalize,
    floor,
    outcome,
    void,
)

WAGERS = ("1.00", "2.00", "5.00")


@dataclass(frozen=True)
class Timed:
    """A table event: its event time on the table's clock and what to post."""

    time: int
    build: Any  # (now) -> Command
    max_delay: int  # arrival no later than time + max_delay (the bounds)
    after: int = -1  # index of an event that must arrive first (bets before outcome)


@st.composite
def worlds(draw: st.DrawFn) -> list[Timed]:
    """Tables dealing rounds of different lengths; some rounds won, some voided."""
    events: list[Timed] = []
    for t in range(draw(st.integers(1, 4))):
        table = f"T{t + 1}"
        clock = draw(st.integers(0, 3_000))
        for r in range(draw(st.integers(1, 3))):
            rnd = f"R{r + 1}"
            closed_at = clock
            boxes = draw(
                st.lists(st.sampled_from(range(1, 8)), min_size=1, max_size=3, unique=True)
            )
            wagers = tuple((b, draw(st.sampled_from(WAGERS))) for b in boxes)
            events.append(
                Timed(
                    closed_at,
                    lambda now, a=(table, rnd, closed_at, wagers): bets(
                        a[0], a[1], a[2], now, *a[3]
                    ),
                    TIMING.hold_ms,
                )
            )
            bets_index = len(events) - 1
            if draw(st.integers(0, 6)) == 0:
                # A void takes effect at the current position (docs/design.md): where it stands
                # is when it arrives, so it arrives at its time (after its bets, which
                # arrive within the hold); the other events arrive in any order around it.
                at = closed_at + TIMING.hold_ms + 1 + draw(st.integers(0, 10_000))
                events.append(
                    Timed(at, lambda now, a=(table, rnd): void(a[0], a[1], now), 0, bets_index)
                )
                clock = at + draw(st.integers(1, 5_000))
                continue
            claims = []
            dealt = closed_at + draw(st.integers(0, 4_000))
            for box in sorted(boxes):
                # the same instant for two boxes, or a later one (box order is deal order)
                dealt += draw(st.sampled_from((0, 0, 1, 250)))
                kind = draw(st.sampled_from((None, None, ROYAL, STRAIGHT_FLUSH)))
                if kind is not None:
                    claims.append((box, kind, dealt))
            at = dealt + draw(st.integers(0, 15_000))
            events.append(
                Timed(
                    at,
                    lambda now, a=(table, rnd, tuple(claims)): outcome(a[0], a[1], now, *a[2]),
                    60_000,
                    bets_index,
                )
            )
            clock = at + draw(st.integers(1, 5_000))
    return events


@st.composite
def schedules(draw: st.DrawFn, events: list[Timed]) -> list[tuple[int, int, bool]]:
    """Arrival (time, event index, finalize after it?) within the bounds."""
    arrivals: list[int] = []
    for e in events:
        arrival = e.time + draw(st.integers(0, e.max_delay))
        if e.after >= 0:
            arrival = max(arrival, arrivals[e.after] + 1)
        arrivals.append(arrival)
    order = sorted(range(len(events)), key=lambda i: (arrivals[i], draw(st.integers(0, 3)), i))
    return [(arrivals[i], i, draw(st.booleans())) for i in order]


def run(events: list[Timed], schedule: list[tuple[int, int, bool]]) -> Floor:
    f = floor()
    for arrival, i, then_finalize in schedule:
        command: Command = events[i].build(arrival)
        f.apply(command)
        if then_finalize:
            f.apply(finalize(arrival))
    end = max(a for a, _, _ in schedule) + TIMING.round_timeout_ms + TIMING.hold_ms + 1
    f.apply(finalize(end))
    return f


def outcome_of(f: Floor) -> dict[str, Any]:
    state = dump(f)
    awards = {
        a["id"]: (a["state"], a["amount"], a["sequence"], a["late"], a["effective_at"])
        for a in state["awards"]
    }
    # reset_key ends with an arrival serial (a unique tie-breaker of no meaning): leave it out.
    meters = [
        {k: v for k, v in m.items() if k != "reset_key"} for m in state["links"]["stud"]["meters"]
    ]
    return {"awards": awards, "meters": meters}


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_arrival_order_within_the_bounds_gives_the_same_awards_order_and_meters(
    data: st.DataObject,
) -> None:
    events = data.draw(worlds())
    first = run(events, data.draw(schedules(events)))
    second = run(events, data.draw(schedules(events)))
    assert outcome_of(first) == outcome_of(second)
    assert not any(a.late for a in first.awards.values())
    assert all(a.state in ("final", "void") for a in first.awards.values())
    assert all(m.balanced() for m in first.links["stud"].meters)
