"""Expiry of abandoned rounds (jackpot/expiry.py): open too long, no outcome."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.canonical import canonical_json
from jackpot.commands import CloseBets, Command, Expire
from jackpot.config import Timing
from jackpot.errors import JackpotError, StateConflictError
from jackpot.floor import ExpireResult, Floor
from jackpot.records import EXPIRED, FINAL, OPEN, VOID
from jackpot.snapshot import dump, load
from tests.unit.jackpot.support import ROYAL, TIMING, bets, finalize, m, outcome, stud_link, void

AFTER = TIMING.expire_after_ms  # 10 round timeouts by default: 30 minutes
RETAIN = 600_000


def new_floor() -> Floor:
    return Floor([stud_link()], TIMING, retain_ms=RETAIN)


def value(f: Floor) -> int:
    return f.links["stud"].meters[0].value


def test_the_default_is_ten_round_timeouts() -> None:
    assert Timing().expire_after_ms == 10 * Timing().round_timeout_ms  # 30 minutes


def test_expirable_names_open_rounds_received_more_than_expire_after_ago_oldest_first() -> None:
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R1", 100, 100, (1, "0")))  # no jackpot wager: leaves memory too
    f.apply(CloseBets("W1", "R1", None, 200, 200, ()))  # a table with no link (western_stud)
    f.apply(bets("T1", "R2", 300, 300, (1, "1.00")))
    f.apply(outcome("T1", "R2", 400))  # settled: never expired
    assert f.expirable(AFTER, 10) == []  # open exactly expire_after: not yet
    assert f.expire_due() == AFTER + 1
    assert f.expirable(AFTER + 1, 10) == [("T1", "R1")]
    assert f.expirable(AFTER + 500, 10) == [("T1", "R1"), ("T2", "R1"), ("W1", "R1")]
    assert f.expirable(AFTER + 500, 2) == [("T1", "R1"), ("T2", "R1")]


def test_an_expired_round_leaves_the_open_set_its_contribution_stays_its_outcome_is_409() -> None:
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00"), (2, "1.00")))
    f.apply(finalize(200_000))  # stale: no longer holds its own contribution
    shown = value(f)
    assert shown == m("10000.50")  # 25 % of two 1.00 wagers, on display (4.5.1)
    result = f.apply(Expire(AFTER + 1, (("T1", "R1"),)))
    assert isinstance(result, ExpireResult) and result.rounds[0].state == EXPIRED
    assert f.links["stud"].open_rounds == {}
    assert f.expired == {"T1": 1}
    assert value(f) == shown
    with pytest.raises(StateConflictError, match="expired"):
        f.apply(outcome("T1", "R1", AFTER + 2, (1, ROYAL, 5)))
    assert f.rounds[("T1", "R1")].state == EXPIRED and not f.awards


def test_an_expired_round_no_longer_holds_an_award_back() -> None:
    # It stopped holding at round_timeout already (docs/design.md, the watermark); expired, it
    # is out of the set that watermark_at and due_at walk.
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(Expire(AFTER + 1, (("T1", "R1"),)))
    t = AFTER + 10
    f.apply(bets("T2", "R1", t, t, (1, "1.00")))
    f.apply(outcome("T2", "R1", t + 100, (1, ROYAL, t + 50)))
    assert f.due_at() == t + 50 + TIMING.hold_ms + 1
    f.apply(finalize(t + 50 + TIMING.hold_ms + 1))
    assert f.awards["T2/R1/1/player"].state == FINAL


def test_expire_is_atomic_and_refuses_a_round_that_is_not_open() -> None:
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T1", "R2", 0, 0, (1, "1.00")))
    f.apply(void("T1", "R2", 10))
    before = canonical_json(dump(f))
    for rounds in ((("T1", "R1"), ("T1", "R2")), (("T1", "R1"), ("T1", "R1")), (("T1", "R9"),)):
        with pytest.raises(JackpotError):
            f.apply(Expire(AFTER + 1, rounds))
        assert canonical_json(dump(f)) == before  # a refused entry changes nothing


def test_a_void_of_an_expired_round_reverses_its_contribution_at_the_current_position() -> None:
    # docs/design.md: a void reverses contributions at the current position, like a late event;
    # an award final before it does not change (5.20, 4.5.1).
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00"), (2, "1.00")))
    f.apply(Expire(AFTER + 1, (("T1", "R1"),)))
    f.apply(finalize(AFTER + 2))
    t = AFTER + 1_000
    f.apply(bets("T2", "R1", t, t, (1, "1.00")))
    f.apply(outcome("T2", "R1", t + 100, (1, ROYAL, t + 50)))
    f.apply(finalize(t + 10_000))
    award = f.awards["T2/R1/1/player"]
    assert award.amount == m("10000.75")  # both rounds' contributions were on display
    f.apply(bets("T2", "R2", t + 10_000, t + 10_000, (1, "1.00")))
    f.apply(outcome("T2", "R2", t + 10_001))
    f.apply(finalize(t + 20_000))
    assert value(f) == m("10000.25")  # after the reset: the seed and T2/R2's 0.25
    result = f.apply(void("T1", "R1", t + 20_001))
    assert f.rounds[("T1", "R1")].state == VOID
    assert result.reversed == ((1, m("0.30")), (2, m("0.30")))  # type: ignore[union-attr]
    # The meter no longer holds the contribution (it was won): the house covers it, the
    # value on display stays; the paid award is unchanged.
    assert value(f) == m("10000.25") and award.amount == m("10000.75")
    assert all(meter.balanced() for meter in f.links["stud"].meters)


def test_expired_rounds_are_pruned_after_retain_ms_and_leave_the_snapshot() -> None:
    f = new_floor()
    for i in range(50):
        f.apply(bets("T1", f"R{i}", i, i, (1, "1.00")))
    f.apply(Expire(AFTER + 100, tuple(("T1", f"R{i}") for i in range(50))))
    assert f.open_count("T1") == 0 and len(f.rounds) == 50
    result = f.apply(finalize(AFTER + 100 + RETAIN + 1))
    assert len(result.pruned) == 50  # type: ignore[union-attr]
    state = dump(f)
    assert state["rounds"] == [] and state["links"]["stud"]["open_rounds"] == []
    assert state["expired"] == {"T1": 50}
    assert dump(load(state, [stud_link()], TIMING, RETAIN)) == state


def test_open_count_counts_every_open_round_of_the_table_and_survives_a_load() -> None:
    f = new_floor()
    f.apply(bets("T1", "R1", 0, 0, (1, "1.00")))
    f.apply(bets("T1", "R2", 0, 0, (1, "0")))
    f.apply(bets("T1", "R3", 0, 0, (1, "1.00")))
    f.apply(bets("T2", "R1", 0, 0, (1, "1.00")))
    assert f.open_count("T1") == 3 and f.open_count("T2") == 1 and f.open_count("T9") == 0
    f.apply(outcome("T1", "R1", 10))
    f.apply(void("T1", "R3", 10))
    loaded = load(dump(f), [stud_link()], TIMING, RETAIN)
    for floor_ in (f, loaded):
        assert floor_.open_count("T1", at_least=0) == 1
    loaded.apply(bets("T1", "R4", 20, 20, (1, "1.00")))
    assert loaded.open_count("T1") == 2
    assert loaded.expirable(AFTER + 21, 10) == [("T1", "R2"), ("T2", "R1"), ("T1", "R4")]


# -- properties ------------------------------------------------------------------------

TABLES = ("T1", "T2", "T3")

step = st.one_of(
    st.tuples(st.just("bets"), st.sampled_from(TABLES), st.sampled_from(("0", "1.00"))),
    st.tuples(st.just("outcome"), st.integers(0, 30), st.booleans()),
    st.tuples(st.just("void"), st.integers(0, 30), st.booleans()),
    st.tuples(st.just("wait"), st.integers(0, 2 * AFTER), st.booleans()),
)


def play(steps: list[tuple[object, object, object]]) -> tuple[Floor, list[Command]]:
    """The floor the writer would build: commands applied, an expire of every round the
    timer names after each wait, and the commands that were accepted."""
    f, now = new_floor(), 1_000_000
    opened: list[tuple[str, str]] = []
    log: list[Command] = []

    def apply(command: Command) -> None:
        try:
            f.apply(command)
        except JackpotError:
            return
        log.append(command)

    for kind, a, b in steps:
        now += 1
        if kind == "bets":
            round_id = f"R{len(opened)}"
            opened.append((str(a), round_id))
            apply(bets(str(a), round_id, now, now, (1, str(b))))
        elif kind in ("outcome", "void") and opened:
            table, round_id = opened[int(str(a)) % len(opened)]
            claims = ((1, ROYAL, now),) if b else ()
            apply(
                outcome(table, round_id, now, *claims)
                if kind == "outcome"
                else void(table, round_id, now)
            )
        elif kind == "wait":
            now += int(str(a))
            apply(finalize(now))
            apply(Expire(now, tuple(f.expirable(now, 10_000 if b else 3))))
    return f, log


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=40))
def test_expiry_keeps_money_conserved_and_the_index_exact(
    steps: list[tuple[object, object, object]],
) -> None:
    f, log = play(steps)
    assert all(meter.balanced() and meter.value >= 0 for meter in f.links["stud"].meters)
    for table in TABLES:
        opened = [k for k, r in f.rounds.items() if k[0] == table and r.state == OPEN]
        assert f.open_count(table) == len(opened)
    for key in f.links["stud"].open_rounds:
        assert f.rounds[key].state == OPEN  # an expired round holds nothing back
    # What a restart builds (snapshot, then the rest of the journal) is the same state:
    # the derived index is rebuilt from the rounds, never stored.
    half = len(log) // 2
    replay = new_floor()
    for command in log[:half]:
        replay.apply(command)
    replay = load(dump(replay), [stud_link()], TIMING, RETAIN)
    for command in log[half:]:
        replay.apply(command)
    assert canonical_json(dump(replay)) == canonical_json(dump(f))
    # And a restart at the end expires what the running floor would.
    again = load(dump(f), [stud_link()], TIMING, RETAIN)
    later = f.now + 3 * AFTER
    assert again.expirable(later, 10_000) == f.expirable(later, 10_000)


@settings(max_examples=60, deadline=None)
@given(st.lists(step, max_size=40))
def test_every_abandoned_round_leaves_memory_in_the_end(
    steps: list[tuple[object, object, object]],
) -> None:
    f, _ = play(steps)
    later = f.now + AFTER + 1
    f.apply(Expire(later, tuple(f.expirable(later, 10_000))))
    assert not [r for r in f.rounds.values() if r.state == OPEN]
    # Awards become final at the first finalize; their rounds are pruned retain_ms after.
    f.apply(finalize(later + RETAIN + 1))
    f.apply(finalize(later + 3 * RETAIN))
    assert f.rounds == {} and all(not link.open_rounds for link in f.links.values())
