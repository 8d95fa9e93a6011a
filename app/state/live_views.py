"""The operators' floor at a glance (the console's live view): every link and level, what
is pending or stale, each table's last event, each level's last hits, open proposals."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.state.alarm_kinds import acknowledgements
from app.state.consequence_views import with_consequence
from app.state.floor_state import FloorState
from app.state.gaming_day import gaming_day_view
from app.state.hold_views import LinkHolds, open_rounds_by_table
from app.state.in_play_state import link_in_play, suspensions_view, table_heard, table_in_play
from app.state.operator_views import proposal_view
from app.state.past_awards import HITS, hit_order
from app.state.timefmt import format_time
from app.state.views import as_committed, award_row, level_fields
from jackpot.money import format_money
from jackpot.records import AwardRecord


@dataclass(slots=True)
class TableActivity:
    """Each table's last event (server time, kind; at equal times the later applied).
    The floor keeps it as rounds apply (jackpot/floor_watch.py), from the rounds in memory
    when first asked; it is remembered here too, so a quiet table keeps its last event for
    as long as the process runs, even across a rebuilt floor (after a restart: what
    recovery left in memory)."""

    last: dict[str, tuple[int, str]] = field(default_factory=dict)

    def observe(self, service: FloorState) -> dict[str, tuple[int, str]]:
        for table, seen in service.floor.watch().last_events.items():
            known = self.last.get(table)
            if known is None or seen[0] >= known[0]:
                self.last[table] = seen
        return self.last


def silent_after_ms(service: FloorState) -> int:
    """A table with no event for a round timeout is flagged: its rounds would be stale."""
    return service.config.timing.round_timeout_ms


def floor_view(
    service: FloorState,
    activity: TableActivity,
    now: int,
    *,
    degraded: bool = False,
    journal: tuple[int, str] | None = None,
    last_heard: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """`GET /v1/floor` and the console's websocket message (without `you`)."""
    last = activity.observe(service)
    silent = silent_after_ms(service)
    open_rounds = open_rounds_by_table(service)
    tables = []
    for table_id, table in sorted(service.config.tables.items()):
        seen = last.get(table_id)
        tables.append({
            "table": table_id,
            "game": str(table.settings.game.id),
            "link": table.link,
            "last_event": None if seen is None else seen[1],
            "last_event_at": None if seen is None else format_time(seen[0]),
            "silent": seen is None or now - seen[0] > silent,
            **table_in_play(service, table_id),
            **table_heard(service, table_id, now, last_heard),
            "open_rounds": open_rounds[table_id],
        })  # fmt: skip
    view: dict[str, Any] = {
        "currency": service.config.currency,
        "dual_control": service.config.dual_control,
        "now": format_time(now),
        "round_timeout_ms": service.config.timing.round_timeout_ms,
        "silent_after_ms": silent,
        "hold_warning_ms": service.config.hold_warning_ms,
        "gaming_day": gaming_day_view(service.config.gaming_day, now),
        "links": [
            _link_view(service, link_id, degraded, now)
            for link_id in (c.id for c in service.config.links)
            if link_id not in service.retired  # off the floor: only the reports keep it
        ],
        "tables": tables,
        "acknowledged": acknowledgements(service),
        "changes": [
            with_consequence(service, p, proposal_view(p))
            for p in service.proposals.values()
            if p["state"] == "proposed"
        ],
        "suspensions": suspensions_view(service),
        "table_silence_ms": service.config.table_silence_ms,
        "suspend_silent_tables": service.config.suspend_silent_tables,
    }
    if journal is not None:
        view["journal"] = {"seq": journal[0], "head": journal[1]}
    return view


def _link_view(service: FloorState, link_id: str, degraded: bool, now: int) -> dict[str, Any]:
    floor = service.floor
    link = floor.link(link_id)
    provisional = link.provisional()
    meters = []
    hits = _last_hits(service, link_id, [m.id for m in link.config.meters])
    for index, (meter, config) in enumerate(zip(link.meters, link.config.meters, strict=True)):
        value, reserve = provisional[index]
        meters.append({
            "meter": config.id,
            "name": config.name or config.id,
            "value": format_money(value),
            "final_value": format_money(meter.value),
            "reserve": format_money(reserve),
            "seed": format_money(meter.seed),
            "next_seed": None if meter.next_seed is None else format_money(meter.next_seed),
            "ceiling": None if config.ceiling is None else format_money(config.ceiling),
            "hits": [award_row(as_committed(service, a)) for a in hits[config.id]],
            **level_fields(link, index),
        })  # fmt: skip
    holds = LinkHolds(service, link_id, now)
    pending = [
        {
            **{k: v for k, v in award_row(a).items() if k in _PENDING_KEYS},
            "state": "pending",
            **holds.award(a),
        }
        for a in holds.awards
    ]
    stale = sorted(
        (floor.rounds[key].closed_at, *key) for key in floor.watch().stale_rounds(link_id)
    )
    return {
        "link": link_id,
        "name": link.config.name or link_id,
        # What the server knows of itself; "writer unreachable" is the console's own
        # conclusion when this stream stops.
        "status": "degraded" if degraded else "ok",
        "in_play": link_in_play(service, link_id)["in_play"],
        "meters": meters,
        "pending": pending,
        "stale_rounds": [
            {"table": t, "round": r, "closed_at": format_time(at)} for at, t, r in stale
        ],
        "holding_rounds": holds.rounds(),
    }


_PENDING_KEYS = ("id", "table", "round", "box", "meter", "hand", "dealt_at", "late")


def _last_hits(service: FloorState, link: str, meters: list[str]) -> dict[str, list[AwardRecord]]:
    """Each meter's newest HITS awards, in `GET /v1/awards` order (newest dealt first)."""
    by_meter: dict[str, list[AwardRecord]] = {m: [] for m in meters}
    for award in service.floor.awards.values():
        if award.link == link and award.meter in by_meter:
            by_meter[award.meter].append(award)
    for meter, found in by_meter.items():  # and the newest that left memory
        found += service.floor.left_hits.get(f"{link}/{meter}", [])
    return {m: heapq.nlargest(HITS, found, key=hit_order) for m, found in by_meter.items()}
