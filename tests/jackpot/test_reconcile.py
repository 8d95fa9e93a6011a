"""Property: a long random history reconciles to the micro-unit for every period split."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import Command, Correct, Finalize, ResetMeter, SetSeed
from jackpot.errors import JackpotError
from jackpot.reconcile import Ledger, reconcile
from tests.jackpot.support import ROYAL, STRAIGHT_FLUSH, bets, floor, m, outcome, void

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
            command = SetSeed("stud", "major", m("9000.00") + value, now, "sam", "x")
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
            amount = m(f"{value % 200}.{box:02d}") * (-1 if op == "adjust" and value % 2 else 1)
            command = Correct(op, "stud", "major", now, "sue", "5.24", amount, reset=value % 2 == 0)
        with contextlib.suppress(JackpotError):
            f.apply(command)
        ledgers.append(Ledger.of(f.links["stud"].meters[0]))
    for i in range(len(ledgers)):
        for j in range(i, len(ledgers)):
            report = reconcile(ledgers[i], ledgers[j])
            assert report.balanced, (i, j, report)
