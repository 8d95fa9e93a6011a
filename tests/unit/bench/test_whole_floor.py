"""bench/whole_floor.py's pure parts: percentiles, which screens are timed, the matching
of screens' meter values to acknowledged bets (event-to-screen), and the floor it plays."""

from __future__ import annotations

import hashlib

from app.config.floor_file import parse_floor
from tests.unit.bench.loading import load_bench

wf = load_bench("whole_floor")
BLACKOUT = 250


def test_percentile_is_the_nearest_rank_of_the_sorted_values() -> None:
    values = list(range(100, 0, -1))  # 1..100, given in reverse
    assert wf.percentile(values, 50) == 50.0
    assert wf.percentile(values, 99) == 99.0
    assert wf.percentile(values, 100) == 100.0
    assert wf.percentile([3.5, 1.0, 2.0], 50) == 2.0
    assert wf.percentile([7], 99) == 7.0
    assert wf.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99) == 10.0
    assert wf.percentile([], 50) is None


def test_timed_screens_spread_from_the_first_to_the_last() -> None:
    assert wf.timed_screens(10, 5) == {0, 2, 4, 6, 9}
    assert wf.timed_screens(3, 5) == {0, 1, 2}
    assert wf.timed_screens(10, 1) == {0}
    assert wf.timed_screens(0, 5) == set()
    assert wf.timed_screens(10, 0) == set()


def test_a_rising_meter_times_each_event_to_the_first_message_at_its_value() -> None:
    acks = [(1000, 101), (1100, 102), (1150, 104)]
    messages = [(900, 100), (1200, 102), (1300, 104)]
    found = wf.match_screen(acks, [], messages, BLACKOUT)
    assert sorted(found.delays_us) == [100, 150, 200]
    assert (found.untimed, found.unseen) == (0, 0)


def test_a_screen_that_heard_before_the_table_gives_a_negative_delay() -> None:
    found = wf.match_screen([(1050, 105)], [], [(900, 100), (1000, 106)], BLACKOUT)
    assert found.delays_us == [-50]


def test_a_void_leaves_out_what_is_not_shown_and_the_answers_just_after_it() -> None:
    acks = [(1000, 110), (1100, 111), (1400, 96)]
    messages = [(950, 108), (1020, 109), (1500, 95), (1600, 96)]
    found = wf.match_screen(acks, [1050], messages, BLACKOUT)
    # 110: not shown at the void; 111: answered 50 µs after it; 96: shown at 1600.
    assert found.delays_us == [200]
    assert (found.untimed, found.unseen) == (2, 0)


def test_a_lower_message_starts_afresh_without_the_values_shown_before_it() -> None:
    acks = [(1100, 205), (1500, 60)]
    messages = [(1000, 200), (1200, 50), (1600, 60)]
    found = wf.match_screen(acks, [], messages, BLACKOUT)
    # 205 was pending at the drop; 60 is not matched to the 200 shown before the drop.
    assert found.delays_us == [100]
    assert (found.untimed, found.unseen) == (1, 0)


def test_an_event_never_shown_is_unseen() -> None:
    found = wf.match_screen([(1000, 300)], [], [(900, 100), (1100, 200)], BLACKOUT)
    assert (found.delays_us, found.untimed, found.unseen) == ([], 0, 1)


def test_money_in_cents() -> None:
    assert wf.cents("10234.50") == 1023450
    assert wf.cents("0.01") == 1
    meters = [{"link": "tcp01", "meter": "major", "value": "1.00"}]
    assert wf.meter_value(meters, "tcp01") == 100
    assert wf.meter_value(meters, "stud01") is None
    assert wf.meter_value([{"meter": "major", "name": "Major", "value": "2.50"}], "x") == 250


def test_the_floor_has_every_game_ten_tables_to_a_link_and_the_simulators_tokens() -> None:
    floor = parse_floor(wf.floor_text(23, 10))
    tables = {t.id: t for t in floor.tables}
    assert list(tables)[:3] == ["T001", "T002", "T003"]
    assert len(tables) == 23
    assert [str(tables[f"T00{i}"].game) for i in range(1, 6)] == [
        "casino_stud",
        "multi_link_casino_stud",
        "three_card_poker",
        "singapore_stud",
        "western_stud",
    ]
    assert tables["T001"].link == "stud01"
    assert tables["T003"].link == "tcp01"
    assert tables["T005"].link is None
    assert tables["T011"].link == "stud02"
    assert tables["T023"].link == "tcp03"
    assert sorted(link.id for link in floor.links) == [
        "stud01",
        "stud02",
        "stud03",
        "tcp01",
        "tcp02",
        "tcp03",
    ]
    expected = hashlib.sha256(b"demo-table-T017").hexdigest()
    assert tables["T017"].token_sha256 == expected


def test_values_shown_late_from_before_a_void_never_time_the_events_after_it() -> None:
    # The void answered at 1050; a screen still shows the value from before it at 1100.
    acks = [(1400, 100)]
    messages = [(1000, 108), (1100, 109), (1200, 95), (1500, 100)]
    found = wf.match_screen(acks, [1050], messages, BLACKOUT)
    assert found.delays_us == [100]
    assert (found.untimed, found.unseen) == (0, 0)
