"""Reports for operators and auditors: reconciliation of every meter over a period.

The reconciliation replays the journal (the only source of truth for money) in a
fresh state, takes every meter's ledger at the period's start and end, and shows
opening + flows = closing. Amounts are exact (micro-units, six places): sub-cent
contributions are carried, so a report in cents could not balance.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
from typing import Any

from app.journal import Journal
from app.service import FloorConfig, Service
from app.timefmt import format_time
from jackpot.money import format_exact, format_money
from jackpot.reconcile import Ledger, reconcile
from jackpot.snapshot import loads_exact

COLUMNS = (
    "link", "meter", "opening_value", "opening_reserve", "contributions_meter",
    "contributions_reserve", "awards", "seed_from_reserve", "seed_from_house", "house_cover",
    "reset_to_reserve", "corrections", "closing_value", "closing_reserve", "balanced",
)  # fmt: skip


def _ledgers(service: Service) -> dict[tuple[str, str], Ledger]:
    return {
        (link.id, config.id): Ledger.of(meter)
        for link in service.floor.links.values()
        for meter, config in zip(link.meters, link.config.meters, strict=True)
    }


async def reconciliation(
    journal: Journal, config: FloorConfig, start: int, end: int
) -> dict[str, Any]:
    """Entries recorded in [start, end) make the period."""
    service = Service(config)
    opening: dict[tuple[str, str], Ledger] | None = None
    seq, head, count = 0, "0" * 64, 0
    async with contextlib.aclosing(journal.read(0)) as rows:  # type: ignore[type-var]
        async for entry in rows:
            if entry.recorded_at_ms >= end:
                break
            if opening is None and entry.recorded_at_ms >= start:
                opening = _ledgers(service)
            service.apply(loads_exact(entry.entry, f"journal entry {entry.seq}"))
            seq, head, count = entry.seq, entry.hash, count + 1
            if count % 2_000 == 0:
                await asyncio.sleep(0)  # a long report never holds up the writer's loop
    closing = _ledgers(service)
    if opening is None:
        opening = closing
    meters = []
    for (link, meter), close in closing.items():
        report = reconcile(opening[(link, meter)], close)
        # Money on the wire has two places (API.md); contributions carry sub-cent
        # amounts, so the same figures to the micro-unit are in `exact` (and the CSV),
        # where opening + flows = closing holds to the last digit.
        row: dict[str, Any] = {"link": link, "meter": meter}
        exact: dict[str, str] = {}
        for name in COLUMNS[2:-1]:
            row[name] = format_money(getattr(report, name))
            exact[name] = format_exact(getattr(report, name))
        row["balanced"] = report.balanced
        row["exact"] = exact
        meters.append(row)
    return {
        "from": format_time(start) if start > -(2**61) else None,
        "to": format_time(end) if end < 2**61 else None,
        "journal": {"seq": seq, "entries": count, "head": head},
        "meters": meters,
    }


def to_csv(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()
