"""`GET /v1/awards`: the awards in the writer's memory (those a decision or a payment may
still need: app/state/past_awards.py) merged with the past ones the journal database
keeps, a page at a time: the past ones are read through the store's pool, so a long
history costs the writer's loop nothing (docs/api.md "Records and reports")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.state.past_award import PastAward
from app.state.payments import with_payment
from app.state.shape import FloorData
from app.state.views import Listed, every_award
from app.store.past_award_book import AwardFilter, PastAwardBook

Order = tuple[int, int, str, str, int, int]


async def award_page(
    state: Callable[[], FloorData],
    book: object,
    in_flight: Callable[[], list[PastAward]],
    where: AwardFilter,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], int]:
    """The page's rows (newest dealt first) and how many awards match. The book is read
    first, then memory and the awards leaving it with rows not yet committed (no await
    between those two): an award is left out only if its commit lands in between."""
    past: list[PastAward] = []
    past_total = 0
    if isinstance(book, PastAwardBook):
        past, past_total = await book.past_awards_page(where, offset + limit)
    live = _live(state(), where)
    stored = {a.id for a in past}
    leaving = [a for a in in_flight() if where.matches(a) and a.id not in stored]
    past += leaving
    past_total += len(leaving)
    # Both sides are in the listing's order; on equal keys the one in memory comes first.
    merged: list[tuple[Order, int, Any]] = [(key, 0, row) for key, row in live]
    merged += [(a.order()[:6], 1, a) for a in past]
    merged.sort(key=lambda item: (item[0], -item[1]), reverse=True)
    rows = [
        item[2]() if item[1] == 0 else json.loads(item[2].row)
        for item in merged[offset : offset + limit]
    ]
    return rows, len(live) + past_total


async def past_for_export(
    book: object, in_flight: Callable[[], list[PastAward]], where: AwardFilter, first: int | None
) -> tuple[list[PastAward], int]:
    """The past awards an export merges with those in memory (app/audit/record_export.py):
    the `first` newest that match (every one for None), those leaving memory with rows not
    yet committed, and how many match in all."""
    past: list[PastAward] = []
    total = 0
    if isinstance(book, PastAwardBook):
        past, total = await book.past_awards_page(where, 2**31 - 1 if first is None else first)
    stored = {a.id for a in past}
    leaving = [a for a in in_flight() if where.matches(a) and a.id not in stored]
    return past + leaving, total + len(leaving)


def _live(state: FloorData, where: AwardFilter) -> list[tuple[Order, Any]]:
    """The matching awards in memory, each as (its order, how to render its row)."""
    payments = state.payments
    wanted = {"kind": where.kind, "link": where.link, "meter": where.meter, "table": where.table}
    found = [
        a
        for a in every_award(state)
        if all(v is None or getattr(a, k) == v for k, v in wanted.items())
        and where.start <= a.dealt_at < where.end
    ]

    def paid_row(a: Listed) -> dict[str, Any]:
        row = a.row()
        return with_payment(row, payments.get(row["id"]))

    if where.state is None:
        return [(a.order(), _later(paid_row, a)) for a in found]
    rendered = [(a.order(), paid_row(a)) for a in found]
    return [(key, _now(row)) for key, row in rendered if row["state"] == where.state]


def _later(render: Any, a: Listed) -> Any:
    return lambda: render(a)


def _now(row: dict[str, Any]) -> Any:
    return lambda: row


# What `with_payment` adds to an award's listing row (app/state/payments.py), and where
# the award was won: a round's view shows neither.
_PAYMENT = ("payment", "paid_at", "method", "paid_by", "witness")
_WHERE = ("id", "link", "table", "round")


async def left_meter_awards(
    book: object, in_flight: Callable[[], list[PastAward]], table: str, round_id: str
) -> list[tuple[int, dict[str, Any]]]:
    """A pruned round's meter awards that left memory, each with its box, as a round's
    view shows them (app/state/views.py `meter_award`): its listing row without where it
    was won or its payment (paid, it was final)."""
    where = AwardFilter(kind="meter", table=table, round=round_id)
    past, _ = await past_for_export(book, in_flight, where, None)
    shown = []
    for award in past:
        row = json.loads(award.row)
        if "payment" in row and row["state"] == "paid":
            row["state"] = "final"
        shown.append((award.box, {k: v for k, v in row.items() if k not in _PAYMENT + _WHERE}))
    return shown
