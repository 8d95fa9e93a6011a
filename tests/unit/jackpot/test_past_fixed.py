"""Fixed awards outlive their round: the floor keeps those of pruned rounds,
and a snapshot keeps them too."""

from __future__ import annotations

from jackpot.canonical import canonical_json
from jackpot.commands import Finalize, FixedAward, RecordOutcome
from jackpot.records import PastFixed
from jackpot.snapshot import dump, load
from tests.unit.jackpot.support import TIMING, bets, floor, m, stud_link, void

FOUR = FixedAward(1, "fixed", "four_of_a_kind", m("500.00"), dealt_at=1_050)
FLUSH = FixedAward(2, "fixed", "flush", m("100.00"), dealt_at=1_060)


def test_a_pruned_rounds_fixed_awards_are_kept_as_they_stood() -> None:
    f = floor()
    f.apply(bets("T01", "R1", 1_000, 1_000, (1, "1.00"), (2, "1.00")))
    f.apply(RecordOutcome("T01", "R1", 1_100, (), (FOUR, FLUSH)))
    f.apply(void("T01", "R1", 1_200, (2,)))
    assert f.past_fixed == []
    f.apply(Finalize(1_200 + f.retain_ms + 1))
    assert ("T01", "R1") not in f.rounds
    assert f.past_fixed == [
        PastFixed("T01", "R1", "stud", FOUR, False),
        PastFixed("T01", "R1", "stud", FLUSH, True),
    ]


def test_a_snapshot_keeps_past_fixed_awards_and_their_dealt_at() -> None:
    f = floor()
    f.apply(bets("T01", "R1", 1_000, 1_000, (1, "1.00"), (2, "1.00")))
    f.apply(RecordOutcome("T01", "R1", 1_100, (), (FOUR,)))
    f.apply(bets("T01", "R2", 1_000 + f.retain_ms, 1_000 + f.retain_ms, (1, "1.00")))
    f.apply(RecordOutcome("T01", "R2", 1_100 + f.retain_ms, (), (FLUSH,)))
    f.apply(Finalize(1_200 + f.retain_ms))  # R1 pruned, R2 kept
    assert [p.round for p in f.past_fixed] == ["R1"]
    data = dump(f)
    again = load(data, [stud_link()], TIMING)
    assert again.past_fixed == f.past_fixed
    assert again.rounds[("T01", "R2")].fixed[0].award == FLUSH
    assert canonical_json(dump(again)) == canonical_json(data)


def test_a_snapshot_from_before_keeps_loading() -> None:
    """Taken before fixed awards had a dealt_at: the round's closed_at stands in."""
    f = floor()
    f.apply(bets("T01", "R1", 1_000, 1_000, (1, "1.00")))
    f.apply(RecordOutcome("T01", "R1", 1_100, (), (FOUR,)))
    data = dump(f)
    del data["past_fixed"]
    for rnd in data["rounds"]:
        rnd["fixed"] = [row[:7] for row in rnd["fixed"]]
    again = load(data, [stud_link()], TIMING)
    assert again.past_fixed == []
    assert again.rounds[("T01", "R1")].fixed[0].award.dealt_at == 1_000
