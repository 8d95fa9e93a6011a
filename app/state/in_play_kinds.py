"""The `suspend` and `resume` kinds: checked, applied to the state, audited; and the
refusal of a jackpot wager where the progressive is not in play (rules 5.17, 5.18.2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.state.entries import ResumeEntry, SuspendEntry
from app.state.in_play_views import InPlayChanged, describe, period_view
from app.state.shape import FloorData
from jackpot.errors import InvalidCommandError, StateConflictError
from jackpot.in_play import Suspension

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
