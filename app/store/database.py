"""PostgreSQL plumbing: the embedded server (pgserver), Alembic migrations, the asyncpg pool,
and the server's database, which opens all three."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import struct
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import psutil  # type: ignore[import-untyped]

from app.store.errors import JournalUnavailable

if TYPE_CHECKING:
    from asyncpg.pool import PoolAcquireContext
    from pgserver.postgres_server import PostgresServer
    from sqlalchemy.engine import Connection


def _alembic_dir() -> Path:
    """The migrations (no alembic.ini: configured in code below). Installed, the wheel
    carries them as app/migrations (pyproject.toml); in a checkout (PYTHONPATH, an
    editable install) they are the top-level alembic/ folder beside app/."""
    package = Path(__file__).resolve().parents[1]  # app/, this module is app/store/
    installed = package / "migrations"
    return installed if (installed / "env.py").is_file() else package.parent / "alembic"


ALEMBIC_DIR = _alembic_dir()

# The database the embedded server keeps the journal in (beside pgserver's "postgres").
EMBEDDED_DATABASE = "jackpot"

# Any constant: serialises concurrent `migrate` calls of several app processes.
_MIGRATION_LOCK = 0x6A61636B706F74  # "jackpot"

# How long a start waits for a postmaster that postmaster.pid names to answer (or, exited,
# to be reaped, or its orphaned processes to exit) before it starts the server anew.
STALE_WAIT_S = 10.0

log = logging.getLogger("jackpot.database")


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


async def start_embedded(
    data_dir: Path, *, delete_on_stop: bool = False, stale_wait: float = STALE_WAIT_S
) -> EmbeddedPostgres:
    """Start (or join an already running) PostgreSQL under data_dir/postgres.

    initdb on first use takes a few seconds, a start well under one; both block, so they
    run in a thread. With `delete_on_stop` the data folder goes too (tests). What a crash
    left behind is cleared first, within about `stale_wait` seconds (_clear_stale_postmaster).
    """
    pgdata = (data_dir / "postgres").resolve()
    server = await asyncio.to_thread(_start_blocking, pgdata, delete_on_stop, stale_wait)
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


def _start_blocking(pgdata: Path, delete_on_stop: bool, stale_wait: float) -> PostgresServer:
    pgserver = _import_pgserver()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with pgserver.PostgresServer._lock:  # the lock pgserver itself takes around that file
        _forget_dead_handles(pgdata)
        if pgdata not in pgserver.PostgresServer._instances:  # else this process runs it
            _clear_stale_postmaster(pgdata, stale_wait)
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


def _clear_stale_postmaster(pgdata: Path, wait: float) -> None:
    """Leave pgdata either with a postmaster that answers, or with none and no lock files.

    pgserver joins any server whose postmaster.pid names a process that exists, and
    PostgreSQL refuses to start while that process exists: after a crash the file may name
    a postmaster not yet reaped, a process of another kind (after a reboot, in a new
    container), or a postmaster that no longer answers. Then connecting failed with
    "connection refused", or hung. Here: wait up to `wait` seconds for the named postmaster
    to answer (it may be recovering) or to be reaped, and for an old server's processes
    to exit; kill those that remain, remove the stale lock files, and log what was found.
    """
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
    except FileNotFoundError:
        return
    except (OSError, ValueError, IndexError) as error:
        log.warning("%s is unreadable (%s): removing it", pid_file, error)
        pid_file.unlink(missing_ok=True)
        return
    deadline = time.monotonic() + wait
    kill_now = False
    try:
        process = psutil.Process(pid)
        status = process.status()
    except psutil.NoSuchProcess:
        log.warning(
            "postmaster %d no longer runs (%s left by a crash): starting anew", pid, pid_file
        )
    else:
        if status == psutil.STATUS_ZOMBIE:
            log.warning(
                "postmaster %d has exited but is not reaped: waiting up to %.1f s", pid, wait
            )
            while process.is_running() and time.monotonic() < deadline:
                time.sleep(0.05)
            log.warning(
                "postmaster %d %s: starting anew",
                pid,
                "is still not reaped" if process.is_running() else "is reaped",
            )
        elif process not in _server_processes(pgdata):
            log.warning(
                "%s names process %d, but process %d is not a postmaster of %s (%s, %s): "
                "the file is stale, starting anew",
                pid_file, pid, pid, pgdata, _name(process), status,
            )  # fmt: skip
        elif _answers(lines, deadline, process):
            log.info("postmaster %d of %s answers: joining it", pid, pgdata)
            return
        elif _exists(process):
            log.warning(
                "postmaster %d did not answer within %.1f s (process status %s): "
                "killing it and its processes, starting anew",
                pid, wait, status,
            )  # fmt: skip
            kill_now = True
        else:
            log.warning("postmaster %d exited while we waited for it: starting anew", pid)
    _end_server_processes(pgdata, deadline, kill_now)
    # PostgreSQL would refuse these while the pid they name exists (a zombie, another
    # process); no server of pgdata runs now, so they are stale.
    _remove_lock_file(pid_file, pid)
    if len(lines) >= 5 and lines[4].strip():
        _remove_lock_file(Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip()}.lock", pid)


def _server_processes(pgdata: Path) -> list[psutil.Process]:
    """The live processes of a PostgreSQL server of pgdata: every one runs in it."""
    found = []
    for process in psutil.process_iter(["name"]):
        try:
            if process.info["name"] != "postgres" or process.status() == psutil.STATUS_ZOMBIE:
                continue
            if Path(process.cwd()).resolve() == pgdata:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue  # gone, or another user's: not a server we started
    return found


def _answers(lines: list[str], deadline: float, process: psutil.Process) -> bool:
    """Whether the postmaster answers an SSLRequest before the deadline. A server in
    recovery answers too (its backends refuse queries, not the protocol); a stopped or
    hung one accepts the connection into its backlog and never replies."""
    request = struct.pack("!ii", 8, 80877103)  # the protocol's SSLRequest
    while _exists(process):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            if lines[4].strip():
                address: Any = f"{lines[4].strip()}/.s.PGSQL.{lines[3].strip()}"
                family = socket.AF_UNIX
            else:
                address, family = (lines[5].strip() or "127.0.0.1", int(lines[3])), socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as connection:
                connection.settimeout(min(left, 1.0))
                connection.connect(address)
                connection.sendall(request)
                if connection.recv(1):
                    return True
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    return False


def _end_server_processes(pgdata: Path, deadline: float, kill_now: bool) -> None:
    """An old server's processes: orphaned ones exit by themselves once their postmaster
    is gone, until the deadline; then (or at once, `kill_now`) they are killed."""
    remaining = _server_processes(pgdata)
    while remaining and not kill_now and time.monotonic() < deadline:
        time.sleep(0.05)
        remaining = [p for p in remaining if _exists(p)]
    if remaining:
        log.warning(
            "killing %d processes of the old server of %s: %s",
            len(remaining), pgdata, ", ".join(str(p.pid) for p in remaining),
        )  # fmt: skip
        for process in remaining:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)  # a stopped process dies of it too
        _, alive = psutil.wait_procs(remaining, timeout=10)
        if any(_exists(p) for p in alive):
            raise RuntimeError(f"processes of the old server of {pgdata} survived SIGKILL")


def _remove_lock_file(path: Path, pid: int) -> None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        if int(path.read_text().splitlines()[0]) == pid:
            path.unlink()
            log.info("removed the stale %s", path)


def _exists(process: psutil.Process) -> bool:
    """Alive: a zombie has exited (it only waits for its parent to reap it); is_running
    also tells a process that took over the pid."""
    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _name(process: psutil.Process) -> str:
    try:
        return str(process.name())
    except psutil.Error:
        return "?"


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


class ServerDatabase:
    """The server's PostgreSQL: DATABASE_URL, or an embedded server under `data_dir`.

    Built before the writer (the journal and the lease take it as their pool), opened in
    the app's lifespan: the server started, migrated, then one pool shared by both.
    """

    def __init__(self, url: str | None, data_dir: Path) -> None:
        self.url, self.data_dir = url, data_dir
        self.embedded: EmbeddedPostgres | None = None
        self._pool: asyncpg.Pool | None = None

    @property
    def dsn(self) -> str | None:
        """Where a process of its own may connect: known once the server runs."""
        return self.embedded.dsn if self.embedded is not None else self.url

    async def open(self) -> None:
        if self.url is None:
            self.embedded = await start_embedded(self.data_dir)
        dsn = self.dsn
        assert dsn is not None
        await migrate(dsn)
        self._pool = await create_pool(dsn)

    def acquire(self, *, timeout: float | None = None) -> PoolAcquireContext[asyncpg.Record]:
        if self._pool is None:
            raise JournalUnavailable("the database is not open")
        return self._pool.acquire(timeout=timeout)

    async def close(self) -> None:
        """Closes what `open` opened, in reverse order; what fails to close is let go."""
        if self._pool is not None:
            with contextlib.suppress(Exception):
                await self._pool.close()
        if self.embedded is not None:
            with contextlib.suppress(Exception):
                await self.embedded.stop()


# What the journal and the lease draw connections from.
Connections = asyncpg.Pool | ServerDatabase
