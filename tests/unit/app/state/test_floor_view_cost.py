"""The operators' floor view, the metrics' round counts, the meter read and the timer's
finalize read what they show, never every round in memory: on a floor of N and of 10 N
open rounds they answer what a scan of every round answers (docs/api.md `GET /v1/floor`,
`GET /v1/links/{link}/meters/{meter}`, the metrics), and nothing walks `floor.rounds` or
a link's `open_rounds` to do it. Work is counted, not time."""

from __future__ import annotations

import random
from _collections_abc import dict_items, dict_keys, dict_values
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from app.api.operator_routes import meter_view
from app.ops.readings import writer_reads
from app.state.commands import BetsCommand, OutcomeCommand, VoidCommand
from app.state.entries import FinalizeEntry
from app.state.floor_state import FloorState
from app.state.kinds import prepare_bets, prepare_outcome, prepare_void
from app.state.live_views import TableActivity, floor_view
from app.state.timefmt import format_time
from jackpot.records import OPEN, PENDING
from tests.support import command_of
from tests.unit.app.state.test_floor_state import box, config, hand

K = TypeVar("K")
V = TypeVar("V")
T0 = 1_800_000_000_000
TIMEOUT = 180_000  # Timing()'s round_timeout_ms
TABLES = ["T01", "T02", "T03", "T04"]


class Walks(dict[K, V]):
    """A dict that counts how often it is walked (looking one key up is not counted)."""

    walks = 0

    def __iter__(self) -> Iterator[K]:
        self.walks += 1
        return super().__iter__()

    def keys(self) -> dict_keys[K, V]:
        self.walks += 1
        return super().keys()

    def values(self) -> dict_values[K, V]:
        self.walks += 1
        return super().values()

    def items(self) -> dict_items[K, V]:
        self.walks += 1
        return super().items()


@dataclass
class Writer:
    """What the metrics read of the writer (app/ops/readings.py `WriterReadings`)."""

    service: FloorState
    seq: int = 0
    degraded: bool = False
    stats: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def queue_depth(self) -> int:
        return 0


def watched() -> tuple[FloorState, list[Walks[Any, Any]]]:
    service = FloorState(config())
    rounds: Walks[Any, Any] = Walks()
    service.floor.rounds = rounds
    dicts = [rounds]
    for link in service.floor.links.values():
        link.open_rounds = Walks()
        dicts.append(link.open_rounds)
    return service, dicts


def bets(service: FloorState, table: str, round_id: str, now: int) -> None:
    command = command_of(BetsCommand, {"closed_at": now, "boxes": [box(1)]})
    service.apply(prepare_bets(service, table, round_id, command, now, random.Random(1)))


def outcome(service: FloorState, table: str, round_id: str, now: int, royal: bool) -> None:
    cards = "AS KS QS JS TS" if royal else "2H 7D 9S JC KH"
    body = {"boxes": [hand(1, cards, now)], "dealer": None}
    command = command_of(OutcomeCommand, body)
    service.apply(prepare_outcome(service, table, round_id, command, now))


def a_floor(n: int) -> tuple[FloorState, list[Walks[Any, Any]], int]:
    """Three rounds turned stale, two holding a royal flush's award, then n rounds
    opened after it (holding nothing), some settled and one void."""
    service, dicts = watched()
    t = T0
    for i in range(3):
        bets(service, "T01", f"S{i}", t + i)
    t += TIMEOUT + 10_000
    service.apply(FinalizeEntry(now=t))  # S0-S2 stale
    bets(service, "T02", "H1", t)
    bets(service, "T04", "H2", t + 1)
    bets(service, "T01", "W1", t + 2)
    outcome(service, "T01", "W1", t + 3, royal=True)  # pending: H1 and H2 hold it
    t += 10
    for i in range(n):
        bets(service, TABLES[i % 4], f"P{i}", t + i)
    t += n
    for i in range(0, n, 7):
        if TABLES[i % 4] in ("T01", "T02"):  # casino stud: no dealer's hand needed
            outcome(service, TABLES[i % 4], f"P{i}", t, royal=False)
            t += 1
    void = command_of(VoidCommand, {"reason": "misdeal"})
    service.apply(prepare_void(service, "T03", "P2", void, t))
    return service, dicts, t + 1


def scan_last_events(service: FloorState) -> dict[str, tuple[int, str]]:
    last: dict[str, tuple[int, str]] = {}
    for rnd in dict.values(service.floor.rounds):
        seen = (rnd.received_at, "bets")
        if rnd.outcome_at is not None and rnd.outcome_at >= rnd.received_at:
            seen = (rnd.outcome_at, "outcome")
        known = last.get(rnd.table)
        if known is None or seen[0] > known[0]:
            last[rnd.table] = seen
    return last


@pytest.mark.parametrize("n", [150, 1_500])
def test_the_floor_view_and_the_metrics_walk_no_round(n: int) -> None:
    service, dicts, t = a_floor(n)
    activity = TableActivity()
    floor_view(service, activity, t)  # the first ask builds what is kept from then on
    # What a tick brings: one more round, an outcome, the timer's finalize.
    bets(service, "T02", "NEW", t)
    outcome(service, "T02", "NEW", t + 1, royal=False)
    for d in dicts:
        d.walks = 0
    service.apply(FinalizeEntry(now=t + 2))
    view = floor_view(service, activity, t + 3)
    reads = {r.name: r.read() for r in writer_reads(Writer(service))}
    meter = meter_view(service, "stud", "major")
    assert [d.walks for d in dicts] == [0] * len(dicts)

    # The same answers as the scans of every round.
    rounds = dict(dict.items(service.floor.rounds))
    opened = Counter(r.table for r in rounds.values() if r.state == OPEN)
    assert {v["table"]: v["open_rounds"] for v in view["tables"]} == {
        **{t: opened[t] for t in TABLES},
        "T05": 0,
    }
    last = scan_last_events(service)
    assert {v["table"]: (v["last_event"], v["last_event_at"]) for v in view["tables"]} == {
        **{t: (last[t][1], format_time(last[t][0])) for t in TABLES},
        "T05": (None, None),
    }
    stud = next(v for v in view["links"] if v["link"] == "stud")
    stale = sorted(
        (r.closed_at, r.table, r.round)
        for r in rounds.values()
        if r.link == "stud" and r.state == OPEN and r.stale
    )
    assert [(s["table"], s["round"]) for s in stud["stale_rounds"]] == [
        (tb, rd) for _, tb, rd in stale
    ]
    assert [(tb, rd) for _, tb, rd in stale] == [("T01", "S0"), ("T01", "S1"), ("T01", "S2")]
    [award] = [a for a in service.floor.awards.values() if a.state == PENDING]
    link = service.floor.links["stud"]
    holders = sorted(
        (at, tb, rd)
        for (tb, rd), at in dict.items(link.open_rounds)
        if at <= award.effective_at and t + 3 - at <= TIMEOUT
    )
    assert [(h["table"], h["round"]) for h in stud["holding_rounds"]] == [
        (tb, rd) for _, tb, rd in holders
    ]
    assert [(tb, rd) for _, tb, rd in holders] == [("T02", "H1"), ("T04", "H2")]
    flagged = {k for k in dict.keys(link.open_rounds) if rounds[k].stale}
    assert reads["jackpot_stale_rounds"] == {("stud",): len(flagged), ("tcp",): 0}
    assert reads["jackpot_open_rounds"] == {
        ("stud",): len(dict.keys(link.open_rounds)) - len(flagged),
        ("tcp",): len(dict.keys(service.floor.links["tcp"].open_rounds)),
    }
    assert reads["jackpot_table_open_rounds"] == {(t,): opened[t] for t in [*TABLES, "T05"]}
    assert meter["stale_rounds"] == sorted(f"{tb}/{rd}" for tb, rd in flagged)
