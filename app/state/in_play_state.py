"""What is in play (rules 5.17, 5.18.2): the `suspend` and `resume` kinds (checked,
applied to the state, audited), the refusal of a jackpot wager where the progressive is
not in play, and what is said of suspensions to supervisors (answers), tables (status)
and the floor; and a link retired for good (the `retire` kind), which takes no bets,
transfers or changes. Which tables name a link is the floor file's, checked when a
retirement is asked for and approved, never on replay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from app.state.entries import ResumeEntry, RetireEntry, SuspendEntry
from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.in_play import Suspension
from jackpot.money import format_exact

# -- what is said of suspensions -----------------------------------------------------


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


# -- the suspend and resume kinds ----------------------------------------------------


NOT_IN_PLAY = "progressive-not-in-play"


class NotInPlayError(StateConflictError):
    """A jackpot wager where the progressive is not in play (409, `progressive-not-in-play`):
    names each suspension in force there, since when and why."""

    problem_type = NOT_IN_PLAY

    def __init__(self, periods: list[Suspension]) -> None:
        super().__init__(
            "progressive not in play: " + "; ".join(describe(p) for p in periods)
            + " (rules 5.17, 5.18.2: no jackpot wager is accepted there)",
        )  # fmt: skip
        self.extensions: dict[str, Any] = {"suspended": [period_view(p) for p in periods]}


def check_in_play_bets(service: FloorData, table: str, wagers: Iterable[tuple[int, bool]]) -> None:
    """Bets whose boxes carry a jackpot wager (box, wager) where a suspension is in force
    are refused whole; a box without a jackpot wager is in play whatever is suspended."""
    if not service.in_play.active:  # nothing suspended anywhere: the usual case
        return
    boxes = [box for box, wager in wagers if wager]
    if not boxes:
        return
    periods = service.in_play.blocking(service.table(table).link, table, boxes)
    if periods:
        raise NotInPlayError(periods)


def _table_link(service: FloorData, entry: SuspendEntry | ResumeEntry) -> str | None:
    """The link named, or the table's (404 for an unknown one); the boxes checked (422)."""
    if (entry.link is None) == (entry.table is None):
        raise InvalidCommandError("name a link or a table", ("table",))
    if entry.table is None:
        assert entry.link is not None
        service.floor.link(entry.link)
        return entry.link
    config = service.table(entry.table)
    if entry.boxes is not None:
        if not entry.boxes:
            raise InvalidCommandError("boxes: at least one box, or none for the table", ("boxes",))
        for i, box in enumerate(entry.boxes):
            if not 1 <= box <= config.settings.boxes:
                raise InvalidCommandError(
                    f"box {box}: table {entry.table} has boxes 1 to {config.settings.boxes}",
                    ("boxes", i),
                )
            if box in entry.boxes[:i]:
                raise InvalidCommandError(f"box {box} is named twice", ("boxes", i))
    return config.link


def check_in_play(service: FloorData, entry: SuspendEntry | ResumeEntry) -> str | None:
    """What `apply_in_play` would refuse, without changing anything: an unknown link or
    table (404), a bad box (422), a place already out of play or none to resume (409)."""
    link = _table_link(service, entry)
    place = entry.place()
    in_play = service.in_play
    if isinstance(entry, SuspendEntry):
        already = in_play.already(place)
        if already:
            raise StateConflictError("already " + "; ".join(describe(p) for p in already))
    elif not in_play.ending(place):
        what = f"link {entry.link}" if entry.table is None else f"table {entry.table}"
        boxes = "" if entry.boxes is None else f" boxes {entry.boxes}"
        raise StateConflictError(f"nothing to resume: {what}{boxes} is not suspended")
    return link


def apply_in_play(
    service: FloorData, entry: SuspendEntry | ResumeEntry, approved_by: str | None = None
) -> InPlayChanged:
    """Take the place out of play or back; audited (who, when, what, why)."""
    link = check_in_play(service, entry)
    place = entry.place()
    if isinstance(entry, SuspendEntry):
        periods = service.in_play.suspend(place, link, entry.now, entry.reason, entry.by)
    else:
        periods = service.in_play.resume(place, entry.now, entry.by, entry.reason)
    suspending = isinstance(entry, SuspendEntry)
    record: dict[str, Any] = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by, "action": entry.kind,
        "link": link, "meter": None, "table": entry.table, "boxes": entry.boxes,
        "before": {"in_play": suspending}, "after": {"in_play": not suspending},
        "reason": entry.reason,
    }  # fmt: skip
    if approved_by:
        record["approved_by"] = approved_by
    service.audit.append(record)
    return InPlayChanged(entry.kind, link, periods, entry.now, entry.by, entry.reason)


# -- a link retired for good --------------------------------------------------------


RETIRED = "link-retired"


class RetiredLinkError(StateConflictError):
    """A bet, a transfer or a change naming a retired link (409, `link-retired`)."""

    problem_type = RETIRED

    def __init__(self, link: str, retired: dict[str, Any]) -> None:
        super().__init__(
            f"link {link} is retired (since {format_time(retired['at'])}: "
            f"{retired['reason']}): it takes no bets, transfers or changes",
            ("link",),
        )
        self.extensions: dict[str, Any] = {"link": link, "retired": True}


def check_not_retired(service: FloorData, link: str | None) -> None:
    if link is not None and link in service.retired:
        raise RetiredLinkError(link, service.retired[link])


@dataclass(frozen=True, slots=True)
class Retired:
    link: str
    at: int
    by: str
    reason: str
    approved_by: str | None

    def answer(self) -> dict[str, Any]:
        data = {"link": self.link, "retired": True, "at": format_time(self.at), "by": self.by}
        if self.approved_by:
            data["approved_by"] = self.approved_by
        return {**data, "reason": self.reason}


def check_tables(service: FloorData, link: str) -> None:
    """The floor file's tables: a link a table names is in use (tables are assigned in the
    floor file; moving them is an edit of the file and a restart). Live only: a replay
    under a later file must decide as the writer did."""
    named = sorted(t for t, c in service.config.tables.items() if c.link == link)
    if named:
        raise StateConflictError(
            f"link {link} cannot be retired: tables {', '.join(named)} are assigned to it "
            "in the floor file (move them to another link, or remove them, and restart)",
            ("link",),
        )


def check_retire(service: FloorData, link: str) -> None:
    """What the journaled state refuses: an unknown (404) or retired link, one that holds
    money (a meter's value or reserve above zero, counting what is pending) or has a
    round, award or reset still under way."""
    state = service.floor.link(link)
    check_not_retired(service, link)
    held = [
        f"{config.id} (value {format_exact(value)}, reserve {format_exact(reserve)})"
        for config, (value, reserve) in zip(state.config.meters, state.provisional(), strict=True)
        if value > 0 or reserve > 0
    ]
    if held:
        raise StateConflictError(
            f"link {link} holds money: {', '.join(held)}; transfer it to another link "
            "first (POST /v1/links/{link}/meters/{meter}/transfers)",
            ("link",),
        )
    if state.open_rounds or state.timeline.pending():
        raise StateConflictError(f"link {link} has rounds or events still under way")


def apply_retire(service: FloorData, entry: RetireEntry, approved_by: str | None = None) -> Retired:
    check_retire(service, entry.link)
    seq = service.seq + 1  # this entry's (a retire, or the approve that applies it)
    service.retired[entry.link] = {
        "at": entry.now, "by": entry.by, "reason": entry.reason, "seq": seq,
    }  # fmt: skip
    # A link retired is a parameter changed for good: its history says so beside the
    # floor file's changes (docs/api.md "Parameters").
    service.parameters.history.append({
        "seq": seq, "at": entry.now, "state": "retired", "link": entry.link, "by": entry.by,
        "approved_by": approved_by, "reason": entry.reason,
        "changes": [{"parameter": f"links[{entry.link}].retired", "before": False, "after": True}],
    })  # fmt: skip
    record: dict[str, Any] = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by, "action": "retire",
        "link": entry.link, "meter": None, "before": {"retired": False},
        "after": {"retired": True}, "reason": entry.reason,
        "reason_code": "closure",
    }  # fmt: skip
    if approved_by:
        record["approved_by"] = approved_by
    service.audit.append(record)
    return Retired(entry.link, entry.now, entry.by, entry.reason, approved_by)
