"""Property: a long random history reconciles to the micro-unit for every period split."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import Command, Correct, Finalize, ResetMeter, SetSeed
from jackpot.errors import JackpotError
from jackpot.money import Money
from jackpot.reconcile import Ledger, reconcile
from tests.unit.jackpot.support import ROYAL, STRAIGHT_FLUSH, bets, floor, m, outcome, void

OPS = st.sampled_from(
    ["bets", "win", "void", "tick", "seed", "reset", "adjust", "hand_paid", "void_final"]
)


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(st.tuples(OPS, st.integers(0, 10_000), st.integers(1, 7)), min_size=5, max_size=80)
)
def test_every_period_split_reconciles(ops: list[tuple[str, int, int]]) -> None:
    f = floor(ceiling="10002.00")
    now, n = 1_000_000, 0
    ledgers = [Ledger.of(f.links["stud"].meters[0])]
    for op, value, box in ops:
        now += value
        n += 1
        command: Command
        if op == "bets":
            command = bets("T1", f"R{n}", now - value % 2_500, now, (box, "1.00"), (8, "5.00"))
        elif op in ("win", "void"):
            open_rounds = [k for k, r in f.rounds.items() if r.state == "open"]
            if not open_rounds:
                continue
            table, rnd = open_rounds[value % len(open_rounds)]
            share = ROYAL if value % 3 == 0 else STRAIGHT_FLUSH
            dealt = f.rounds[(table, rnd)].closed_at + 1
            command = (
                outcome(table, rnd, now, (8, share, dealt))
                if op == "win"
                else void(table, rnd, now)
            )
        elif op == "tick":
            command = Finalize(now)
        elif op == "seed":
            command = SetSeed("stud", "major", Money(m("9000.00") + value), now, "sam", "x")
        elif op == "reset":
            command = ResetMeter("stud", "major", now, "sam", "x")
        elif op == "void_final":
            if not f.rounds:
                continue
            table, rnd = sorted(f.rounds)[value % len(f.rounds)]
            command = Correct(
                "void_round", "stud", "major", now, "sue", "x", table=table, round=rnd
            )
        else:
            sign = -1 if op == "adjust" and value % 2 else 1
            amount = Money(m(f"{value % 200}.{box:02d}") * sign)
            command = Correct(op, "stud", "major", now, "sue", "5.24", amount, reset=value % 2 == 0)
        with contextlib.suppress(JackpotError):
            f.apply(command)
        ledgers.append(Ledger.of(f.links["stud"].meters[0]))
    for i in range(len(ledgers)):
        for j in range(i, len(ledgers)):
            report = reconcile(ledgers[i], ledgers[j])
            assert report.balanced, (i, j, report)


def test_a_void_after_a_reset_shows_as_reversed_and_covered_by_the_house() -> None:
    # R1 voided while R2's royal flush (dealt after R1) is pending.
    f = floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(outcome("T1", "R1", 1_000))
    f.apply(bets("T2", "R2", 500, 500, (1, "1.00")))
    f.apply(outcome("T2", "R2", 2_000, (1, ROYAL, 1_500)))
    opening = Ledger.of(f.links["stud"].meters[0])
    f.apply(void("T1", "R1", 2_200))
    f.apply(Finalize(10_000))
    report = reconcile(opening, Ledger.of(f.links["stud"].meters[0]))
    assert (report.contributions_meter, report.contributions_reserve) == (m("0.50"), m("0.10"))
    assert (report.reversed_meter, report.reversed_reserve) == (m("0.25"), m("0.05"))
    assert report.awards == m("10000.50")
    assert (report.house_cover_meter, report.house_cover_reserve) == (m("0.25"), m("0.05"))
    assert report.closing_value == m("10000.00") and report.closing_reserve == 0
    assert report.balanced
