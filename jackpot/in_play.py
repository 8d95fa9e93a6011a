"""What is in play: links, tables and boxes a supervisor (or a silent table) took out of it.

A suspension is a period: from `since` until a resumption (`until`). While one is in force
the progressive is not in play there (rules 5.17, 5.18.2 c): a jackpot wager there is not
accepted; everything already accepted keeps its course. Every period is kept, ended or
not, so that the reconciliation can list them. Pure: time is a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from jackpot.errors import StateConflictError

LINK, TABLE, BOX = "link", "table", "box"


@dataclass(slots=True)
class Suspension:
    """One period out of play: a link, a whole table, or one box of a table. `link` is
    the link suspended, or the table's link (None at a table with no link); `by` None is
    the writer's timer (a silent table)."""

    scope: str  # link, table or box
    link: str | None
    table: str | None
    box: int | None
    since: int
    reason: str
    by: str | None
    until: int | None = None
    resumed_by: str | None = None
    resume_reason: str | None = None

    @property
    def place(self) -> tuple[str, str, int]:
        """What is suspended, as a key: one period in force per place."""
        name = self.link if self.scope == LINK else self.table
        assert name is not None
        return (self.scope, name, self.box or 0)

    @property
    def active(self) -> bool:
        return self.until is None

    def describe(self) -> str:
        if self.scope == LINK:
            return f"link {self.link}"
        if self.scope == TABLE:
            return f"table {self.table}"
        return f"table {self.table} box {self.box}"


@dataclass(slots=True)
class Place:
    """A place named by a suspend or resume: a link, or a table with some boxes (None:
    the whole table)."""

    link: str | None
    table: str | None
    boxes: tuple[int, ...] | None = None

    def covers(self) -> list[tuple[str, str, int]]:
        if self.table is None:
            assert self.link is not None
            return [(LINK, self.link, 0)]
        if self.boxes is None:
            return [(TABLE, self.table, 0)]
        return [(BOX, self.table, box) for box in self.boxes]


class InPlay:
    """Every suspension period, in the order they began, and those in force by place."""

    def __init__(self, periods: Iterable[Suspension] = ()) -> None:
        self.periods: list[Suspension] = list(periods)
        self.active: dict[tuple[str, str, int], Suspension] = {
            p.place: p for p in self.periods if p.active
        }

    # -- checks and changes ----------------------------------------------------------

    def already(self, place: Place) -> list[Suspension]:
        """The periods in force at `place`: a place out of play is not suspended again."""
        return [self.active[k] for k in place.covers() if k in self.active]

    def suspend(
        self, place: Place, link: str | None, since: int, reason: str, by: str | None
    ) -> list[Suspension]:
        """Open a period for each key of `place`; `link` is the table's link for a table."""
        if self.already(place):
            raise StateConflictError(f"already suspended: {place.covers()}")
        begun = []
        for scope, name, box in place.covers():
            table = None if scope == LINK else name
            period = Suspension(scope, link, table, box or None, since, reason, by)
            self.periods.append(period)
            self.active[period.place] = period
            begun.append(period)
        return begun

    def ending(self, place: Place) -> list[Suspension]:
        """The periods a resume of `place` ends: a link's own; a whole table's own and
        every box's of it; the named boxes'. None in force: an empty list."""
        if place.table is not None and place.boxes is None:
            found = [
                p for k, p in self.active.items() if k[0] in (TABLE, BOX) and k[1] == place.table
            ]
        else:
            found = [self.active[k] for k in place.covers() if k in self.active]
        return sorted(found, key=lambda p: (p.since, p.box or 0))

    def resume(self, place: Place, at: int, by: str, reason: str) -> list[Suspension]:
        ended = self.ending(place)
        if not ended:
            raise StateConflictError(f"nothing to resume: {place.covers()}")
        for period in ended:
            period.until, period.resumed_by, period.resume_reason = at, by, reason
            del self.active[period.place]
        return ended

    # -- what is in play -------------------------------------------------------------

    def blocking(self, link: str | None, table: str, boxes: Iterable[int]) -> list[Suspension]:
        """The periods in force that keep a jackpot wager on these boxes of the table out of
        play: its link's, its own, those boxes' (5.18.2: the House may disallow bets on an
        affected box, or take no progressive bets at the table)."""
        found = []
        if link is not None and (LINK, link, 0) in self.active:
            found.append(self.active[(LINK, link, 0)])
        if (TABLE, table, 0) in self.active:
            found.append(self.active[(TABLE, table, 0)])
        found += [
            self.active[(BOX, table, b)]
            for b in sorted(set(boxes))
            if (BOX, table, b) in self.active
        ]
        return found

    def of_table(self, link: str | None, table: str) -> tuple[Suspension | None, list[Suspension]]:
        """What keeps the whole table out of play (its link's or its own, the earliest),
        and its suspended boxes."""
        whole = [
            p
            for k, p in self.active.items()
            if (link is not None and k == (LINK, link, 0)) or k == (TABLE, table, 0)
        ]
        boxes = sorted(
            (p for k, p in self.active.items() if k[0] == BOX and k[1] == table),
            key=lambda p: p.box or 0,
        )
        return (min(whole, key=lambda p: p.since) if whole else None), boxes

    def in_force(self) -> list[Suspension]:
        return sorted(self.active.values(), key=lambda p: (p.since, p.place))

    def overlapping(self, start: int, end: int) -> list[Suspension]:
        """The periods in force at some instant of [start, end)."""
        return [p for p in self.periods if p.since < end and (p.until is None or p.until > start)]

    # -- as JSON (snapshots) ---------------------------------------------------------

    def dump(self) -> list[dict[str, Any]]:
        return [asdict(p) for p in self.periods]

    @classmethod
    def load(cls, data: Iterable[dict[str, Any]]) -> InPlay:
        return cls(Suspension(**d) for d in data)
