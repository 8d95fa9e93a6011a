"""Property: a link's provisional display values (and the operator's value and reserve) are
its values once all that is pending is final (jackpot/link.py replays the pending events,
adding up contributions between awards)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jackpot.commands import Finalize, ResetMeter, SetSeed
from jackpot.errors import InvalidCommandError
from jackpot.floor import Floor
from jackpot.money import Rate
from jackpot.snapshot import dump, load
from tests.unit.jackpot.support import ROYAL, STRAIGHT_FLUSH, TIMING, bets, m, outcome, stud_link

# (what, its argument, its event time): bets of a wager (a contribution), a win of a share
# at the oldest round still open, an operator reset, a seed change. Event times interleave
# them on the timeline; nothing becomes final.
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("bets"), st.sampled_from(["1.00", "5.00", "40.00"]), st.integers(0, 50)),
        st.tuples(st.just("win"), st.sampled_from([ROYAL, STRAIGHT_FLUSH]), st.integers(0, 50)),
        st.tuples(st.just("reset"), st.just(0), st.integers(0, 50)),
        st.tuples(st.just("seed"), st.sampled_from(["90.00", "120.00"]), st.integers(0, 50)),
    ),
    max_size=40,
)


@given(STEPS, st.sampled_from([None, "100.00", "130.00", "400.00"]))
def test_display_values_are_the_values_once_all_pending_is_final(
    steps: list[tuple[str, str | int, int]], ceiling: str | None
) -> None:
    f = Floor([stud_link(seed="100.00", ceiling=ceiling)], TIMING)
    open_tables: list[str] = []
    for n, (what, arg, at) in enumerate(steps):
        now, table = 1_000 + n, f"T{n}"
        if what == "bets":
            f.apply(bets(table, "R", 1_000 + at, now, (1, str(arg))))
            open_tables.append(table)
        elif what == "win" and open_tables:
            won = f.rounds[(open_tables.pop(0), "R")]
            f.apply(outcome(won.table, "R", now, (1, Rate(int(arg)), won.closed_at + 1)))
        elif what == "reset":
            f.apply(ResetMeter("stud", "major", now, "sam", "test"))
        elif what == "seed" and ceiling is not None and m(str(arg)) > m(ceiling):
            with pytest.raises(InvalidCommandError, match="ceiling"):  # as the floor file
                f.apply(SetSeed("stud", "major", m(str(arg)), now, "sam", "test"))
        elif what == "seed":
            f.apply(SetSeed("stud", "major", m(str(arg)), now, "sam", "test"))
        final = _all_final(f)
        assert f.display_values("stud") == final.display_values("stud")
        # The operator's (value, reserve), at one instant.
        assert f.links["stud"].provisional() == [
            (x.value, x.reserve) for x in final.links["stud"].meters
        ]


def _all_final(f: Floor) -> Floor:
    """A copy of the floor with every pending event final, as finalize applies them."""
    copy = load(dump(f), [link.config for link in f.links.values()], TIMING)
    copy.now = f.now + 10 * TIMING.round_timeout_ms  # open rounds stale: they hold nothing
    copy.apply(Finalize(copy.now))
    assert not copy.links["stud"].timeline.heap
    return copy
