"""Must-hit-by levels in the core: the first contribution in event order to reach the
trigger wins, for its box, at the meter's value then; one hit per draw (docs/design.md)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import ArmTrigger, BoxWager, CloseBets, Command, RecordOutcome
from jackpot.config import LinkConfig, MeterConfig
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.floor import Floor
from jackpot.money import CENT, RATE_SCALE, Money, floor_cents, parse_rate
from jackpot.mystery import commitment, reveal_problems
from jackpot.mystery_levels import MUST_HIT, MysteryAward, unarmed
from jackpot.snapshot import dump, load
from jackpot.timeline import tiebreak
from tests.unit.jackpot.support import TIMING, finalize, m, void
from tests.unit.jackpot.test_arrival_order import Timed, schedules

NONCE = "0f" * 16
START = 1_800_000_000_000


def mystery_floor(ceiling: str | None = None) -> Floor:
    meters = (
        MeterConfig("major", m("10000.00"), parse_rate("0.20"), parse_rate("0.05")),
        MeterConfig("mystery", m("50.00"), parse_rate("0.05"), parse_rate("0"),
                    None if ceiling is None else m(ceiling), must_hit_by=m("60.00")),
    )  # fmt: skip
    return Floor([LinkConfig("stud", meters)], TIMING)


def arm(f: Floor, trigger: str, now: int = START) -> None:
    f.apply(ArmTrigger("stud", "mystery", now, m(trigger), NONCE))


def bets(table: str, rnd: str, closed_at: int, now: int, *wagers: str) -> CloseBets:
    boxes = tuple(BoxWager(box, m(w)) for box, w in enumerate(wagers, start=1))
    return CloseBets(table, rnd, "stud", closed_at, now, boxes)


def settle(table: str, rnd: str, now: int) -> RecordOutcome:
    return RecordOutcome(table, rnd, now, ())


def hits(f: Floor) -> list[tuple[str, str]]:
    return [(a.id, f"{a.amount}") for a in f.awards.values() if a.hand == MUST_HIT]


def test_the_first_box_to_reach_the_trigger_wins_the_value_at_its_instant() -> None:
    f = mystery_floor()
    arm(f, "50.10")
    # 1.00 wagers add 0.05 each: box 2 takes the meter from 50.05 to 50.10.
    f.apply(bets("T1", "R1", START + 100, START + 100, "1.00", "1.00", "1.00"))
    f.apply(settle("T1", "R1", START + 200))
    f.apply(finalize(START + 5_000))
    (award,) = [a for a in f.awards.values() if a.hand == MUST_HIT]
    assert (award.table, award.round, award.box, award.meter) == ("T1", "R1", 2, "mystery")
    assert award.amount == m("50.15")  # the round's three boxes at one instant (closed_at)
    assert award.state == "final"
    meter = f.links["stud"].meters[1]
    assert meter.value == m("50.00") and meter.trigger is None  # reset, awaiting a draw
    assert isinstance(award, MysteryAward) and award.reveal is not None
    reveal = award.reveal
    assert (reveal.trigger, reveal.nonce) == (m("50.10"), NONCE)
    assert reveal.commitment == commitment(m("50.10"), NONCE)
    assert unarmed(f) == [("stud", "mystery", m("50.00"), m("60.00"))]


def test_event_time_decides_not_arrival_a_round_closed_earlier_wins() -> None:
    f = mystery_floor()
    arm(f, "50.05")
    f.apply(bets("T1", "R1", START + 500, START + 500, "1.00"))
    f.apply(bets("T2", "R1", START + 100, START + 900, "1.00"))  # within the hold
    f.apply(settle("T1", "R1", START + 1_000))
    f.apply(settle("T2", "R1", START + 1_000))
    f.apply(finalize(START + 5_000))
    assert hits(f) == [("T2/R1/1/must_hit_by:mystery", f"{m('50.05')}")]


def test_one_hit_per_draw_finalising_stops_until_the_next_trigger() -> None:
    f = mystery_floor()
    arm(f, "50.05")
    f.apply(bets("T1", "R1", START + 100, START + 100, "1.00"))
    f.apply(bets("T1", "R2", START + 200, START + 200, "1.00"))
    f.apply(settle("T1", "R1", START + 300))
    f.apply(settle("T1", "R2", START + 300))
    f.apply(finalize(START + 5_000))
    assert len(hits(f)) == 1
    assert f.links["stud"].meters[1].value == m("50.00")  # R2's contribution still pending
    arm(f, "50.05", START + 5_001)
    f.apply(finalize(START + 5_002))
    assert [h[0] for h in hits(f)] == ["T1/R1/1/must_hit_by:mystery", "T1/R2/1/must_hit_by:mystery"]


def test_a_returned_wager_and_a_voided_box_never_trigger() -> None:
    f = mystery_floor()
    arm(f, "50.05")
    f.apply(bets("T1", "R1", START + 100, START + 100, "0", "1.00", "1.00"))
    f.apply(void("T1", "R1", START + 150, (2,)))  # box 2 voided before its place is final
    f.apply(settle("T1", "R1", START + 200))
    f.apply(finalize(START + 5_000))
    # box 1 returned (no wager), box 2 voided: box 3 reaches 50.10 and wins
    assert [h[0] for h in hits(f)] == ["T1/R1/3/must_hit_by:mystery"]


def test_a_final_hit_cannot_be_voided_by_its_table() -> None:
    f = mystery_floor()
    arm(f, "50.05")
    f.apply(bets("T1", "R1", START + 100, START + 100, "1.00"))
    f.apply(settle("T1", "R1", START + 200))
    f.apply(finalize(START + 5_000))
    with pytest.raises(StateConflictError, match="already final"):
        f.apply(void("T1", "R1", START + 6_000))


@pytest.mark.parametrize("trigger", ["49.99", "60.00", "50.001"])
def test_a_trigger_outside_from_by_is_refused(trigger: str) -> None:
    f = mystery_floor()
    with pytest.raises((InvalidCommandError, ValueError)):
        f.apply(ArmTrigger("stud", "mystery", START, Money(m("50.00") + 1), NONCE))
    if trigger != "50.001":
        with pytest.raises(InvalidCommandError):
            arm(f, trigger)


def test_a_meter_is_armed_once_and_only_a_must_hit_by_meter() -> None:
    f = mystery_floor()
    arm(f, "55.00")
    with pytest.raises(StateConflictError):
        arm(f, "56.00")
    with pytest.raises(InvalidCommandError, match="no must_hit_by"):
        f.apply(ArmTrigger("stud", "major", START, m("10001.00"), NONCE))


# -- properties ----------------------------------------------------------------------------

LOW, HIGH = m("50.00"), m("52.00")
WAGERS = ("0", "1.00", "5.00")  # "0": a returned wager


def nth_trigger(n: int) -> Money:
    return Money(LOW + (n * 7_919) % ((HIGH - LOW) // CENT) * CENT)


@st.composite
def worlds(draw: st.DrawFn) -> list[tuple[Timed, Any]]:
    """Tables closing rounds (1-3 boxes of 1.00 or 5.00), each settled with no claim."""
    events: list[tuple[Timed, Any]] = []
    for t in range(draw(st.integers(1, 3))):
        table, clock = f"T{t + 1}", draw(st.integers(0, 3_000))
        for r in range(draw(st.integers(1, 6))):
            wagers = tuple(draw(st.lists(st.sampled_from(WAGERS), min_size=1, max_size=3)))
            rnd, closed_at = f"R{r + 1}", clock
            bet = Timed(closed_at, _bets(table, rnd, closed_at, wagers), TIMING.hold_ms)
            events.append((bet, (table, closed_at, wagers)))
            after = len(events) - 1
            at = closed_at + draw(st.integers(0, 15_000))
            events.append((Timed(at, _settle(table, rnd), 60_000, after), None))
            clock = at + draw(st.integers(1, 5_000))
    return events


def _bets(table: str, rnd: str, closed_at: int, wagers: tuple[str, ...]) -> Any:
    return lambda now: bets(table, rnd, closed_at, now, *wagers)


def _settle(table: str, rnd: str) -> Any:
    return lambda now: settle(table, rnd, now)


class Drawer:
    """The writer's part: arm the level at the start and after every hit."""

    def __init__(self) -> None:
        self.draws = 0

    def arm_if_needed(self, f: Floor, now: int) -> bool:
        if not unarmed(f):
            return False
        f.apply(ArmTrigger("stud", "mystery", now, nth_trigger(self.draws), NONCE))
        self.draws += 1
        return True


def mystery_only() -> Floor:
    meters = (
        MeterConfig("major", m("10000.00"), parse_rate("0.20"), parse_rate("0.05")),
        MeterConfig("mystery", LOW, parse_rate("0.05"), parse_rate("0.01"), must_hit_by=HIGH),
    )
    return Floor([LinkConfig("stud", meters)], TIMING)


def run(events: list[Timed], schedule: list[tuple[int, int, bool]]) -> tuple[Floor, Drawer]:
    f, drawer = mystery_only(), Drawer()
    drawer.arm_if_needed(f, 0)
    end = max(a for a, _, _ in schedule) + TIMING.round_timeout_ms + TIMING.hold_ms + 1
    for arrival, i, then_finalize in [*schedule, (end, -1, True)]:
        if i >= 0:
            command: Command = events[i].build(arrival)
            f.apply(command)
        while then_finalize:
            f.apply(finalize(arrival))
            then_finalize = drawer.arm_if_needed(f, arrival)
    return f, drawer


def model(world: list[tuple[Timed, Any]]) -> list[tuple[str, int, int]]:
    """An independent model: every box's 0.05 of its wager in event order (closed_at, the
    documented tie-break, then box order); the first to reach the trigger wins the value
    after its round, in whole cents; the meter goes back to its seed."""
    rounds = sorted((closed_at, tiebreak(closed_at, table), table, wagers)
                    for _, info in world if info is not None
                    for table, closed_at, wagers in [info])  # fmt: skip
    value: int = LOW
    draws = 0
    won: list[tuple[str, int, int]] = []
    for _, _, table, wagers in rounds:
        trigger = nth_trigger(draws)
        winner = None
        for box, wager in enumerate(wagers, start=1):
            add = m(wager) * 500 // RATE_SCALE
            value += add
            if winner is None and add > 0 and value >= trigger:
                winner = box
        if winner is not None:
            won.append((table, winner, floor_cents(value)))
            value, draws = LOW, draws + 1
    return won


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_first_crossing_decides_whatever_the_arrival_order(data: st.DataObject) -> None:
    world = data.draw(worlds())
    events = [timed for timed, _ in world]
    first, drawer = run(events, data.draw(schedules(events)))
    second, _ = run(events, data.draw(schedules(events)))
    got = [(a.table, a.box, a.amount) for a in first.awards.values() if a.hand == MUST_HIT]
    assert sorted(got, key=str) == sorted(model(world), key=str)
    assert hits(first) == hits(second)
    # Exactly one hit per draw: every draw but the armed one was won, once.
    assert len(got) == drawer.draws - 1
    for award in first.awards.values():
        reveal = getattr(award, "reveal", None)
        if reveal is not None:
            assert reveal_problems(reveal.commitment, reveal.trigger, reveal.nonce, LOW, HIGH) == []
            assert award.state == "final"
    assert all(meter.balanced() for meter in first.links["stud"].meters)


def test_a_snapshot_keeps_the_armed_trigger_and_the_reveals() -> None:
    f = mystery_floor()
    arm(f, "50.05")
    f.apply(bets("T1", "R1", START + 100, START + 100, "1.00"))
    f.apply(settle("T1", "R1", START + 200))
    f.apply(finalize(START + 5_000))
    arm(f, "57.31", START + 5_001)
    data = dump(f)
    again = load(data, list(f.links["stud"].config for _ in [0]), TIMING)
    assert dump(again) == data
    assert again.links["stud"].meters[1].trigger == f.links["stud"].meters[1].trigger
    assert [getattr(a, "reveal", None) for a in again.awards.values()] == [
        getattr(a, "reveal", None) for a in f.awards.values()
    ]
