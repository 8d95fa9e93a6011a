"""Why an award is pending (jackpot/holds.py) agrees with the watermark (docs/design.md
"The watermark"): an award past its hold is held exactly when some round is named as
holding it, and by `final_by` nothing holds it any more."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jackpot.holds import Hold, final_by, holding
from jackpot.link import Link
from tests.unit.jackpot.support import TIMING, stud_link

ROUNDS = st.dictionaries(
    st.tuples(st.sampled_from(["T01", "T02", "T03"]), st.sampled_from(["R1", "R2"])),
    st.integers(0, 2 * TIMING.round_timeout_ms),
    max_size=6,
)


def link_with(open_rounds: dict[tuple[str, str], int]) -> Link:
    link = Link.new(stud_link())
    link.open_rounds = dict(open_rounds)
    return link


@given(ROUNDS, st.integers(0, 2 * TIMING.round_timeout_ms), st.integers(0, 600_000))
def test_an_award_past_its_hold_is_held_exactly_by_the_rounds_named(
    open_rounds: dict[tuple[str, str], int], at: int, later: int
) -> None:
    link = link_with(open_rounds)
    now = at + TIMING.hold_ms + 1 + later
    holds = holding(link, at, now, TIMING)
    assert (at < link.watermark_at(now, TIMING)) == (holds == [])
    for h in holds:
        assert open_rounds[(h.table, h.round)] == h.open_since <= at
        assert h.ends_by == h.open_since + TIMING.round_timeout_ms
    assert holds == sorted(holds)


@given(ROUNDS, st.integers(0, 2 * TIMING.round_timeout_ms), st.integers(0, 400_000))
def test_by_final_by_nothing_holds_the_award(
    open_rounds: dict[tuple[str, str], int], at: int, since: int
) -> None:
    link = link_with(open_rounds)
    now = at + since
    end = final_by(at, holding(link, at, now, TIMING), TIMING)
    assert at < link.watermark_at(max(now, end) + 1, TIMING)


def test_a_round_closed_after_the_award_does_not_hold_it() -> None:
    link = link_with({("T01", "R1"): 1_000, ("T02", "R9"): 5_000})
    assert holding(link, 4_000, 10_000, TIMING) == [Hold(1_000, "T01", "R1", 181_000)]
    # Stale at 181,001: it no longer holds (rule 5.17: the table voids it).
    assert holding(link, 4_000, 181_001, TIMING) == []
