"""Migrations against a real PostgreSQL: idempotent, and the tables they promise."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import asyncpg
import psutil  # type: ignore[import-untyped]
import pytest

from app.store.database import (
    ALEMBIC_DIR,
    create_pool,
    migrate,
    sqlalchemy_url,
    start_embedded,
    with_database,
)
from tests.support import ROOT

pytestmark = pytest.mark.integration


async def columns(dsn: str, table: str) -> list[tuple[str, str, str]]:
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_name = $1 ORDER BY ordinal_position",
            table,
        )
    finally:
        await connection.close()
    return [(r["column_name"], r["data_type"], r["is_nullable"]) for r in rows]


async def test_migrate_creates_the_journal_and_snapshot_tables(fresh_dsn: str) -> None:
    assert await columns(fresh_dsn, "journal") == [
        ("seq", "bigint", "NO"),
        ("recorded_at_ms", "bigint", "NO"),
        ("kind", "text", "NO"),
        ("idem_key", "text", "YES"),
        ("body_sha256", "text", "YES"),
        ("entry", "text", "NO"),
        ("answer", "text", "YES"),
        ("hash", "text", "NO"),
    ]
    assert await columns(fresh_dsn, "snapshots") == [
        ("seq", "bigint", "NO"),
        ("taken_at_ms", "bigint", "NO"),
        ("state", "text", "YES"),  # rows stored before 0002
        ("packed", "bytea", "YES"),  # zlib-compressed JSON since 0002
    ]
    assert await columns(fresh_dsn, "writer_lease") == [  # since 0003
        ("id", "smallint", "NO"),
        ("epoch", "bigint", "NO"),
        ("holder", "text", "YES"),
        ("acquired_at", "timestamp with time zone", "YES"),
        ("expires_at", "timestamp with time zone", "NO"),
        ("nonce", "text", "YES"),  # since 0005
    ]
    pool = await create_pool(fresh_dsn)
    try:
        assert await pool.fetchval("SELECT version_num FROM alembic_version") == "0011"
        unique = await pool.fetchval(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'journal'"
            " AND indexdef LIKE 'CREATE UNIQUE INDEX%(idem_key)'"
        )
        assert unique == 1
    finally:
        await pool.close()


async def test_migrate_is_idempotent_and_keeps_data(fresh_dsn: str) -> None:
    connection = await asyncpg.connect(fresh_dsn)
    try:
        await connection.execute(
            "INSERT INTO journal (seq, recorded_at_ms, kind, entry, hash)"
            " VALUES (1, 0, 'k', '{}', 'h')"
        )
        await migrate(fresh_dsn)
        await migrate(fresh_dsn)
        assert await connection.fetchval("SELECT count(*) FROM journal") == 1
        assert await connection.fetchval("SELECT count(*) FROM alembic_version") == 1
    finally:
        await connection.close()


async def test_concurrent_migrations_of_one_database_do_not_collide(pg_dsn: str) -> None:
    # Several app processes may start at once against one database: the advisory lock
    # makes the second wait for the first, then find nothing to do.
    name = f"test_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(pg_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        dsn = with_database(pg_dsn, name)
        await asyncio.gather(*(migrate(dsn) for _ in range(4)))
        assert [c[0] for c in await columns(dsn, "journal")][0] == "seq"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def test_the_alembic_folder_is_not_a_package() -> None:
    # An __init__.py there would shadow the alembic library.
    assert (ALEMBIC_DIR / "env.py").is_file()
    assert not (ALEMBIC_DIR / "__init__.py").exists()


@pytest.mark.parametrize(
    ("dsn", "url"),
    [
        ("postgresql://postgres:@/jackpot?host=/tmp/pg", "postgresql+asyncpg://postgres:@/jackpot?host=/tmp/pg"),
        ("postgres://u:p@db:5432/j", "postgresql+asyncpg://u:p@db:5432/j"),
        ("postgresql+asyncpg://u@h/j", "postgresql+asyncpg://u@h/j"),
    ],
)  # fmt: skip
def test_sqlalchemy_url(dsn: str, url: str) -> None:
    assert sqlalchemy_url(dsn) == url


def test_sqlalchemy_url_refuses_other_schemes() -> None:
    with pytest.raises(ValueError, match="not a PostgreSQL DSN"):
        sqlalchemy_url("mysql://u@h/j")


def test_with_database_keeps_server_and_socket() -> None:
    assert (
        with_database("postgresql://postgres:@/postgres?host=/tmp/pg", "test_1")
        == "postgresql://postgres:@/test_1?host=/tmp/pg"
    )
    assert with_database("postgresql://u:p@h:5/a", "b") == "postgresql://u:p@h:5/b"


async def test_embedded_server_keeps_its_data_across_a_restart(pg_folder: Path) -> None:
    embedded = await start_embedded(pg_folder)
    try:
        assert "host=" in embedded.dsn and embedded.dsn.startswith("postgresql://")
        await migrate(embedded.dsn)
        connection = await asyncpg.connect(embedded.dsn)
        await connection.execute(
            "INSERT INTO journal (seq, recorded_at_ms, kind, entry, hash)"
            " VALUES (7, 0, 'k', '{}', 'h')"
        )
        await connection.close()
    finally:
        await embedded.stop()
    again = await start_embedded(pg_folder, delete_on_stop=True)
    try:
        assert again.dsn == embedded.dsn
        connection = await asyncpg.connect(again.dsn)
        assert await connection.fetchval("SELECT seq FROM journal") == 7
        await connection.close()
    finally:
        await again.stop()
    assert not (pg_folder / "postgres").exists()


async def test_a_server_left_by_a_killed_process_is_joined_then_stopped(pg_folder: Path) -> None:
    # kill -9 of the app leaves PostgreSQL running and the dead process registered with
    # pgserver; the next start must join that server, and its stop must really stop it.
    script = (
        "import asyncio, sys, time\n"
        "from pathlib import Path\n"
        "from app.store.database import start_embedded\n"
        "embedded = asyncio.run(start_embedded(Path(sys.argv[1])))\n"
        "print(embedded.dsn, flush=True)\n"
        "time.sleep(600)\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, str(pg_folder),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    dsn = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
    if not dsn:
        await process.wait()
        pytest.fail(f"the server process failed:\n{(await process.stderr.read()).decode()}")
    process.kill()
    await process.wait()
    postmaster = int((pg_folder / "postgres" / "postmaster.pid").read_text().split()[0])
    assert psutil.pid_exists(postmaster)

    embedded = await start_embedded(pg_folder, delete_on_stop=True)
    assert embedded.dsn == dsn
    connection = await asyncpg.connect(embedded.dsn)
    assert await connection.fetchval("SELECT 1") == 1
    await connection.close()
    await embedded.stop()
    assert not psutil.pid_exists(postmaster) or psutil.Process(postmaster).status() == "zombie"
