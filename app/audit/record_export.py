"""Exports of awards and the audit log: every matching record, however many, as CSV or
JSON lines, written by a forked child that sees the state as it was at the request
(app/store/aside.py), so the writer's loop neither walks nor holds it.

The child's first line is the number of matching records (the answer's `X-Total-Count`),
then the file itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from app.audit.spreadsheet_csv import write_csv
from app.state.audit_views import AUDIT_COLUMNS, audit_csv_row
from app.state.hold_views import with_holds
from app.state.operator_views import audit_view
from app.state.past_award import PastAward
from app.state.record_listings import (
    AWARD_COLUMNS,
    AuditFilter,
    AwardFilter,
    matching_audit,
    matching_awards,
    paid_row,
)
from app.state.shape import FloorData
from app.state.views import Listed
from app.store.aside import AsideStream, stream_aside

FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


@dataclass(frozen=True, slots=True)
class Page:
    """Which of the matching records: all of them unless a limit was asked."""

    offset: int = 0
    limit: int | None = None

    @property
    def end(self) -> int | None:
        return None if self.limit is None else self.offset + self.limit

    def of(self, rows: list[Any]) -> list[Any]:
        return rows[self.offset : self.end]


def write_records(
    out: BinaryIO,
    total: int,
    rows: Iterable[dict[str, Any]],
    columns: tuple[str, ...],
    format: str,
) -> None:
    """The count line, then every row: CSV with a header (`columns`), or one JSON object a
    line."""
    out.write(b"%d\n" % total)
    if format == "jsonl":
        for row in rows:
            out.write(orjson.dumps(row) + b"\n")
        return
    # The CSV every operators' route writes: safe to open in a spreadsheet (docs/api.md).
    write_csv(lambda text: out.write(text.encode()), rows, columns)


def _rendered(
    items: list[Any], render: Callable[[Any], dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    return (render(item) for item in items)


async def export_awards(
    service: FloorData,
    wanted: AwardFilter,
    page: Page,
    format: str,
    now: int,
    past: tuple[list[PastAward], int] = ([], 0),
) -> AsideStream:
    """JSON lines give a pending award's `held_by` and `final_by` at `now`, as the
    listing does; the CSV keeps its columns. `past`: the awards that left memory
    (app/api/award_listing.py `past_for_export`) and how many match, merged in the
    listing's order (on equal keys the one in memory first)."""
    gone, gone_total = past

    def render(a: Listed | PastAward) -> dict[str, Any]:
        if isinstance(a, PastAward):
            row: dict[str, Any] = json.loads(a.row)
            return row
        row = paid_row(service, a)
        return with_holds(service, row, now) if format == "jsonl" else row

    def work(out: BinaryIO) -> None:
        awards = matching_awards(service, wanted)
        merged = [(a.order(), 1, a) for a in awards] + [(a.order()[:6], 0, a) for a in gone]
        merged.sort(key=lambda item: (item[0], item[1]), reverse=True)
        rows = _rendered(page.of([item[2] for item in merged]), render)
        write_records(out, len(awards) + gone_total, rows, AWARD_COLUMNS, format)

    return await stream_aside(work)


async def export_audit(
    service: FloorData, wanted: AuditFilter, page: Page, format: str
) -> AsideStream:
    render = audit_csv_row if format == "csv" else audit_view

    def work(out: BinaryIO) -> None:
        records = matching_audit(service.audit, wanted)
        write_records(out, len(records), _rendered(page.of(records), render), AUDIT_COLUMNS, format)

    return await stream_aside(work)
