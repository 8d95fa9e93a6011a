"""Properties of a tiered link: each level in its own deal order (4.5.1, 4.5.2 per meter),
whatever the arrival order within the bounds; levels never change each other's awards;
money is conserved on every level."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import Command, MeterClaim, RecordOutcome
from jackpot.config import LinkConfig, MeterConfig
from jackpot.floor import Floor
from jackpot.money import Rate, parse_rate
from tests.unit.jackpot.support import TIMING, bets, finalize, m, void
from tests.unit.jackpot.test_arrival_order import Timed, outcome_of, schedules

LEVELS = ("major", "minor", "mini")
SHARES = (Rate(10_000), Rate(5_000), Rate(1_000))


def tiered_floor() -> Floor:
    meters = (
        MeterConfig("major", m("10000.00"), parse_rate("0.20"), parse_rate("0.05")),
        MeterConfig("minor", m("500.00"), parse_rate("0.05"), parse_rate("0.01"), m("520.00")),
        MeterConfig("mini", m("50.00"), parse_rate("0.03"), parse_rate("0")),
    )
    return Floor([LinkConfig("stud", meters)], TIMING)


Claim = tuple[int, str, Rate, int]  # box, meter, share, dealt_at


def _outcome(table: str, rnd: str, now: int, claims: tuple[Claim, ...]) -> RecordOutcome:
    return RecordOutcome(
        table,
        rnd,
        now,
        tuple(
            MeterClaim(box, "player", "x", share, dealt, meter)
            for box, meter, share, dealt in claims
        ),
    )


def _bets(table: str, rnd: str, closed_at: int, wagers: tuple[tuple[int, str], ...]) -> Any:
    return lambda now: bets(table, rnd, closed_at, now, *wagers)


def _void(table: str, rnd: str) -> Any:
    return lambda now: void(table, rnd, now)


def _claims(table: str, rnd: str, claims: tuple[Claim, ...]) -> Any:
    return lambda now: _outcome(table, rnd, now, claims)


@st.composite
def worlds(draw: st.DrawFn) -> list[tuple[Timed, tuple[Claim, ...]]]:
    """Tables dealing rounds; each win names a level; some rounds are voided."""
    events: list[tuple[Timed, tuple[Claim, ...]]] = []
    for t in range(draw(st.integers(1, 3))):
        table, clock = f"T{t + 1}", draw(st.integers(0, 3_000))
        for r in range(draw(st.integers(1, 3))):
            rnd, closed_at = f"R{r + 1}", clock
            boxes = draw(
                st.lists(st.sampled_from(range(1, 8)), min_size=1, max_size=3, unique=True)
            )
            wagers = tuple((b, draw(st.sampled_from(("1.00", "5.00")))) for b in boxes)
            events.append(
                (Timed(closed_at, _bets(table, rnd, closed_at, wagers), TIMING.hold_ms), ())
            )
            after = len(events) - 1
            if draw(st.integers(0, 6)) == 0:
                at = closed_at + TIMING.hold_ms + 1 + draw(st.integers(0, 10_000))
                events.append((Timed(at, _void(table, rnd), 0, after), ()))
                clock = at + draw(st.integers(1, 5_000))
                continue
            claims: list[Claim] = []
            dealt = closed_at + draw(st.integers(0, 4_000))
            for box in sorted(boxes):
                dealt += draw(st.sampled_from((0, 1, 250)))
                if draw(st.booleans()):
                    level = draw(st.integers(0, 2))
                    claims.append((box, LEVELS[level], draw(st.sampled_from(SHARES)), dealt))
            at = dealt + draw(st.integers(0, 15_000))
            done = tuple(claims)
            events.append((Timed(at, _claims(table, rnd, done), 60_000, after), done))
            clock = at + draw(st.integers(1, 5_000))
    return events


def run(events: list[Timed], schedule: list[tuple[int, int, bool]]) -> Floor:
    f = tiered_floor()
    for arrival, i, then_finalize in schedule:
        command: Command = events[i].build(arrival)
        f.apply(command)
        if then_finalize:
            f.apply(finalize(arrival))
    f.apply(finalize(max(a for a, _, _ in schedule) + TIMING.round_timeout_ms + TIMING.hold_ms + 1))
    return f


def only_level(world: list[tuple[Timed, tuple[Claim, ...]]], level: str) -> list[Timed]:
    """The same world with the wins of every other level taken out."""
    kept: list[Timed] = []
    for timed, claims in world:
        if claims:
            mine = tuple(c for c in claims if c[1] == level)
            build = timed.build

            def rebuilt(now: int, b: Any = build, mine: tuple[Claim, ...] = mine) -> RecordOutcome:
                full: RecordOutcome = b(now)
                return _outcome(full.table, full.round, now, mine)

            timed = Timed(timed.time, rebuilt, timed.max_delay, timed.after)
        kept.append(timed)
    return kept


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_4_5_each_level_pays_in_deal_order_whatever_the_arrival_order(data: st.DataObject) -> None:
    world = data.draw(worlds())
    events = [timed for timed, _ in world]
    first = run(events, data.draw(schedules(events)))
    second = run(events, data.draw(schedules(events)))
    assert outcome_of(first) == outcome_of(second)
    assert all(a.state in ("final", "void") for a in first.awards.values())
    # Money is conserved on every level: its ledger balances, every flow accounted for.
    assert all(meter.balanced() for meter in first.links["stud"].meters)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_level_s_awards_do_not_depend_on_the_other_levels_wins(data: st.DataObject) -> None:
    world = data.draw(worlds())
    events = [timed for timed, _ in world]
    schedule = data.draw(schedules(events))
    together = run(events, schedule)
    for index, level in enumerate(LEVELS):
        alone = run(only_level(world, level), schedule)
        mine = {k: (a.state, a.amount) for k, a in together.awards.items() if a.meter == level}
        assert mine == {k: (a.state, a.amount) for k, a in alone.awards.items()}
        assert together.links["stud"].meters[index].value == alone.links["stud"].meters[index].value
