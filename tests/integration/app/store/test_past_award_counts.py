"""A page of past awards and how many match (app/store/past_award_counts.py): the total is
exactly the number of rows that match, whatever the filters and time range, and is found
without reading the rows outside the range's edges; the counts follow every write of the
rows (docs/api.md "Records and reports", docs/design.md "Past awards")."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.state.past_award import PastAward
from app.store.database import create_pool
from app.store.journal import PostgresJournal
from app.store.past_award_book import AwardFilter, records
from tests.conftest import run_blocking
from tests.integration.app.store import test_privileges
from tests.integration.app.store.support import row

pytestmark = pytest.mark.integration

runtime_dsn = test_privileges.runtime_dsn  # a login role of the runtime group

LOW, HIGH = -(2**62), 2**62  # the listing's open bounds (app/api/reading.py)
DAY = 86_400_000

# Times near span edges of every size (2**24 .. 2**40 ms), near the open bounds, and
# anywhere in between.
EDGES = [k * 2**s for s in (24, 28, 32, 36, 40) for k in (-2, -1, 1, 2, 105)]
TIMES = st.one_of(
    st.builds(lambda t, d: t + d, st.sampled_from([0, *EDGES]), st.integers(-2, 2)),
    st.sampled_from([LOW - 1, LOW, LOW + 1, HIGH - 1, HIGH, HIGH + 1]),
    st.integers(-(2**41), 2**41),
    st.integers(1_790_000_000_000, 1_800_000_000_000),
)
TABLES = ["T01", "T10", "t02"]  # "t02" sorts after "T10" in code point order
KINDS = ["player", "banker", "envy"]
LINKS = [None, "L1", "L2"]
METERS = [None, "major"]
STATES = ["paid", "void", "final"]

AWARD = st.tuples(
    st.sampled_from(TABLES),
    st.sampled_from(["R1", "R2"]),
    st.sampled_from(KINDS),
    st.sampled_from(LINKS),
    st.sampled_from(METERS),
    st.sampled_from(STATES),
    st.integers(1, 3),  # box
    TIMES,
    st.integers(0, 2),  # sequence
    st.integers(0, 2),  # kind_rank
)
FILTER = st.builds(
    AwardFilter,
    kind=st.sampled_from([None, *KINDS]),
    link=st.sampled_from([None, "L1", "L2"]),
    meter=st.sampled_from([None, "major"]),
    table=st.sampled_from([None, *TABLES]),
    state=st.sampled_from([None, *STATES]),
    start=st.one_of(st.just(LOW), TIMES),
    end=st.one_of(st.just(HIGH), TIMES),
)
# What the owner does to rows by hand: (index, None) deletes it, (index, state) sets it.
CHANGES = st.lists(st.tuples(st.integers(0, 59), st.sampled_from([None, *STATES])), max_size=4)


def past(i: int, fields: tuple[Any, ...]) -> PastAward:
    table, round_id, kind, link, meter, state, box, dealt_at, sequence, rank = fields
    name = f"A{i:03d}"
    return PastAward(
        name, link, table, round_id, meter, kind, state, box, dealt_at, sequence, rank, i + 1,
        f'{{"id":"{name}"}}',
    )  # fmt: skip


def matching(awards: list[PastAward], where: AwardFilter) -> list[PastAward]:
    """Written out here, not the code's `AwardFilter.matches`."""
    return [
        a
        for a in awards
        if (where.kind is None or a.kind == where.kind)
        and (where.link is None or a.link == where.link)
        and (where.meter is None or a.meter == where.meter)
        and (where.table is None or a.table == where.table)
        and (where.state is None or a.state == where.state)
        and where.start <= a.dealt_at < where.end
    ]


def newest_first(awards: list[PastAward]) -> list[str]:
    """docs/api.md: newest dealt first; then sequence, table, round, box, the kind's
    place (all descending, text in code point order), the id last."""
    key: Callable[[PastAward], tuple[Any, ...]] = lambda a: (  # noqa: E731
        a.dealt_at, a.sequence, a.table, a.round, a.box, a.kind_rank, a.id,
    )  # fmt: skip
    return [a.id for a in sorted(awards, key=key, reverse=True)]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(st.lists(AWARD, max_size=25), min_size=1, max_size=3),
    changes=CHANGES,
    filters=st.lists(FILTER, min_size=1, max_size=4),
    first=st.integers(1, 30),
)
@example(batches=[[]], changes=[], filters=[AwardFilter()], first=5)
@example(  # one award at an edge of the finest span, ranges ending just before and at it
    batches=[[("T01", "R1", "player", None, None, "paid", 1, 2**24, 0, 0)]],
    changes=[],
    filters=[AwardFilter(start=1, end=2**24), AwardFilter(start=2**24, end=2**24 + 1)],
    first=1,
)
def test_the_total_is_the_number_of_rows_that_match_and_the_page_their_newest(
    fresh_dsn: str,
    batches: list[list[tuple[Any, ...]]],
    changes: list[tuple[int, str | None]],
    filters: list[AwardFilter],
    first: int,
) -> None:
    run_blocking(_check_totals(fresh_dsn, batches, changes, filters, first))


async def _check_totals(
    dsn: str,
    batches: list[list[tuple[Any, ...]]],
    changes: list[tuple[int, str | None]],
    filters: list[AwardFilter],
    first: int,
) -> None:
    journal = await PostgresJournal.connect(dsn)
    owner = await asyncpg.connect(dsn)
    try:
        await owner.execute("DELETE FROM past_awards")  # the example before's
        assert await owner.fetchval("SELECT count(*) FROM past_award_counts") == 0
        awards: list[PastAward] = []
        for batch in batches:  # as recovery writes missing awards back
            added = [past(len(awards) + i, fields) for i, fields in enumerate(batch)]
            await journal.restore_past_awards(added)
            awards += added
        for index, state in changes:
            if index >= len(awards):
                continue
            gone = awards[index]
            if state is None:
                await owner.execute("DELETE FROM past_awards WHERE id = $1", gone.id)
                awards.remove(gone)
            else:
                await owner.execute(
                    "UPDATE past_awards SET state = $2 WHERE id = $1", gone.id, state
                )
                awards[index] = replace(gone, state=state)
        for where in filters:
            page, total = await journal.past_awards_page(where, first)
            wanted = matching(awards, where)
            assert total == len(wanted), where
            assert [a.id for a in page] == newest_first(wanted)[:first], where
        assert await journal.past_award_count_differences() == ([], 0)
    finally:
        await owner.close()
        await journal.close()


async def test_the_writers_append_counts_its_awards(fresh_dsn: str) -> None:
    journal = await PostgresJournal.connect(fresh_dsn)
    try:
        one = past(0, ("T01", "R1", "player", "L1", None, "paid", 1, 5 * DAY, 0, 0))
        two = past(1, ("T01", "R2", "player", "L1", None, "paid", 1, 5 * DAY + 1, 0, 0))
        three = past(2, ("T10", "R1", "envy", None, None, "void", 2, 9 * DAY, 0, 0))
        await journal.append([row(1, one, two), row(2), row(3, three)])
        await journal.append([row(4, one)])  # written already: counted once
        assert (await journal.past_awards_page(AwardFilter(), 10))[1] == 3
        assert (await journal.past_awards_page(AwardFilter(table="T01"), 10))[1] == 2
        assert (await journal.past_awards_page(AwardFilter(start=6 * DAY), 10))[1] == 1
        assert await journal.past_award_count_differences() == ([], 0)
    finally:
        await journal.close()


# Rows read from `past_awards` (pg_stat_user_tables) by one listing's page.
SPREAD = 20_000  # past awards, one every 2 minutes: about 28 days
STEP = 120_000
T0 = 1_790_000_000_000


@pytest.fixture
async def many(fresh_dsn: str) -> AsyncIterator[tuple[PostgresJournal, asyncpg.Pool]]:
    # One connection: the statistics read are that session's own, flushed on demand.
    pool = await create_pool(fresh_dsn, min_size=1, max_size=1)
    journal = PostgresJournal(pool)
    awards = [
        past(
            i, (TABLES[i % 3], f"R{i}", "player", None, None, STATES[i % 2], 1, T0 + i * STEP, 0, 0)
        )
        for i in range(SPREAD)
    ]
    async with pool.acquire() as connection:
        columns = ["id", "link", "table_id", "round", "meter", "kind", "state", "box"]
        columns += ["dealt_at", "sequence", "kind_rank", "seq", "row"]
        await connection.copy_records_to_table(
            "past_awards", records=records(awards), columns=columns
        )
        await connection.execute("VACUUM ANALYZE past_awards")
    yield journal, pool
    await pool.close()


async def rows_read(pool: asyncpg.Pool) -> int:
    await pool.execute("SELECT pg_stat_force_next_flush()")
    await pool.execute("SELECT pg_stat_clear_snapshot()")
    read = await pool.fetchval(
        "SELECT seq_tup_read + (SELECT sum(idx_tup_read) FROM pg_stat_user_indexes"
        " WHERE relname = 'past_awards') FROM pg_stat_user_tables WHERE relname = 'past_awards'"
    )
    return int(read)


@pytest.mark.parametrize(
    "where",
    [
        AwardFilter(),
        AwardFilter(table="T10", state="void"),
        AwardFilter(state="paid"),
        AwardFilter(meter="major"),  # none: a meter has an index of its own
        AwardFilter(table="T01", start=T0 + 3 * DAY + 12_345, end=T0 + 17 * DAY + 999),
        AwardFilter(start=T0 + 7 * DAY + 1),
    ],
)
async def test_a_page_and_its_total_read_only_the_rows_at_the_ranges_edges(
    many: tuple[PostgresJournal, asyncpg.Pool], where: AwardFilter
) -> None:
    journal, pool = many
    expected = sum(
        1
        for i in range(SPREAD)
        if where.start <= T0 + i * STEP < where.end
        and (where.table is None or TABLES[i % 3] == where.table)
        and (where.state is None or STATES[i % 2] == where.state)
        and where.meter is None
    )
    before = await rows_read(pool)
    page, total = await journal.past_awards_page(where, 25)
    read = await rows_read(pool) - before
    assert total == expected
    assert len(page) == min(25, expected)
    # The finest span is 2**24 ms (about 4.7 hours, 140 awards here): two edges and a
    # page read a few hundred rows; counting the matching rows would read thousands.
    assert read < 1_000, read


async def test_the_runtime_role_reads_the_counts_and_never_writes_them(runtime_dsn: str) -> None:
    """alembic 0010: the triggers count as the owner; the runtime role only reads the
    counts and may have them made again from the rows."""
    pool = await create_pool(runtime_dsn)
    journal = PostgresJournal(pool)
    try:
        assert await pool.fetchval("SELECT current_user") != "postgres"
        one = past(0, ("T01", "R1", "player", "L1", None, "paid", 1, 5 * DAY, 0, 0))
        await journal.restore_past_awards([one])
        assert (await journal.past_awards_page(AwardFilter(link="L1"), 10))[1] == 1
        for statement in (
            "INSERT INTO past_award_counts VALUES (24, 0, 'player', NULL, NULL, 'T01', 'paid', 1)",
            "UPDATE past_award_counts SET n = n + 1",
            "DELETE FROM past_award_counts",
            "TRUNCATE past_award_counts",
        ):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await pool.execute(statement)
        assert await journal.rebuild_past_award_counts() == 1
        assert await journal.past_award_count_differences() == ([], 0)
    finally:
        await pool.close()
