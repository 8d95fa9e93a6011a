"""The application state without I/O: requests -> entries -> state -> answers."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.state.commands import BetsCommand, OutcomeCommand, VoidCommand
from app.state.floor_state import FloorConfig, FloorState, TableConfig
from app.state.kinds import prepare_bets, prepare_outcome, prepare_void
from app.state.views import bets_answer, outcome_answer, round_view
from app.store.snapshots import dump_service, load_service
from jackpot.canonical import canonical_json
from jackpot.config import LinkConfig, MeterConfig, Timing
from jackpot.errors import StateConflictError
from jackpot.money import parse_money, parse_rate
from tables.bets import TableSettings
from tables.errors import TablesError
from tables.games import game
from tests.support import command_of


def config() -> FloorConfig:
    meter = MeterConfig("major", parse_money("10000.00"), parse_rate("0.25"), parse_rate("0.05"))
    links = (
        LinkConfig("stud", (meter,)),
        LinkConfig(
            "tcp",
            (MeterConfig("major", parse_money("5000.00"), parse_rate("0.20"), parse_rate("0.05")),),
        ),
    )
    one = parse_money("1.00")
    tables = {
        "T01": TableConfig("T01", "stud", TableSettings(game("casino_stud"), one, 7)),
        "T02": TableConfig("T02", "stud", TableSettings(game("multi_link_casino_stud"), one, 7)),
        "T03": TableConfig("T03", "tcp", TableSettings(game("three_card_poker"), one, 7)),
        "T04": TableConfig("T04", "stud", TableSettings(game("singapore_stud"), one, 7)),
        "T05": TableConfig("T05", None, TableSettings(game("western_stud"), parse_money("0"), 7)),
    }
    return FloorConfig("SGD", Timing(), links, tables)


def box(
    n: int, ante: str = "10.00", jackpot: str = "1.00", dealer: str = "0", player: str | None = None
) -> dict[str, Any]:
    return {
        "box": n,
        "ante": parse_money(ante),
        "jackpot": parse_money(jackpot),
        "jackpot_dealer": parse_money(dealer),
        "player": player,
    }


def hand(n: int, cards: str, dealt_at: int, folded: bool = False) -> dict[str, Any]:
    return {"box": n, "dealt_at": dealt_at, "cards": cards.split(), "folded": folded}


def run(service: FloorState, entry: dict[str, Any]) -> object:
    return service.apply(entry)


def test_bets_answer_accepts_returns_per_rule_5_4() -> None:
    s = FloorState(config())
    s.apply(
        prepare_bets(
            s,
            "T01",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": [box(1), box(2, ante="0")]}),
            0,
            random.Random(1),
        )
    )
    answer = bets_answer(s, "T01", "R1")
    assert answer["boxes"][0] == {"box": 1, "jackpot": "accepted", "contribution": "0.25"}
    assert answer["boxes"][1]["jackpot"] == "returned" and "5.4" in answer["boxes"][1]["reason"]
    assert answer["meters"] == [{"link": "stud", "meter": "major", "value": "10000.25"}]


def test_royal_flush_at_multi_link_pays_the_meter_after_the_watermark() -> None:
    s = FloorState(config())
    s.apply(
        prepare_bets(
            s,
            "T02",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": [box(1), box(4)]}),
            0,
            random.Random(1),
        )
    )
    body = {
        "boxes": [hand(1, "AS KS QS JS TS", 500), hand(4, "2H 2D 2S 2C 9H", 600, folded=True)],
        "dealer": None,
    }
    s.apply(prepare_outcome(s, "T02", "R1", command_of(OutcomeCommand, body), 1_000))
    awards = outcome_answer(s, "T02", "R1")["awards"]
    assert awards[0]["state"] == "pending" and "amount" not in awards[0]
    # 3.12.1 / 4.3 (multi-link): the folded four of a kind keeps its jackpot: 2,000 (4.2)
    assert awards[1] == {"box": 4, "kind": "fixed", "hand": "four_of_a_kind", "amount": "2000.00"}
    s.apply({"kind": "finalize", "now": 5_000})
    final = outcome_answer(s, "T02", "R1")["awards"][0]
    assert (final["state"], final["amount"], final["order"]) == ("final", "10000.50", 1)


def test_5_8_1_duplicate_card_is_refused_naming_the_card_and_changes_nothing() -> None:
    s = FloorState(config())
    s.apply(
        prepare_bets(
            s,
            "T01",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": [box(1), box(2)]}),
            0,
            random.Random(1),
        )
    )
    before = canonical_json(dump_service(s, 0, ""))
    body = {
        "boxes": [hand(1, "AS KS QS JS TS", 500), hand(2, "AS 2D 3S 4C 9H", 600)],
        "dealer": None,
    }
    with pytest.raises(TablesError, match="AS"):
        prepare_outcome(s, "T01", "R1", command_of(OutcomeCommand, body), 1_000)
    assert canonical_json(dump_service(s, 0, "")) == before


def test_4_7_envy_bonus_at_three_card_poker_from_the_service() -> None:
    s = FloorState(config())
    bets = {"closed_at": 0, "boxes": [box(1), box(2), box(3, jackpot="0")]}
    s.apply(prepare_bets(s, "T03", "R1", command_of(BetsCommand, bets), 0, random.Random(1)))
    body = {
        "boxes": [hand(1, "AH KH QH", 500), hand(2, "2S 3D 5C", 510), hand(3, "AS KS QS", 520)],
        "dealer": None,
    }
    s.apply(prepare_outcome(s, "T03", "R1", command_of(OutcomeCommand, body), 1_000))
    awards = outcome_answer(s, "T03", "R1")["awards"]
    kinds = sorted((a["box"], a["kind"], a["amount"], a.get("for_box")) for a in awards)
    # Box 1: AKQ hearts 1,250 (4.4) + envy 250 for box 3's AKQ spades (4.7; box 3 had an ante).
    # Box 2: envy 50 for box 1 and 250 for box 3. Box 3 (ante only) wins nothing itself.
    assert kinds == [
        (1, "envy", "250.00", 3),
        (1, "fixed", "1250.00", None),
        (2, "envy", "250.00", 3),
        (2, "envy", "50.00", 1),
    ]


def test_singapore_draws_are_recorded_with_the_round_and_replayed() -> None:
    s = FloorState(config())
    s.apply(
        prepare_bets(
            s,
            "T04",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": [box(1, dealer="1.00")]}),
            0,
            random.SystemRandom(),
        )
    )
    draws = bets_answer(s, "T04", "R1")["draws"]
    assert set(draws) == {"magic_card", "lucky_box", "lucky_dealer"}
    assert round_view(s, "T04", "R1")["draws"] == draws
    assert bets_answer(s, "T04", "R1")["boxes"][0]["contribution"] == "0.50"  # 1.13: both wagers


def test_void_then_outcome_is_409_and_snapshot_round_trips() -> None:
    s = FloorState(config())
    s.apply(
        prepare_bets(
            s,
            "T01",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": [box(1)]}),
            0,
            random.Random(1),
        )
    )
    s.apply(
        prepare_void(
            s,
            "T01",
            "R1",
            command_of(VoidCommand, {"reason": "foreign card (5.8.1)", "boxes": None}),
            100,
        )
    )
    with pytest.raises(StateConflictError):
        prepare_outcome(
            s,
            "T01",
            "R1",
            command_of(OutcomeCommand, {"boxes": [hand(1, "AS KS QS JS TS", 50)], "dealer": None}),
            200,
        )
    state = dump_service(s, 3, "h")
    assert dump_service(load_service(s.config, state), 3, "h") == state


def test_a_bets_answer_shows_each_boxs_own_contribution() -> None:
    """Each box's amount, also when the round's boxes contribute different amounts (the
    answer formats each distinct amount once)."""
    s = FloorState(config())
    boxes = [box(1), box(2, jackpot="2.00"), box(3), box(4, jackpot="3.00"), box(5, jackpot="2.00")]
    s.apply(
        prepare_bets(
            s,
            "T04",
            "R1",
            command_of(BetsCommand, {"closed_at": 0, "boxes": boxes}),
            0,
            random.Random(1),
        )
    )
    answer = bets_answer(s, "T04", "R1")
    contributions = [(b["box"], b["contribution"]) for b in answer["boxes"]]
    assert contributions == [(1, "0.25"), (2, "0.50"), (3, "0.25"), (4, "0.75"), (5, "0.50")]
