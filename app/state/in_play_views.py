"""What is said of suspensions: to supervisors (answers), tables (status), the floor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.in_play import Suspension


@dataclass(frozen=True, slots=True)
class InPlayChanged:
    """The result of a suspend or resume entry: the periods it began or ended. `link`:
    the link whose displays are to be told (None: a table with no link)."""

    kind: str
    link: str | None
    periods: list[Suspension]
    at: int
    by: str | None
    reason: str


def period_view(p: Suspension) -> dict[str, Any]:
    return {
        "scope": p.scope,
        "link": p.link,
        "table": p.table,
        "box": p.box,
        "since": format_time(p.since),
        "reason": p.reason,
        "by": p.by,
        "until": None if p.until is None else format_time(p.until),
        "resumed_by": p.resumed_by,
        "resume_reason": p.resume_reason,
    }


def in_play_answer(result: InPlayChanged) -> dict[str, Any]:
    """`POST .../suspend` and `.../resume`: what it began (suspended) or ended (resumed)."""
    return {
        "action": result.kind,
        "at": format_time(result.at),
        "by": result.by,
        "reason": result.reason,
        "suspended" if result.kind == "suspend" else "resumed": [
            period_view(p) for p in result.periods
        ],
    }


def describe(p: Suspension) -> str:
    """One period for a person: what, since when, why (a 409's detail)."""
    return f"{p.describe()} suspended since {format_time(p.since)}: {p.reason}"


def table_status(service: FloorData, table: str, now: int, link_status: str) -> dict[str, Any]:
    """`GET /v1/tables/{table}/status`: is the progressive in play at this table, which
    boxes are not (5.18.2: no jackpot wager there), since when and why."""
    link = service.table(table).link
    whole, boxes = service.in_play.of_table(link, table)
    first = whole or (boxes[0] if boxes else None)
    return {
        "table": table,
        "link": link,
        "in_play": whole is None,
        "suspended_boxes": [p.box for p in boxes] if whole is None else [],
        "reason": None if first is None else first.reason,
        "since": None if first is None else format_time(first.since),
        "suspensions": [period_view(p) for p in ([whole] if whole else []) + boxes],
        "link_status": link_status,
        "server_time": format_time(now),
    }


def link_in_play(service: FloorData, link: str) -> dict[str, Any]:
    """What a link's displays show (docs/api.md, Displays: `status`): `in_play` false while
    the link is suspended; `tables` the tables (and boxes) of the link out of play."""
    in_force = service.in_play.in_force()
    own = [p for p in in_force if p.scope == "link" and p.link == link]
    tables = [p for p in in_force if p.scope != "link" and p.link == link]
    first = own[0] if own else (tables[0] if tables else None)
    # A table's boxes out of play, or None: the whole table is.
    by_table: dict[str, list[int] | None] = {}
    for p in tables:
        assert p.table is not None
        boxes = by_table.setdefault(p.table, [])
        if p.box is None:
            by_table[p.table] = None
        elif boxes is not None:
            boxes.append(p.box)
    return {
        "in_play": not own,
        "reason": None if first is None else first.reason,
        "since": None if first is None else format_time(first.since),
        "tables": [
            {"table": t, "boxes": None if b is None else sorted(b)}
            for t, b in sorted(by_table.items())
        ],
    }


def suspensions_view(service: FloorData) -> list[dict[str, Any]]:
    """`GET /v1/floor`'s `suspensions`: every period in force, oldest first."""
    return [period_view(p) for p in service.in_play.in_force()]


def table_in_play(service: FloorData, table: str) -> dict[str, Any]:
    """A table's row of the floor: `in_play` (false while it or its link is suspended)
    and its `suspended_boxes`."""
    whole, boxes = service.in_play.of_table(service.table(table).link, table)
    return {"in_play": whole is None, "suspended_boxes": [p.box for p in boxes]}


def suspension_periods(service: FloorData, start: int, end: int) -> list[dict[str, Any]]:
    """The reconciliation's `suspensions`: every period in force at some instant of
    [start, end), by link, table and box, then in the order they began."""
    periods = service.in_play.overlapping(start, end)
    periods.sort(key=lambda p: (p.link or "", p.table or "", p.box or 0, p.since))
    return [period_view(p) for p in periods]


def table_heard(
    service: FloorData, table: str, now: int, last_heard: Callable[[str], int] | None
) -> dict[str, Any]:
    """A table's row of the floor: when it last asked what is in play, and `unheard`
    once that is longer ago than the floor's `table_silence_ms`."""
    if last_heard is None:
        return {}
    last = last_heard(table)
    return {
        "last_heard_at": format_time(last),
        "unheard": now - last > service.config.table_silence_ms,
    }
