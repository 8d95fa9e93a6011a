"""Prints what the leader's loop spends, per call, on the operators' floor view, a /metrics
scrape, the timer's finalize and its due time, on a floor holding N open rounds, for each
N given.

    .venv/bin/python bench/bench_floor_view.py [--open-rounds 1000 1000000] [--repeat 5]
        [--held]

In process, no journal: the rounds are applied to the core directly (as recovery does),
on 20 casino stud tables on one link, with the open-rounds cap out of the way. Before
them, three rounds are left to turn stale and a royal flush is won (final; with
`--held`, still pending, held by two open rounds); the N rounds close after it, with no
outcome: they hold nothing, and their contributions wait, pending, behind the oldest.

Times are per call, the median of `--repeat`: the floor view (`GET /v1/floor`; the
console's view is rebuilt each 0.5 s while one listens), the /metrics text, a finalize
(the writer's timer, each second, with a bets in between) and the due time the timer
asks at every turn of the writer's loop (`Floor.due_at`). The first floor view also
builds what later ones keep (jackpot/floor_watch.py), so it is printed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.ops.metrics import PrometheusMetrics  # noqa: E402
from app.state.floor_state import FloorConfig, FloorState, TableConfig  # noqa: E402
from app.state.live_views import TableActivity, floor_view  # noqa: E402
from jackpot.commands import BoxWager, CloseBets, Finalize, MeterClaim, RecordOutcome  # noqa: E402
from jackpot.config import LinkConfig, MeterConfig, Timing  # noqa: E402
from jackpot.money import Rate, parse_money, parse_rate  # noqa: E402
from tables.bets import TableSettings  # noqa: E402
from tables.games import game  # noqa: E402

T0 = 1_800_000_000_000
TIMEOUT = 180_000
TABLES = [f"T{i:02d}" for i in range(1, 21)]


@dataclass
class Writer:
    """What the metrics read of the writer (app/ops/readings.py `WriterReadings`)."""

    service: FloorState
    seq: int = 0
    degraded: bool = False
    stats: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def queue_depth(self) -> int:
        return 0


def a_floor(n: int, held: bool) -> tuple[FloorState, int]:
    meter = MeterConfig("major", parse_money("10000.00"), parse_rate("0.25"), parse_rate("0.05"))
    one = parse_money("1.00")
    tables = {t: TableConfig(t, "stud", TableSettings(game("casino_stud"), one, 7)) for t in TABLES}
    config = FloorConfig("SGD", Timing(round_timeout_ms=TIMEOUT), (LinkConfig("stud", (meter,)),),
                         tables, max_open_rounds=10**9)  # fmt: skip
    service = FloorState(config)
    floor = service.floor
    boxes = tuple(BoxWager(b, one) for b in range(1, 8))
    t = T0
    for i in range(3):  # left to turn stale
        floor.apply(CloseBets("T01", f"S{i}", "stud", t, t, boxes))
    t += TIMEOUT + 10_000
    floor.apply(Finalize(t))
    floor.apply(CloseBets("T02", "H1", "stud", t, t, boxes))
    floor.apply(CloseBets("T03", "H2", "stud", t, t, boxes))
    floor.apply(CloseBets("T01", "W1", "stud", t, t, boxes))
    royal = MeterClaim(1, "player", "royal_flush", Rate(10_000), t + 1)
    floor.apply(RecordOutcome("T01", "W1", t + 1, (royal,)))  # held by H1 and H2
    if not held:  # their outcomes: the award is final, the meter back at its seed
        floor.apply(RecordOutcome("T02", "H1", t + 2, ()))
        floor.apply(RecordOutcome("T03", "H2", t + 3, ()))
        floor.apply(Finalize(t + 2_004))
    t += 2_010
    one_box = boxes[:1]  # as bench_state_size.py fills its floor: memory stays modest
    for i in range(n):  # 1,000 a millisecond: all well within the round timeout
        now = t + i // 1_000
        floor.apply(CloseBets(TABLES[i % len(TABLES)], f"R{i}", "stud", now, now, one_box))
    return service, t + n // 1_000 + 1


def per_call(repeat: int, call: Callable[[int], object]) -> float:
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1_000


def measure(n: int, held: bool, repeat: int) -> tuple[float, float, float, float, float]:
    """(first view, floor view, /metrics, finalize, due time), ms per call."""
    service, now = a_floor(n, held)
    activity = TableActivity()
    start = time.perf_counter()
    view = floor_view(service, activity, now)
    first = (time.perf_counter() - start) * 1_000
    assert len(view["links"][0]["holding_rounds"]) == (2 if held else 0)
    assert sum(t["open_rounds"] for t in view["tables"]) == n + (5 if held else 3)
    view_ms = per_call(repeat, lambda i: floor_view(service, activity, now + i))
    metrics = PrometheusMetrics(process=False)
    metrics.watch_writer(Writer(service))
    metrics_ms = per_call(repeat, lambda i: metrics.text())
    boxes = (BoxWager(1, parse_money("1.00")),)

    def tick(i: int) -> None:
        at = now + (i + 1) * 1_000
        service.floor.apply(CloseBets("T05", f"N{i}", "stud", at, at, boxes))
        service.floor.apply(Finalize(at))

    finalize_ms = per_call(repeat, tick)
    return (
        first,
        view_ms,
        metrics_ms,
        finalize_ms,
        per_call(repeat, lambda i: service.floor.due_at()),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--open-rounds", type=int, nargs="+", default=[1_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--held", action="store_true", help="leave the award held")
    args = parser.parse_args()
    print(f"{'open rounds':>12} {'first view':>11} {'floor view':>11} {'/metrics':>9} "
          f"{'finalize':>9} {'due time':>9}  (ms per call)")  # fmt: skip
    for n in args.open_rounds:
        first, view, metrics, finalize, due = measure(n, args.held, args.repeat)
        print(f"{n:>12,} {first:>11.2f} {view:>11.2f} {metrics:>9.2f} {finalize:>9.2f} {due:>9.2f}")


if __name__ == "__main__":
    main()
