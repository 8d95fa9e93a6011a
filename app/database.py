"""PostgreSQL plumbing: the embedded server (pgserver), Alembic migrations, the asyncpg pool."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

if TYPE_CHECKING:
    from pgserver.postgres_server import PostgresServer
    from sqlalchemy.engine import Connection


def _alembic_dir() -> Path:
    """The migrations (no alembic.ini: configured in code below). Installed, the wheel
    carries them as app/migrations (pyproject.toml); in a checkout (PYTHONPATH, an
    editable install) they are the top-level alembic/ folder beside app/."""
    here = Path(__file__).resolve().parent
    installed = here / "migrations"
    return installed if (installed / "env.py").is_file() else here.parent / "alembic"


ALEMBIC_DIR = _alembic_dir()

# The database the embedded server keeps the journal in (beside pgserver's "postgres").
EMBEDDED_DATABASE = "jackpot"

# Any constant: serialises concurrent `migrate` calls of several app processes.
_MIGRATION_LOCK = 0x6A61636B706F74  # "jackpot"


# -- the embedded server -------------------------------------------------------------------


@dataclass(slots=True)
class EmbeddedPostgres:
    """A PostgreSQL server run by pgserver from `pgdata`, reached over a unix socket.

    `dsn` looks like postgresql://postgres:@/jackpot?host=/path/to/pgdata: asyncpg (and
    psql) take a directory as `host` to mean a unix socket in it.
    """

    dsn: str
    pgdata: Path
    _server: PostgresServer

    async def stop(self) -> None:
        """Stop the server (a fast shutdown: clients are disconnected, data is kept)."""
        await asyncio.to_thread(_stop_blocking, self._server)


async def start_embedded(data_dir: Path, *, delete_on_stop: bool = False) -> EmbeddedPostgres:
    """Start (or join an already running) PostgreSQL under data_dir/postgres.

    initdb on first use takes a few seconds, a start well under one; both block, so they
    run in a thread. With `delete_on_stop` the data folder goes too (tests).
    """
    pgdata = (data_dir / "postgres").resolve()
    server = await asyncio.to_thread(_start_blocking, pgdata, delete_on_stop)
    dsn = server.get_uri()
    # A database of our own, so that the journal is not in the maintenance database.
    connection = await asyncpg.connect(dsn)
    try:
        exists = await connection.fetchval(
            "SELECT 1 FROM pg_database WHERE datname = $1", EMBEDDED_DATABASE
        )
        if not exists:
            await connection.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE}"')
    finally:
        await connection.close()
    return EmbeddedPostgres(with_database(dsn, EMBEDDED_DATABASE), pgdata, server)


def _import_pgserver() -> Any:
    # platformdirs warns at pgserver's import when XDG_RUNTIME_DIR is unset (servers,
    # CI); pgserver only uses that folder when pgdata's socket path is too long.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR", category=UserWarning)
        import pgserver

    return pgserver


def _start_blocking(pgdata: Path, delete_on_stop: bool) -> PostgresServer:
    pgserver = _import_pgserver()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with pgserver.PostgresServer._lock:  # the lock pgserver itself takes around that file
        _forget_dead_handles(pgdata)
    server: PostgresServer = pgserver.get_server(
        pgdata, cleanup_mode="delete" if delete_on_stop else "stop"
    )
    return server


def _forget_dead_handles(pgdata: Path) -> None:
    """pgserver stops the server when its last *registered* process lets go, and it
    registers every process in pgdata/.handle_pids.json. A process killed with -9 stays
    registered for ever, and then no later process would ever stop the server. Drop
    the processes that no longer exist before registering ourselves."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and process_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_blocking(server: PostgresServer) -> None:
    server.cleanup()


# -- DSNs ----------------------------------------------------------------------------------


def with_database(dsn: str, database: str) -> str:
    """The same server and credentials, another database."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


def sqlalchemy_url(dsn: str) -> str:
    """postgresql://... (libpq form, as asyncpg takes it) -> postgresql+asyncpg://...

    Query parameters such as ?host=/socket/dir are kept: SQLAlchemy's asyncpg dialect
    passes them on to asyncpg.connect. `migrate` also connects through asyncpg with the
    DSN itself (async_creator), so every DSN asyncpg accepts works there.
    """
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql", "postgresql+asyncpg"):
        raise ValueError(f"not a PostgreSQL DSN: scheme {parts.scheme!r}")
    return urlunsplit(parts._replace(scheme="postgresql+asyncpg"))


# -- migrations and pool -------------------------------------------------------------------


async def migrate(dsn: str) -> None:
    """Alembic `upgrade head`, in one transaction, under an advisory lock (several
    processes may start at once against one database; the second waits, then finds
    nothing to do)."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    async def connect() -> Any:
        return await asyncpg.connect(dsn)

    engine = create_async_engine(sqlalchemy_url(dsn), async_creator=connect, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.execute(text(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})"))
            await connection.run_sync(_upgrade_head)
    finally:
        await engine.dispose()


def _upgrade_head(connection: Connection) -> None:
    from alembic.config import Config

    from alembic import command

    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    # alembic/env.py runs the migrations on this connection, inside our transaction.
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    """An asyncpg pool. A connection broken by a database restart is replaced on its next
    acquire, so the service recovers by itself once the database is back."""
    pool: asyncpg.Pool = await asyncpg.create_pool(
        dsn, min_size=min_size, max_size=max_size, reset=_keep_session
    )
    return pool


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Returning a connection to the pool, asyncpg rolls back a transaction left open and
    then, by default, resets the session (RESET ALL, UNLISTEN *, advisory locks...): one
    more round trip to the database per query or commit, waiting behind the writer's work
    on a busy event loop. Nothing here changes a session (no SET, LISTEN, advisory lock or
    cursor outside a transaction), so there is nothing to reset."""
