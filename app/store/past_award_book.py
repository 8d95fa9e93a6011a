"""The awards that left the state's memory (app/state/past_awards.py), in PostgreSQL's
`past_awards` table (alembic/versions/0009) or in a memory journal: written with the
journal rows of the entry that made them leave, read a page at a time for
`GET /v1/awards`, through the store's pool, never from the writer's state."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from app.state.past_award import PastAward

_COLUMNS = (
    "id", "link", "table_id", "round", "meter", "kind", "state", "box", "dealt_at",
    "sequence", "kind_rank", "seq", "row", "payment",
)  # fmt: skip
_INSERT = (
    f"INSERT INTO past_awards ({', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join(f'${i}' for i in range(1, len(_COLUMNS) + 1))}) "
    "ON CONFLICT (id) DO NOTHING"
)
# Newest dealt first, as the listing orders awards in memory (app/state/views.py
# `Listed.order`, reversed), the id last; text keys in code point order (COLLATE "C").
_ORDER = (
    'dealt_at DESC, sequence DESC, table_id COLLATE "C" DESC, round COLLATE "C" DESC, '
    'box DESC, kind_rank DESC, id COLLATE "C" DESC'
)


# A connection as a pool lends it, or one of its own.
Connection: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"


@dataclass(frozen=True, slots=True)
class AwardFilter:
    """`GET /v1/awards`'s filters: None matches any; dealt_at in [start, end)."""

    kind: str | None = None
    link: str | None = None
    meter: str | None = None
    table: str | None = None
    state: str | None = None
    start: int = -(2**62)
    end: int = 2**62
    # An archived round's awards (its view), never a listing's filter: the rows only, the
    # counts (app/store/past_award_counts.py) do not know rounds.
    round: str | None = None

    def matches(self, award: PastAward) -> bool:
        wanted = (
            (self.kind, award.kind),
            (self.link, award.link),
            (self.meter, award.meter),
            (self.table, award.table),
            (self.state, award.state),
            (self.round, award.round),
        )
        return all(w is None or w == v for w, v in wanted) and (
            self.start <= award.dealt_at < self.end
        )

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its arguments."""
        args: list[Any] = [self.start, self.end]
        terms = ["dealt_at >= $1", "dealt_at < $2", *self.keys(args)]
        if self.round is not None:
            args.append(self.round)
            terms.append(f"round = ${len(args)}")
        return " AND ".join(terms), args

    def keys(self, args: list[Any]) -> list[str]:
        """The conditions on all but the time, their values appended to `args`."""
        terms = []
        for column, value in (
            ("kind", self.kind),
            ("link", self.link),
            ("meter", self.meter),
            ("table_id", self.table),
            ("state", self.state),
        ):
            if value is not None:
                args.append(value)
                terms.append(f"{column} = ${len(args)}")
        return terms


@runtime_checkable
class PastAwardBook(Protocol):
    async def past_awards_page(self, where: AwardFilter, first: int) -> tuple[list[PastAward], int]:
        """The `first` newest awards that match, in the listing's order, and how many match."""

    async def past_awards_by_id(self, ids: Sequence[str]) -> dict[str, PastAward]:
        """Those of these awards the book holds, by id."""

    async def restore_past_awards(self, awards: Sequence[PastAward]) -> None:
        """Write awards a replay found missing (app/store/past_award_check.py)."""


def records(awards: Iterable[PastAward]) -> list[tuple[Any, ...]]:
    return [
        (
            a.id,
            a.link,
            a.table,
            a.round,
            a.meter,
            a.kind,
            a.state,
            a.box,
            a.dealt_at,
            a.sequence,
            a.kind_rank,
            a.seq,
            a.row,
            a.payment,
        )  # fmt: skip
        for a in awards
    ]


async def insert(connection: Connection, awards: Sequence[PastAward]) -> None:
    """In the caller's transaction; an award written already (a rebuild) is left as it is."""
    await connection.executemany(_INSERT, records(awards))


async def page(
    connection: Connection, where: AwardFilter, first: int, wait_s: float
) -> list[PastAward]:
    """The `first` newest that match; how many match: app/store/past_award_counts.py."""
    condition, args = where.where()
    rows = await connection.fetch(
        f"SELECT {', '.join(_COLUMNS)} FROM past_awards WHERE {condition} "
        f"ORDER BY {_ORDER} LIMIT {int(first)}",
        *args,
        timeout=wait_s,
    )
    return [_award(r) for r in rows]


async def by_id(connection: Connection, ids: Sequence[str], wait_s: float) -> dict[str, PastAward]:
    rows = await connection.fetch(
        f"SELECT {', '.join(_COLUMNS)} FROM past_awards WHERE id = ANY($1::text[])",
        list(ids),
        timeout=wait_s,
    )
    return {r["id"]: _award(r) for r in rows}


def _award(r: Any) -> PastAward:
    return PastAward(
        r["id"], r["link"], r["table_id"], r["round"], r["meter"], r["kind"], r["state"],
        r["box"], r["dealt_at"], r["sequence"], r["kind_rank"], r["seq"], r["row"],
        r["payment"],
    )  # fmt: skip


def memory_page(
    awards: Iterable[PastAward], where: AwardFilter, first: int
) -> tuple[list[PastAward], int]:
    """The same page from awards kept in memory (app/store/journal.py MemoryJournal)."""
    matching = sorted(filter(where.matches, awards), key=PastAward.order, reverse=True)
    return matching[:first], len(matching)
