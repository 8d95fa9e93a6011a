"""The counts a listing's total is summed from (app/store/past_award_counts.py) follow the
`past_awards` rows through recovery's write back, are made from the rows already there
when the migration adds them, and a count that differs from the rows is named by
`jackpot verify` and made again by recovery when it writes rows back (docs/design.md,
"Past awards")."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from alembic import command
from app.audit.verify_run import verify
from app.store.database import ALEMBIC_DIR, create_pool, sqlalchemy_url
from app.store.journal import PostgresJournal
from app.store.past_award_book import AwardFilter
from tests.integration.app.support import build_server
from tests.integration.app.writer.test_past_awards_recovery import history, relisted, stored
from tests.support import Clock

pytestmark = pytest.mark.integration


async def test_verify_names_a_count_that_differs_from_the_rows(pool: asyncpg.Pool) -> None:
    await history(pool, Clock())
    count = await pool.fetchrow(
        "SELECT scale, bucket, n FROM past_award_counts WHERE table_id = 'T03'"
        " AND state = 'void' AND scale = 40"
    )
    assert count is not None
    await pool.execute(  # as the owner, by hand
        "UPDATE past_award_counts SET n = n + 1 WHERE table_id = 'T03' AND state = 'void'"
        " AND scale = 40"
    )
    config = build_server().writer.service.config
    report = await verify(PostgresJournal(pool), config)
    assert not report.ok
    assert [(d.kind, d.recorded, d.expected) for d in report.discrepancies] == [
        ("past_award_counts", count["n"] + 1, count["n"])
    ]
    what = report.discrepancies[0].what
    assert f"scale 40 bucket {count['bucket']} " in what
    assert f"T03 fixed void link tcp meter None: counts {count['n'] + 1}, the rows give" in what


async def test_recovery_makes_the_counts_again_when_rows_it_writes_back_were_not_counted(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    before = await history(pool, clock)
    left = await stored(pool)
    # As the owner, the counts' triggers off: the rows go, their counts stay. Written
    # back at recovery, they would be counted twice.
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute("SET LOCAL session_replication_role = replica")
        await connection.execute("DELETE FROM past_awards WHERE id LIKE '%P00%'")
    journal = PostgresJournal(pool)
    assert (await journal.past_award_count_differences())[1] > 0
    with caplog.at_level(logging.ERROR, logger="jackpot.writer"):
        assert await relisted(pool, clock) == before  # its totals too
    assert "past_award_counts differed from the past_awards rows" in caplog.text
    assert await stored(pool) == left
    assert await journal.past_award_count_differences() == ([], 0)
    config = build_server().writer.service.config
    assert (await verify(journal, config)).discrepancies == ()


async def test_rows_written_back_are_counted(pool: asyncpg.Pool) -> None:
    clock = Clock()
    before = await history(pool, clock)
    await pool.execute("DELETE FROM past_awards WHERE id LIKE '%P00%'")  # as the owner
    journal = PostgresJournal(pool)
    assert (await journal.past_awards_page(AwardFilter(), 1))[1] == 1  # 8 - 7
    assert await relisted(pool, clock) == before
    assert (await journal.past_awards_page(AwardFilter(), 1))[1] == 8
    assert await journal.past_award_count_differences() == ([], 0)


async def test_the_migration_counts_the_rows_already_there(fresh_dsn: str) -> None:
    pool = await create_pool(fresh_dsn)
    try:
        await history(pool, Clock())
        void = AwardFilter(state="void")
        wanted = await pool.fetchval("SELECT count(*) FROM past_awards WHERE state = 'void'")
        await alembic(fresh_dsn, "downgrade", "0009")
        assert await pool.fetchval("SELECT to_regclass('past_award_counts')") is None
        await alembic(fresh_dsn, "upgrade", "head")
        journal = PostgresJournal(pool)
        assert (await journal.past_awards_page(void, 1))[1] == wanted > 0
        assert await journal.past_award_count_differences() == ([], 0)
    finally:
        await pool.close()


async def alembic(dsn: str, how: str, revision: str) -> None:
    """Alembic's `how` to `revision` on this database, as app/store/database.py migrates."""

    async def connect() -> Any:
        return await asyncpg.connect(dsn)

    def run(connection: Any) -> None:
        config = Config()
        config.set_main_option("script_location", str(ALEMBIC_DIR))
        config.attributes["connection"] = connection
        getattr(command, how)(config, revision)

    engine = create_async_engine(sqlalchemy_url(dsn), async_creator=connect, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("SELECT 1"))
            await connection.run_sync(run)
    finally:
        await engine.dispose()
