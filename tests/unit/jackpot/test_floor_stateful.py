"""Stateful property test: links driven through bets, wins, voids, seeds and resets."""

from __future__ import annotations

import contextlib

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from jackpot.canonical import canonical_json
from jackpot.commands import Command, Correct, Finalize, ResetMeter, SetSeed
from jackpot.errors import JackpotError, StateConflictError
from jackpot.floor import FinalizeResult, Floor
from jackpot.money import CENT, RATE_SCALE, Money, floor_cents
from jackpot.records import FINAL, OPEN, AwardRecord
from jackpot.snapshot import dump, load
from tests.unit.jackpot.support import (
    ROYAL,
    STRAIGHT_FLUSH,
    TIMING,
    bets,
    floor,
    m,
    outcome,
    stud_link,
    void,
)


class FloorMachine(RuleBasedStateMachine):
    CEILING: str | None = None

    def __init__(self) -> None:
        super().__init__()
        self.floor = floor(ceiling=self.CEILING)
        self.commands: list[Command] = []
        self.now = 1_000_000
        self.rounds = 0
        self.values = self.final_values()

    def final_values(self) -> list[int]:
        return [mt.value for mt in self.floor.links["stud"].meters]

    def apply(self, command: Command) -> object:
        result = self.floor.apply(command)
        self.commands.append(command)  # only accepted commands are journaled
        return result

    @rule(step=st.integers(0, 6_000))
    def tick(self, step: int) -> None:
        self.now += step
        before = self.final_values()
        result = self.apply(Finalize(self.now))
        assert isinstance(result, FinalizeResult)
        # A meter decreases only by an award, a void or an operator change: at a finalize,
        # by an award (a voided one too, at its place), a reset or a void's reversal that
        # the watermark passed.
        if not result.finalized and not result.reversed and not result.withheld:
            assert all(a >= b for a, b in zip(self.final_values(), before, strict=True))
        for record in [*result.finalized, *result.withheld]:
            if isinstance(record, AwardRecord):
                assert record.meter_value is not None and record.amount is not None
                assert 0 <= record.amount <= record.meter_value
                assert record.amount == floor_cents(record.meter_value * record.share // RATE_SCALE)

    @rule(
        table=st.sampled_from(["T1", "T2", "T3"]),
        boxes=st.lists(
            st.tuples(st.integers(1, 7), st.sampled_from(["1.00", "2.00", "0.50"])),
            min_size=1,
            max_size=4,
            unique_by=lambda b: b[0],
        ),
        age=st.one_of(st.integers(0, 2_000), st.integers(2_001, 180_000)),
    )
    def close_bets(self, table: str, boxes: list[tuple[int, str]], age: int) -> None:
        self.rounds += 1
        self.apply(bets(table, f"R{self.rounds}", self.now - age, self.now, *boxes))

    @precondition(lambda self: any(r.state == OPEN for r in self.floor.rounds.values()))
    @rule(data=st.data())
    def post_outcome(self, data: st.DataObject) -> None:
        open_rounds = sorted(k for k, r in self.floor.rounds.items() if r.state == OPEN)
        table, rnd_id = data.draw(st.sampled_from(open_rounds))
        rnd = self.floor.rounds[(table, rnd_id)]
        claims = []
        for box in sorted(b for b, rec in rnd.boxes.items() if rec.wager and not rec.voided):
            share = data.draw(st.sampled_from([None, None, ROYAL, STRAIGHT_FLUSH]))
            if share is not None:
                dealt = data.draw(st.integers(rnd.closed_at, max(rnd.closed_at, self.now)))
                claims.append((box, share, dealt))
        before = self.final_values()
        self.apply(outcome(table, rnd_id, self.now, *claims))
        assert self.final_values() == before  # an outcome only claims; finalising pays

    @precondition(lambda self: bool(self.floor.rounds))
    @rule(data=st.data())
    def void_round(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.floor.rounds)))
        rnd = self.floor.rounds[key]
        boxes = data.draw(
            st.one_of(
                st.none(), st.lists(st.sampled_from(sorted(rnd.boxes)), min_size=1, unique=True)
            )
        )
        final = any(
            self.floor.awards[a].state == FINAL
            and (boxes is None or self.floor.awards[a].box in boxes)
            for a in rnd.awards
        )
        try:
            self.apply(void(key[0], key[1], self.now, None if boxes is None else tuple(boxes)))
        except StateConflictError:
            assert final or rnd.state == "void"
        else:
            assert not final

    @rule(seed=st.sampled_from(["0", "5000.00", "10000.00", "15000.00", "40000.00"]))
    def set_seed(self, seed: str) -> None:
        # The floor file's bound (app/floor.py): a seed is at most the meter's ceiling.
        ceiling = None if self.CEILING is None else m(self.CEILING)
        before = canonical_json(dump(self.floor))
        try:
            self.apply(SetSeed("stud", "major", m(seed), self.now, "sam", "test"))
        except JackpotError:
            assert ceiling is not None and m(seed) > ceiling
            assert canonical_json(dump(self.floor)) == before
        else:
            assert ceiling is None or m(seed) <= ceiling

    @rule()
    def reset(self) -> None:
        self.apply(ResetMeter("stud", "major", self.now, "sam", "test"))

    @rule(
        kind=st.sampled_from(["adjust", "hand_paid"]),
        amount=st.sampled_from(["0.01", "100.00", "12000.00"]),
        negative=st.booleans(),
        reset=st.booleans(),
    )
    def correct(self, kind: str, amount: str, negative: bool, reset: bool) -> None:
        value = Money(m(amount) * (-1 if negative and kind == "adjust" else 1))
        command = Correct(kind, "stud", "major", self.now, "sam", "5.24", value, reset)
        before = self.floor.links["stud"].meters[0].value
        ceiling = None if self.CEILING is None else m(self.CEILING)
        above = ceiling is not None and value > 0 and before + value > ceiling
        try:
            self.apply(command)
        except JackpotError:
            assert kind == "adjust" and (before + value < 0 or above)
        else:
            assert not (kind == "adjust" and above)
            self.values = self.final_values()

    @precondition(lambda self: bool(self.floor.rounds))
    @rule(data=st.data())
    def void_final_round(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.floor.rounds)))
        command = Correct(
            "void_round", "stud", "major", self.now, "sue", "5.24", table=key[0], round=key[1]
        )
        try:
            self.apply(command)
        except StateConflictError:
            assert self.floor.rounds[key].state == "void"

    @rule()
    def bad_command_changes_nothing(self) -> None:
        before = canonical_json(dump(self.floor))
        with contextlib.suppress(JackpotError):
            self.floor.apply(bets("T1", "R1", self.now + 10_000, self.now, (1, "1.00")))
        assert canonical_json(dump(self.floor)) == before

    @invariant()
    def money_is_conserved(self) -> None:
        for meter in self.floor.links["stud"].meters:
            assert meter.balanced()
            assert (
                meter.contributed + meter.house_funded + meter.corrections
                == meter.awarded + meter.value + meter.reserve + meter.withheld
            )
            assert meter.value >= 0 and meter.reserve >= 0 and meter.withheld >= 0
            assert meter.awarded % CENT == 0
            # A reset never takes a meter beyond its ceiling: no seed is above it.
            ceiling = meter.config.ceiling
            assert ceiling is None or max(meter.seed, meter.next_seed or 0) <= ceiling

    @invariant()
    def pending_sums_match_the_pending_contributions(self) -> None:
        tl = self.floor.links["stud"].timeline
        live = [e for e in tl.pending() if e.kind == 0]
        assert tl.pending_sums == [
            [sum(e.amounts[0][0] for e in live), sum(e.amounts[0][1] for e in live)]
        ]

    def teardown(self) -> None:
        # Replaying the journal reproduces the state exactly, and so does a snapshot.
        state = canonical_json(dump(self.floor))
        replayed = Floor([stud_link(ceiling=self.CEILING)], TIMING)
        for command in self.commands:
            replayed.apply(command)
        assert canonical_json(dump(replayed)) == state
        links = [stud_link(ceiling=self.CEILING)]
        assert canonical_json(dump(load(dump(self.floor), links, TIMING))) == state


FloorMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_floor_state_machine = FloorMachine.TestCase


class CeilingMachine(FloorMachine):
    """The same floor with a ceiling between the seeds an operator may try."""

    CEILING = "20000.00"


CeilingMachine.TestCase.settings = FloorMachine.TestCase.settings
test_floor_with_a_ceiling_state_machine = CeilingMachine.TestCase
