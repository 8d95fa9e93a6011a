"""Suspend and resume entries applied to the state, and the state's snapshot of them."""

from __future__ import annotations

import random

import pytest

from app.state.commands import BetsCommand
from app.state.floor_state import FloorState
from app.state.in_play_state import NotInPlayError
from app.state.kinds import prepare_bets
from app.store.snapshots import dump_service, dump_text, load_service
from jackpot.canonical import canonical_json
from tests.support import command_of
from tests.unit.app.state.test_floor_state import box, config

T = 1_800_000_000_000
RNG = random.Random(1)


def suspend(table: str, boxes: list[int] | None, by: str | None = "sam") -> dict[str, object]:
    return {"kind": "suspend", "now": T, "by": by, "link": None, "table": table,
            "boxes": boxes, "reason": "fault"}  # fmt: skip


def bets(*boxes: dict[str, object]) -> BetsCommand:
    return command_of(BetsCommand, {"closed_at": T, "boxes": list(boxes)})


def test_a_snapshot_keeps_what_is_suspended_and_old_snapshots_are_unchanged() -> None:
    service = FloorState(config())
    assert "in_play" not in dump_service(service, 0, "0" * 64)  # as before suspensions
    service.apply(suspend("T01", [3]))
    text = dump_text(service, 1, "0" * 64)
    loaded = load_service(config(), dump_service(service, 1, "0" * 64))
    assert dump_text(loaded, 1, "0" * 64) == text
    with pytest.raises(NotInPlayError):
        prepare_bets(loaded, "T01", "R1", bets(box(3)), T, RNG)
    assert canonical_json(loaded.in_play.dump()) == canonical_json(service.in_play.dump())


def test_the_writers_timer_suspends_with_no_supervisor_and_is_audited() -> None:
    service = FloorState(config())
    service.apply(suspend("T02", None, by=None))
    assert service.audit[-1]["who"] is None and service.audit[-1]["action"] == "suspend"
    with pytest.raises(NotInPlayError) as refused:
        prepare_bets(service, "T02", "R1", bets(box(1)), T, RNG)
    assert refused.value.extensions["suspended"][0]["by"] is None
    # Ante only: in play (5.18.2 c: the game goes on without the jackpot wager).
    prepare_bets(service, "T02", "R1", bets(box(1, jackpot="0")), T, RNG)
