"""What is in play: suspension periods of links, tables and boxes (rules 5.17, 5.18.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jackpot.errors import StateConflictError
from jackpot.in_play import InPlay, Place

T = 1_800_000_000_000


def test_a_box_suspension_blocks_only_that_box_rule_5_18_2() -> None:
    in_play = InPlay()
    in_play.suspend(Place(None, "T01", (3,)), "stud", T, "sensor", "sam")
    assert [p.box for p in in_play.blocking("stud", "T01", [1, 3])] == [3]
    assert in_play.blocking("stud", "T01", [1, 2]) == []
    assert in_play.blocking("stud", "T02", [3]) == []


def test_a_link_suspension_blocks_every_table_of_the_link_rule_5_17() -> None:
    in_play = InPlay()
    in_play.suspend(Place("stud", None), "stud", T, "fault", "sam")
    assert [p.scope for p in in_play.blocking("stud", "T09", [1])] == ["link"]
    assert in_play.blocking("tcp", "T03", [1]) == []
    assert in_play.blocking(None, "T05", [1]) == []
    whole, boxes = in_play.of_table("stud", "T01")
    assert whole is not None and whole.reason == "fault" and boxes == []


def test_resuming_a_table_ends_its_own_and_its_boxes_periods() -> None:
    in_play = InPlay()
    in_play.suspend(Place(None, "T01", (2, 5)), "stud", T, "a", "sam")
    in_play.suspend(Place(None, "T01"), "stud", T + 1, "b", "sam")
    ended = in_play.resume(Place(None, "T01"), T + 10, "sue", "ok")
    assert sorted((p.scope, p.box) for p in ended) == [("box", 2), ("box", 5), ("table", None)]
    assert all(p.until == T + 10 and p.resumed_by == "sue" for p in ended)
    assert in_play.active == {}
    assert len(in_play.periods) == 3  # kept for the reconciliation


def test_suspending_twice_or_resuming_nothing_is_refused_and_changes_nothing() -> None:
    in_play = InPlay()
    in_play.suspend(Place("stud", None), "stud", T, "a", "sam")
    with pytest.raises(StateConflictError):
        in_play.suspend(Place("stud", None), "stud", T + 1, "b", "sam")
    with pytest.raises(StateConflictError):
        in_play.resume(Place(None, "T01", (1,)), T + 2, "sam", "x")
    assert [(p.since, p.until) for p in in_play.periods] == [(T, None)]


PLACES = st.sampled_from(
    [Place("stud", None), Place(None, "T01"), Place(None, "T01", (1,)), Place(None, "T02", (2,))]
)


@given(st.lists(st.tuples(st.booleans(), PLACES), max_size=30))
def test_in_force_is_what_was_last_suspended_and_it_survives_dump_and_load(
    steps: list[tuple[bool, Place]],
) -> None:
    """Whatever the sequence, a place is out of play exactly when its last accepted change
    suspended it (or, for a box, neither it nor its table was resumed since), periods never
    overlap at one place, and a snapshot (dump, load) gives back the same."""
    in_play = InPlay()
    for at, (suspend, place) in enumerate(steps):
        try:
            if suspend:
                in_play.suspend(place, "stud", T + at, "r", "sam")
            else:
                in_play.resume(place, T + at, "sam", "r")
        except StateConflictError:
            continue
    by_place: dict[tuple[str, str, int], list[tuple[int, int | None]]] = {}
    for p in in_play.periods:
        by_place.setdefault(p.place, []).append((p.since, p.until))
    for spans in by_place.values():
        assert all(until is not None for _, until in spans[:-1])
        for (_, until), (since, _) in zip(spans, spans[1:], strict=False):
            assert until is not None and until <= since
    assert set(in_play.active) == {k for k, spans in by_place.items() if spans[-1][1] is None}
    again = InPlay.load(in_play.dump())
    assert again.dump() == in_play.dump()
    assert set(again.active) == set(in_play.active)
