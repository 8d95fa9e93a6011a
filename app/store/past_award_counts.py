"""How many past awards match `GET /v1/awards`'s filters, exact, without counting the
`past_awards` table: its triggers keep `past_award_counts` (alembic/versions/0010), one
row per filter key and span of dealt time, in the transaction that writes the rows. A
total sums the counts of the whole spans inside the time range, coarsest first, and
counts rows only in the two edges finer than the finest span (docs/design.md, "Past
awards"). The counts are checked against the rows by `jackpot verify`, and by recovery
when it writes rows back (app/store/past_award_check.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from app.store.past_award_book import AwardFilter, Connection

# Spans of 2**scale milliseconds, each nested in the next, finest first: alembic 0010.
# The listing's open bounds (app/api/reading.py `time_range`, +-2**62) fall on span
# edges of every scale, so an unbounded total reads only the coarsest counts.
SCALES = (24, 28, 32, 36, 40)
_FINEST = SCALES[0]
# Checking or rebuilding the counts reads every row: far longer than a page may take.
CHECK_WAIT_S = 600.0

Spans = list[tuple[int, int, int]]  # (scale, first bucket, bucket after the last)
Edges = list[tuple[int, int]]  # dealt_at in [start, end): counted in the rows


def spans(start: int, end: int) -> tuple[Spans, Edges]:
    """[start, end) as whole spans of the coarsest scales that fit, and the at most two
    edges no span fits in (each shorter than the finest span)."""
    whole: Spans = []
    edges: Edges = []

    def split(a: int, b: int, scales: Sequence[int]) -> None:
        if a >= b:
            return
        if not scales:
            edges.append((a, b))
            return
        scale, finer = scales[0], scales[1:]
        first, after = -((-a) >> scale), b >> scale  # ceil(a / 2**s), floor(b / 2**s)
        if first >= after:
            split(a, b, finer)
            return
        whole.append((scale, first, after))
        split(a, first << scale, finer)
        split(after << scale, b, finer)

    split(start, end, SCALES[::-1])
    return whole, edges


def total_query(where: AwardFilter) -> tuple[str, list[Any]]:
    """One statement (one snapshot): the counts of the whole spans plus the rows of each
    edge, both under the same filters."""
    args: list[Any] = []
    keys = where.keys(args)
    whole, edges = spans(where.start, where.end)
    args += [[s for s, _, _ in whole], [f for _, f, _ in whole], [a for _, _, a in whole]]
    n = len(args)
    on = " AND ".join(["c.bucket >= p.lo", "c.bucket < p.hi", *keys])
    parts = [
        "(SELECT coalesce(sum(c.n), 0) FROM "
        f"unnest(${n - 2}::smallint[], ${n - 1}::bigint[], ${n}::bigint[]) AS p(scale, lo, hi) "
        f"JOIN past_award_counts c ON c.scale = p.scale AND {on})"
    ]
    for a, b in edges:
        args += [a, b]
        inside = " AND ".join([f"dealt_at >= ${len(args) - 1}", f"dealt_at < ${len(args)}", *keys])
        parts.append(f"(SELECT count(*) FROM past_awards WHERE {inside})")
    return "SELECT " + " + ".join(parts), args


async def total(connection: Connection, where: AwardFilter, wait_s: float) -> int:
    """How many past awards match: exactly what count(*) over the filter gives."""
    query, args = total_query(where)
    return int(await connection.fetchval(query, *args, timeout=wait_s))


@dataclass(frozen=True, slots=True)
class CountDifference:
    """A count that is not what the rows give (0 for a key the other side lacks)."""

    scale: int
    bucket: int
    kind: str
    link: str | None
    meter: str | None
    table: str
    state: str
    stored: int
    rows: int

    def what(self) -> str:
        key = f"{self.table} {self.kind} {self.state} link {self.link} meter {self.meter}"
        start = self.bucket << self.scale
        return (
            f"past_award_counts scale {self.scale} bucket {self.bucket} (dealt_at from "
            f"{start}) {key}: counts {self.stored}, the rows give {self.rows}"
        )


# Every count from the rows (grouped once at the finest scale, the coarser ones from
# that) beside the stored ones; keys equal when their NULLs are (GROUP BY).
_DIFFERENCES = f"""
WITH finest AS (
    SELECT dealt_at >> {_FINEST} AS bucket, kind, link, meter, table_id, state, count(*) AS n
    FROM past_awards GROUP BY 1, 2, 3, 4, 5, 6
), given AS (
    SELECT s.scale, f.bucket >> (s.scale - {_FINEST}) AS bucket, kind, link, meter,
           table_id, state, sum(n) AS n
    FROM finest f CROSS JOIN unnest($1::smallint[]) AS s(scale)
    GROUP BY 1, 2, 3, 4, 5, 6, 7
), both_sides AS (
    SELECT scale, bucket, kind, link, meter, table_id, state, 0::numeric AS stored, n AS rows
    FROM given
    UNION ALL
    SELECT scale, bucket, kind, link, meter, table_id, state, n, 0 FROM past_award_counts
)
SELECT scale, bucket, kind, link, meter, table_id, state, sum(stored) AS stored,
       sum(rows) AS rows, count(*) OVER () AS differing
FROM both_sides GROUP BY 1, 2, 3, 4, 5, 6, 7
HAVING sum(stored) <> sum(rows)
ORDER BY 1, 2, 3, 4, 5, 6, 7
LIMIT $2
"""


async def differences(
    connection: Connection, wait_s: float, first: int = 20
) -> tuple[list[CountDifference], int]:
    """The first `first` counts that differ from the rows, and how many differ in all."""
    found = await connection.fetch(_DIFFERENCES, list(SCALES), first, timeout=wait_s)
    rows = [
        CountDifference(
            r["scale"],
            r["bucket"],
            r["kind"],
            r["link"],
            r["meter"],
            r["table_id"],
            r["state"],
            int(r["stored"]),
            int(r["rows"]),
        )  # fmt: skip
        for r in found
    ]
    return rows, int(found[0]["differing"]) if found else 0


async def rebuild(connection: Connection, wait_s: float) -> int:
    """The counts made again from the rows (alembic 0010); how many rows there are."""
    return int(await connection.fetchval("SELECT past_award_counts_rebuild()", timeout=wait_s))


@runtime_checkable
class PastAwardCounts(Protocol):
    """A journal whose past awards are counted aside (PostgreSQL's)."""

    async def past_award_count_differences(self) -> tuple[list[CountDifference], int]:
        """The first counts that differ from the rows, and how many differ in all."""

    async def rebuild_past_award_counts(self) -> int:
        """The counts made again from the rows; how many rows there are."""
