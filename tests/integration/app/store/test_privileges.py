"""Least privilege in PostgreSQL: migrations run as the owner; the runtime role
(`jackpot_runtime`, docs/operations.md "Roles and privileges") may read and append the
journal, never change or remove it; and the journal refuses UPDATE, DELETE and TRUNCATE
even to its owner, unless a session says, in its transaction, that it rewrites history."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import asyncpg
import pytest

from app.cli import main as jackpot
from app.state.past_award import PastAward
from app.store.database import create_pool, migrate, start_embedded, with_database
from app.store.journal import GENESIS, JournalRow, PostgresJournal, chain_hash
from app.store.lease import PostgresLease
from app.store.past_award_book import AwardFilter
from app.store.past_award_book import insert as insert_past_awards
from app.store.past_award_counts import differences as past_award_count_differences
from app.store.past_award_counts import total as count_past_awards
from app.store.sessions import PostgresSessions, Session, SignInEvent
from tests.conftest import admin, run_blocking
from tests.support import ROOT, rewrite_history

pytestmark = pytest.mark.integration

HEAD = "0011"

STATEMENTS = [
    "UPDATE journal SET kind = 'x'",
    "DELETE FROM journal",
    "TRUNCATE journal",
]


# What docs/operations.md "Backup and restore" dumps and restores.
RUNBOOK_TABLES = ["-t", "journal", "-t", "snapshots", "-t", "past_awards", "-t", "signins"]
PAST = PastAward(
    "T01/R1/1/player/royal-flush", None, "T01", "R1", None, "royal-flush", "paid", 1,
    1_000, 0, 0, 2, '{"id":"T01/R1/1/player/royal-flush","state":"paid"}',
)  # fmt: skip


def row(seq: int, head: str) -> JournalRow:
    text = f'{{"kind":"finalize","n":{seq}}}'
    return JournalRow(seq, seq, "finalize", None, None, text, None, chain_hash(head, text))


@pytest.fixture
async def runtime_dsn(fresh_dsn: str) -> AsyncIterator[str]:
    """A login role of the runtime group, as the runbook creates it."""
    name = f"jackpot_test_{uuid.uuid4().hex[:12]}"
    await admin(fresh_dsn, f"CREATE ROLE {name} LOGIN IN ROLE jackpot_runtime")
    try:
        yield fresh_dsn.replace("postgres:@", f"{name}:@", 1)
    finally:
        await admin(fresh_dsn, f"DROP OWNED BY {name}")
        await admin(fresh_dsn, f"DROP ROLE {name}")


async def test_the_runtime_role_reads_and_appends_but_never_changes_the_journal(
    runtime_dsn: str,
) -> None:
    assert "jackpot_test_" in runtime_dsn
    await migrate(runtime_dsn)  # at head: nothing to do, so a server's start passes
    pool = await create_pool(runtime_dsn)
    try:
        assert await pool.fetchval("SELECT current_user") != "postgres"
        term = await PostgresLease(pool, "a", 60_000).acquire()  # the lease: UPDATE
        assert term is not None
        journal = PostgresJournal(pool)
        journal.fence = term.fence
        first = row(1, GENESIS)
        await journal.append([first, row(2, first.hash)])
        await journal.save_snapshot(2, 0, b"x")
        assert [r.seq async for r in journal.read(0)] == [1, 2]
        for statement in STATEMENTS:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await pool.execute(statement)
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await rewrite_history(pool, statement)  # not even saying it means it
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await pool.execute("DELETE FROM snapshots")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await pool.execute("CREATE TABLE mine (x int)")
        assert await pool.fetchval("SELECT count(*) FROM journal") == 2
    finally:
        await pool.close()


async def test_the_journal_refuses_its_owner_to_change_it_unless_told_so(fresh_dsn: str) -> None:
    pool = await create_pool(fresh_dsn)
    try:
        first = row(1, GENESIS)
        await PostgresJournal(pool).append([first, row(2, first.hash)])
        for statement in STATEMENTS:
            with pytest.raises(asyncpg.PostgresError, match="append-only") as refused:
                await pool.execute(statement)
            assert refused.value.sqlstate == "JP004"
        assert await pool.fetchval("SELECT count(*) FROM journal") == 2
        await rewrite_history(pool, "DELETE FROM journal WHERE seq = 2")
        assert await pool.fetchval("SELECT count(*) FROM journal") == 1
        # Said in its own transaction only: the next statement is refused again.
        with pytest.raises(asyncpg.PostgresError, match="append-only"):
            await pool.execute("DELETE FROM journal")
    finally:
        await pool.close()


def test_jackpot_migrate_brings_a_database_to_head(pg_dsn: str) -> None:
    name = f"test_{uuid.uuid4().hex}"
    run_blocking(admin(pg_dsn, f'CREATE DATABASE "{name}"'))
    try:
        dsn = with_database(pg_dsn, name)
        assert jackpot(["migrate", "--database-url", dsn]) == 0

        async def version() -> str:
            connection = await asyncpg.connect(dsn)
            try:
                return str(await connection.fetchval("SELECT version_num FROM alembic_version"))
            finally:
                await connection.close()

        assert run_blocking(version()) == HEAD
    finally:
        run_blocking(admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def test_the_compose_init_script_makes_roles_a_writer_and_migrations_run_as(
    pg_folder: Path,
) -> None:
    """deploy/postgres-init.sh on an empty server (as PostgreSQL's image runs it), then
    `jackpot migrate` as the owner, then a writer's work as the servers' login."""
    server = await start_embedded(pg_folder, delete_on_stop=True)
    try:
        socket_dir = parse_qs(urlsplit(server.dsn).query)["host"][0]
        bin_dir = Path(pgserver_bin())
        environment = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "PGHOST": socket_dir,
            "POSTGRES_USER": "postgres",
            "JACKPOT_OWNER_PASSWORD": "owner-secret",
            "JACKPOT_APP_PASSWORD": "app-secret",
        }
        await admin(with_database(server.dsn, "postgres"), 'DROP DATABASE "jackpot" WITH (FORCE)')
        done = await asyncio.to_thread(
            subprocess.run,
            ["sh", str(ROOT / "deploy" / "postgres-init.sh")],
            env=environment,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        owner = f"postgresql://jackpot_owner:owner-secret@/jackpot?host={socket_dir}"
        app = f"postgresql://jackpot_app:app-secret@/jackpot?host={socket_dir}"
        assert await asyncio.to_thread(jackpot, ["migrate", "--database-url", owner]) == 0
        await migrate(app)  # a server's start: at head, nothing to do
        pool = await create_pool(app)
        try:
            term = await PostgresLease(pool, "a", 60_000).acquire()
            assert term is not None
            journal = PostgresJournal(pool)
            journal.fence = term.fence
            await journal.append([row(1, GENESIS)])
            for statement in STATEMENTS:
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await pool.execute(statement)
        finally:
            await pool.close()
    finally:
        await server.stop()


def pgserver_bin() -> str:
    import pgserver

    return str(Path(pgserver.__file__).parent / "pginstall" / "bin")


async def test_a_dump_restores_as_the_runbook_says_under_the_journals_triggers(
    pg_folder: Path,
) -> None:
    """docs/operations.md "Backup and restore": pg_dump of the tables; into a new database
    `jackpot migrate`, then pg_restore --data-only (pg_restore runs with an empty search
    path: the triggers must find their tables all the same). The past awards and the
    sign-in log come back too, the awards' counts rebuilt by their triggers."""
    server = await start_embedded(pg_folder, delete_on_stop=True)
    try:
        host = parse_qs(urlsplit(server.dsn).query)["host"][0]
        await migrate(server.dsn)
        pool = await create_pool(server.dsn)
        term = await PostgresLease(pool, "a", 60_000).acquire()
        assert term is not None
        journal = PostgresJournal(pool)
        journal.fence = term.fence
        first = row(1, GENESIS)
        await journal.append([first, row(2, first.hash)])
        async with pool.acquire() as held:
            await insert_past_awards(held, [PAST])
        await PostgresSessions(pool).record(SignInEvent(6, "signin", "ann", "10.0.0.1"))
        await pool.close()
        tools, dump = Path(pgserver_bin()), pg_folder / "jackpot.dump"
        tables = [*RUNBOOK_TABLES, "-t", "alembic_version"]
        common = ["-h", host, "-U", "postgres"]
        run = [str(tools / "pg_dump"), *common, "-d", "jackpot", "-Fc", *tables, "-f", str(dump)]
        assert (await asyncio.to_thread(subprocess.run, run)).returncode == 0
        await admin(with_database(server.dsn, "postgres"), 'CREATE DATABASE "restored"')
        restored = with_database(server.dsn, "restored")
        await migrate(restored)
        run = [str(tools / "pg_restore"), *common, "-d", "restored", "--data-only",
               "--single-transaction", *RUNBOOK_TABLES, str(dump)]  # fmt: skip
        done = await asyncio.to_thread(subprocess.run, run, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        connection = await asyncpg.connect(restored)
        try:
            assert await connection.fetchval("SELECT max(seq) FROM journal") == 2
            assert await connection.fetchval("SELECT row FROM past_awards") == PAST.row
            assert await count_past_awards(connection, AwardFilter(), 5.0) == 1
            assert await past_award_count_differences(connection, 5.0) == ([], 0)
            assert await connection.fetchval("SELECT name FROM signins") == "ann"
        finally:
            await connection.close()
    finally:
        await server.stop()


async def test_the_runtime_role_keeps_sessions_and_appends_to_the_sign_in_log(
    runtime_dsn: str,
) -> None:
    pool = await create_pool(runtime_dsn)
    try:
        sessions = PostgresSessions(pool)
        opened = Session("a" * 64, "ann", 0, "csrf", "10.0.0.1", 1, 1, 100)
        await sessions.open(opened)
        await sessions.touch(opened.id_sha256, 5)
        await sessions.end(opened.id_sha256, 6, "signout")
        await sessions.record(SignInEvent(6, "signout", "ann", "10.0.0.1"))
        assert [e.event for e in await sessions.recent("name", "ann", 0)] == ["signout"]
        for statement in ("DELETE FROM signins", "UPDATE signins SET name = 'x'",
                          "DELETE FROM operator_sessions"):  # fmt: skip
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await pool.execute(statement)
    finally:
        await pool.close()
