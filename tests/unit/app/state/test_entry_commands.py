"""Operator changes replay by the rules of the entry's version (docs/journal.md, versions)."""

from __future__ import annotations

from typing import Any

import pytest

from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.floor_state import FloorState
from jackpot.commands import CEILING_BOUND
from jackpot.errors import InvalidCommandError
from jackpot.money import parse_money
from tests.support import DEMO


def seed_entry(seed: str, version: int | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": "seed", "now": 1_000, "by": "sam", "link": "stud", "meter": "major",
        "seed": parse_money(seed), "reason": "promo",
    }  # fmt: skip
    if version is not None:
        entry["version"] = version
    return entry


def test_a_seed_above_the_ceiling_written_before_the_bound_replays_as_applied() -> None:
    """A journal replays to the state it produced: a seed above the ceiling that an older
    server accepted (no `version`, or one before CEILING_BOUND) is applied on replay, not
    refused (the server would not start); a new one is refused (stud/major: 2,000,000.00)."""
    service = FloorState(floor_config(load_floor(DEMO)))
    for version in (None, CEILING_BOUND - 1):
        service.apply(seed_entry("2500000.00", version))
        meter = service.floor.links["stud"].meters[0]
        assert meter.next_seed == parse_money("2500000.00")
    with pytest.raises(InvalidCommandError, match="above the meter's ceiling 2000000.00"):
        service.apply(seed_entry("3000000.00", CEILING_BOUND))
    assert service.floor.links["stud"].meters[0].next_seed == parse_money("2500000.00")
