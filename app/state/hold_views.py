"""Why the floor's meter awards are pending, for the console (`GET /v1/floor`): each
pending award's holding rounds and the latest time it can stay pending, each link's
rounds that hold awards (how long, and whether past the floor's `hold_warning_ms`), and
each table's open rounds (docs/design.md "The watermark", jackpot/holds.py); and the same
`held_by` and `final_by` on a pending award in `GET /v1/awards` and a round's `GET`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.state.floor_state import FloorState
from app.state.shape import FloorData
from app.state.timefmt import format_time
from app.state.views import round_view
from jackpot.holds import Hold, final_by, holding
from jackpot.records import PENDING, AwardRecord


def hold_row(h: Hold) -> dict[str, Any]:
    return {
        "table": h.table,
        "round": h.round,
        "open_since": format_time(h.open_since),
        "ends_by": format_time(h.ends_by),
    }


def award_holds(service: FloorData, award: AwardRecord, now: int) -> dict[str, Any]:
    """A pending meter award's `held_by` (oldest first) and `final_by`."""
    timing = service.config.timing
    assert award.link is not None  # a meter award is on a link
    holds = holding(service.floor.link(award.link), award.effective_at, now, timing)
    return {
        "held_by": [hold_row(h) for h in holds],
        "final_by": format_time(final_by(award.effective_at, holds, timing)),
    }


def with_holds(service: FloorData, row: dict[str, Any], now: int) -> dict[str, Any]:
    """A `GET /v1/awards` row, with what holds it when it is a pending meter award."""
    if row.get("kind") != "meter" or row.get("state") != PENDING:
        return row
    return {**row, **award_holds(service, service.floor.awards[row["id"]], now)}


def round_with_holds(service: FloorData, table: str, round_id: str, now: int) -> dict[str, Any]:
    """A round's `GET`: each of its pending meter awards with what holds it. An award is
    known in the answer by its box, target and meter (one hand a target per box)."""
    view = round_view(service, table, round_id)
    rnd = service.floor.round(table, round_id)
    holds = {}
    for award_id in rnd.awards:
        award = service.floor.awards[award_id]
        holds[(award.box, award.target, award.meter)] = award
    for item in view["awards"]:
        if item["kind"] == "meter" and item["state"] == PENDING:
            key = (item["box"], item.get("target", "player"), item["meter"])
            item.update(award_holds(service, holds[key], now))
    return view


class LinkHolds:
    """One link's pending awards and what holds them, at `now`."""

    def __init__(self, service: FloorState, link_id: str, now: int) -> None:
        self.timing = service.config.timing
        self.warn_after = service.config.hold_warning_ms
        self.now = now
        link = service.floor.link(link_id)
        self.awards = service.floor.pending_awards(link_id)
        self.holds = {a.id: holding(link, a.effective_at, now, self.timing) for a in self.awards}

    def award(self, award: AwardRecord) -> dict[str, Any]:
        """`held_by` (oldest first) and `final_by`: the latest it can stay pending."""
        holds = self.holds[award.id]
        return {
            "held_by": [hold_row(h) for h in holds],
            "final_by": format_time(final_by(award.effective_at, holds, self.timing)),
        }

    def rounds(self) -> list[dict[str, Any]]:
        """The rounds holding awards, oldest first: `held_for_ms` is how long past its hold
        the earliest of them has waited; `warning` once that is over `hold_warning_ms`."""
        held: dict[Hold, list[AwardRecord]] = {}
        for award in self.awards:
            for h in self.holds[award.id]:
                held.setdefault(h, []).append(award)
        rows = []
        for h in sorted(held):
            awards = held[h]
            since = min(a.effective_at for a in awards) + self.timing.hold_ms
            held_for = max(0, self.now - since)
            rows.append({
                **hold_row(h),
                "awards": [a.id for a in awards],
                "held_for_ms": held_for,
                "warning": held_for > self.warn_after,
            })  # fmt: skip
        return rows


def open_rounds_by_table(service: FloorState) -> Counter[str]:
    """Rounds with bets and no outcome or void yet, per table."""
    watch = service.floor.watch()
    return Counter({table: watch.open_count(table) for table in watch.open_by_table})
