"""The awards of rounds just pruned leave memory, or join the unpaid ones before them
(app/state/past_awards.py `settle_pruned`, at every finalize): only those are read. The
unpaid ones (the casino's liability) may be many and are left as they stand; copying
them at every finalize made the writer's and a replay's work grow with the liability
(bench_verify.py's replay of a million entries still ran after 15 minutes). Work is
counted, not time."""

from __future__ import annotations

from typing import Any, SupportsIndex, TypeVar, overload

from app.state.floor_state import FloorState
from app.state.past_awards import settle_pruned
from jackpot.commands import FixedAward
from jackpot.money import parse_money
from jackpot.records import PastFixed
from tests.unit.app.state.test_floor_state import config

T = TypeVar("T")


class Reads(list[T]):
    """A list that counts the elements read by walking it or slicing it."""

    read = 0

    @overload
    def __getitem__(self, index: SupportsIndex) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        self.read += len(item) if isinstance(index, slice) else 1
        return item

    def __iter__(self) -> Any:
        self.read += len(self)
        return super().__iter__()


def past(round_id: str, voided: bool = False) -> PastFixed:
    award = FixedAward(1, "fixed", "flush", parse_money("100.00"), dealt_at=1_000)
    return PastFixed("T01", round_id, "stud", award, voided)


def test_a_finalize_reads_the_just_pruned_awards_not_the_unpaid_before_them() -> None:
    state = FloorState(config())
    unpaid = [past(f"U{i}") for i in range(10_000)]
    stays, leaves = past("R1"), past("R2", voided=True)
    reads: Reads[PastFixed] = Reads([*unpaid, stays, leaves])
    state.floor.past_fixed = reads
    gone = settle_pruned(state, since=len(unpaid))
    assert [award.round for award in gone] == ["R2"]  # void: it leaves
    assert state.floor.past_fixed is reads
    assert reads == [*unpaid, stays]  # the unpaid, then the one that stays, in order
    assert reads.read == 2


def test_a_finalize_reads_the_just_pruned_meter_awards_only() -> None:
    state = FloorState(config())
    reads: Reads[str] = Reads([f"T01/U{i}/m" for i in range(10_000)])
    state.floor.past_meter = reads
    assert settle_pruned(state, since=0, since_meter=len(reads)) == []
    assert reads.read == 0
