"""Property (issue 16, item 4): a void takes effect at the current position (docs/design.md).

Random floors of bets, wins, voids, operator resets and adjustments: money is conserved
at every step (contributions in + house funding + corrections = awards out + meter +
reserve + reversed + what voided awards hold until their void's position), and no award
dealt before a void changes: the same history without the void pays every such award the
same amount (5.20, 4.5.1), and a voided award of its own takes at its place what it
would have paid. Compared for voids of settled rounds, with or without a pending award
of their own (a void of an open round changes the watermark, so the two histories'
later outcomes differ in lateness).
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from jackpot.commands import Command, Correct, Finalize, ResetMeter, VoidRound
from jackpot.errors import JackpotError
from jackpot.floor import Floor, VoidResult
from jackpot.records import FINAL, PENDING, SETTLED, VOID
from jackpot.timeline import RESET, WIN
from tests.unit.jackpot.support import ROYAL, STRAIGHT_FLUSH, TIMING, bets, floor, m, outcome, void

OPS = st.sampled_from(["bets", "bets", "win", "settle", "void", "tick", "reset", "adjust"])


def conserved(f: Floor) -> None:
    for mt in f.links["stud"].meters:
        assert mt.balanced()
        assert (
            mt.to_meter + mt.to_reserve + mt.house_funded + mt.corrections
            == mt.awarded
            + mt.value
            + mt.reserve
            + mt.reversed_meter
            + mt.reversed_reserve
            + mt.withheld
        )
        assert mt.value >= 0 and mt.reserve >= 0 and mt.withheld >= 0


def pending_counted(f: Floor) -> None:
    """docs/design.md, the watermark: what is pending for someone ("jackpot pending"): every
    live WIN of a pending award and RESET on the timeline; a voided award's WIN, still
    waiting for its place (5.20), is not."""
    live = f.links["stud"].timeline.pending()
    wins = [e for e in live if e.kind == WIN and f.awards[str(e.award)].state == PENDING]
    assert f.pending_count("stud") == len(wins) + sum(1 for e in live if e.kind == RESET)


def replay(commands: list[Command], end: int) -> tuple[Floor, bool]:
    """The floor after the commands and a last finalize; False if one was refused."""
    f = floor()
    accepted = True
    for command in commands:
        try:
            f.apply(command)
        except JackpotError:
            accepted = False
    f.apply(Finalize(end))
    return f, accepted


@settings(max_examples=400, deadline=None)
@given(
    ops=st.lists(
        st.tuples(OPS, st.integers(0, 4_000), st.integers(1, 7), st.sampled_from(["T1", "T2"])),
        min_size=5,
        max_size=60,
    )
)
def test_voids_at_the_current_position_conserve_money_and_change_no_earlier_award(  # noqa: C901, PLR0912 - the model: one branch per op
    ops: list[tuple[str, int, int, str]],
) -> None:
    f = floor()
    now, n = 1_000_000, 0
    commands: list[Command] = []
    voids: list[int] = []  # indexes of voids of settled rounds
    for op, value, box, table in ops:
        now += value
        n += 1
        command: Command
        rounds = sorted(f.rounds.items())
        open_ = [k for k, r in rounds if r.state == "open"]
        settled = [k for k, r in rounds if r.state == SETTLED]
        rounds_ = {k: r.awards for k, r in rounds}
        if op == "bets":
            # now and then late (more than hold after closing): at the current position
            closed = now - value % 3_000
            command = bets(table, f"R{n}", closed, now, (box, "1.00"), (8, "5.00"))
        elif op in ("win", "settle") and open_:
            key = open_[value % len(open_)]
            rnd = f.rounds[key]
            share = ROYAL if value % 3 == 0 else STRAIGHT_FLUSH
            dealt = rnd.closed_at + value % max(1, now - rnd.closed_at + 1)
            claims = [(8, share, dealt)] if op == "win" else []
            command = outcome(key[0], key[1], now, *claims)
        elif op == "void" and (settled or open_):
            # a settled round whose award is still pending, half of the time there is one
            held = [k for k in settled if any(f.awards[a].state == PENDING for a in rounds_[k])]
            pool = held if value % 2 and held else settled if value % 4 else open_
            key = (pool or settled or open_)[value % len(pool or settled or open_)]
            boxes = None if value % 3 else (8,)
            command = void(key[0], key[1], now, boxes)
        elif op == "reset":
            command = ResetMeter("stud", "major", now, "sam", "x")
        elif op == "adjust":
            command = Correct("adjust", "stud", "major", now, "sue", "5.24", m("5.00"))
        else:
            command = Finalize(now)
        was_settled = (
            isinstance(command, VoidRound)
            and f.rounds[(command.table, command.round)].state == SETTLED
        )
        try:
            result = f.apply(command)
        except JackpotError:
            conserved(f)
            continue
        commands.append(command)
        conserved(f)  # at every step
        pending_counted(f)
        if was_settled and isinstance(result, VoidResult):
            voids.append(len(commands) - 1)
            if result.cancelled:
                event("a void of a settled round voided a pending award of its own")
    end = now + TIMING.round_timeout_ms + TIMING.hold_ms + 1
    with_voids, _ = replay(commands, end)
    conserved(with_voids)
    for i in voids:
        at = commands[i].now
        without, accepted = replay(commands[:i] + commands[i + 1 :], end)
        if not accepted:
            continue  # another command depended on the void: not the same history
        for award in with_voids.awards.values():
            if award.claimed_at > at or award.effective_at > at or award.amount is None:
                continue
            other = without.awards[award.id]
            # Dealt before the void: the same place and the same amount without it (a
            # voided one: what it took at its place, paid to nobody).
            assert award.state in (FINAL, VOID)
            assert other.effective_at == award.effective_at
            assert other.amount == award.amount, (award.id, commands[i])
