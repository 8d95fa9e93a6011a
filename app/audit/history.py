"""A meter's history over a period, for the console's chart: its value after each journal
entry that changed it, with every award, reset, correction and seed change marked.

Read from the journal like the reconciliation (app/audit/reconciliation.py): the last snapshot
before the period, the entries after it, in a forked process. Values are the meter's
final value (`final_value`: what the watermark has passed), so the first point is the
reconciliation's opening value and the last its closing value, to the cent.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

from app.audit.reconciliation import UNBOUNDED, _Replay
from app.state.floor_state import FloorConfig
from app.state.timefmt import format_time
from app.store.aside import run_aside
from app.store.errors import JournalUnavailable
from app.store.journal import Journal, PostgresJournal, read_only_journal
from jackpot.canonical import loads_exact
from jackpot.money import format_money
from jackpot.records import FINAL, AwardRecord, CorrectionRecord, ResetRecord, SeedChangeRecord
from jackpot.results import FinalizeResult

MAX_POINTS = 2_000  # beyond it the points are thinned, each bucket's low and high kept


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """One meter's entries recorded in [start, end) (ms), up to entry `upto_seq`."""

    link: str
    meter: str
    start: int
    end: int
    upto_seq: int


async def meter_history(
    journal: Journal, config: FloorConfig, query: HistoryQuery
) -> dict[str, Any]:
    link, meter, start, end, upto_seq = (
        query.link, query.meter, query.start, query.end, query.upto_seq
    )  # fmt: skip
    replay = _Replay.at(config, await journal.snapshot_before(start, upto_seq))
    if start > -UNBOUNDED:
        await replay.until(journal, start, upto_seq)
    state = replay.service.floor.links[link]
    index = state.meter_index(meter)
    value = state.meters[index].value
    opening = value
    points: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    marked: set[str] = set()
    async with contextlib.aclosing(journal.read(replay.seq)) as rows:  # type: ignore[type-var]
        async for row in rows:
            if row.seq > upto_seq or row.recorded_at_ms >= end:
                break
            result = replay.service.apply(loads_exact(row.entry, f"journal entry {row.seq}"))
            replay.seq, replay.head = row.seq, row.hash
            at = format_time(row.recorded_at_ms)
            for mark in _marks(result, link, meter, marked):
                marks.append({**mark, "seq": row.seq, "at": at})
            # A journal's first `config` entry makes the floor anew: its link, then.
            state = replay.service.floor.links.get(link, state)
            now = state.meters[index].value
            if now != value:
                value = now
                points.append({"seq": row.seq, "at": at, "value": format_money(value)})
    return {
        "link": link,
        "meter": meter,
        "from": format_time(start) if start > -UNBOUNDED else None,
        "to": format_time(end) if end < UNBOUNDED else None,
        "journal": {"seq": replay.seq, "head": replay.head},
        "opening": format_money(opening),
        "closing": format_money(value),
        "points_total": len(points),
        "points": thin(points, MAX_POINTS),
        "marks": marks,
    }


def _marks(result: object, link: str, meter: str, marked: set[str]) -> list[dict[str, Any]]:
    """What an entry's result did to this meter worth marking on the chart."""
    found: list[object] = []
    if isinstance(result, FinalizeResult):
        found.extend(result.finalized)
    else:
        found.append(result)
    marks = []
    for item in found:
        if isinstance(item, AwardRecord) and (item.link, item.meter) == (link, meter):
            if item.state != FINAL or item.amount is None:
                continue
            marks.append({
                "kind": "award", "id": item.id, "table": item.table, "round": item.round,
                "box": item.box, "hand": item.hand, "amount": format_money(item.amount),
                "dealt_at": format_time(item.dealt_at),
            })  # fmt: skip
        elif isinstance(item, ResetRecord) and (item.link, item.meter) == (link, meter):
            if item.state != FINAL or item.id in marked or item.value_before is None:
                continue
            marked.add(item.id)
            marks.append({
                "kind": "reset", "id": item.id, "by": item.by, "reason": item.reason,
                "value_before": format_money(item.value_before),
            })  # fmt: skip
        elif isinstance(item, CorrectionRecord) and (item.link, item.meter) == (link, meter):
            marks.append({
                "kind": "correction", "id": item.id, "correction": item.kind,
                "amount": format_money(item.amount), "by": item.by, "reason": item.reason,
                "value_before": format_money(item.value_before),
                "value_after": format_money(item.value_after),
            })  # fmt: skip
        elif isinstance(item, SeedChangeRecord) and (item.link, item.meter) == (link, meter):
            marks.append({
                "kind": "seed", "by": item.by, "reason": item.reason,
                "seed_before": format_money(item.before), "seed": format_money(item.after),
            })  # fmt: skip
    return marks


def thin(points: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most about `limit` points, in order: each bucket's lowest and highest value (a
    sawtooth keeps its teeth), and always the first and last point."""
    if len(points) <= limit:
        return points
    # Two points a bucket, at most limit // 2 buckets: with the first and the last, at
    # most limit + 2 points.
    size = -(-len(points) // max(1, limit // 2))
    kept: list[dict[str, Any]] = [points[0]]
    for i in range(0, len(points), size):
        bucket = points[i : i + size]
        low = min(bucket, key=lambda p: _cents(p["value"]))
        high = max(bucket, key=lambda p: _cents(p["value"]))
        kept.extend(sorted({id(low): low, id(high): high}.values(), key=lambda p: p["seq"]))
    if kept[-1] is not points[-1]:
        kept.append(points[-1])
    return [p for i, p in enumerate(kept) if i == 0 or p is not kept[i - 1]]


def _cents(text: str) -> Decimal:
    return Decimal(text)


async def history_aside(
    journal: Journal, config: FloorConfig, query: HistoryQuery
) -> dict[str, Any]:
    """`meter_history` in a forked process with its own connection (as the
    reconciliation: the writer's loop only forks, waits and reads the answer)."""
    dsn = journal.dsn if isinstance(journal, PostgresJournal) else None

    async def compute() -> dict[str, Any]:
        if dsn is None:  # the in-memory journal (the child's copy), or one without an address
            return await meter_history(journal, config, query)
        async with read_only_journal(dsn) as own:
            return await meter_history(own, config, query)

    if isinstance(journal, PostgresJournal) and dsn is None:
        return await compute()

    def work() -> bytes:
        try:
            answer = asyncio.run(compute())
        except (JournalUnavailable, OSError, TimeoutError) as error:
            return orjson.dumps({"unavailable": repr(error)})
        return orjson.dumps({"history": answer})

    answer = orjson.loads(await run_aside(work))
    if "unavailable" in answer:
        raise JournalUnavailable(f"the history cannot read the journal: {answer['unavailable']}")
    history: dict[str, Any] = answer["history"]
    return history
