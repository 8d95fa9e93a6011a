"""The embedded PostgreSQL after a crash: whatever the old postmaster left behind, a start
waits a bounded time, starts the server anew when the old one is gone or mute, and logs
what it found. Real processes throughout: a postmaster the test starts itself (as the
server process would have), then stops, kills without reaping, or kills and replaces in
postmaster.pid by a live process of another kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import psutil  # type: ignore[import-untyped]
import pytest

from app.store.database import EmbeddedPostgres, _import_pgserver, start_embedded

pytestmark = pytest.mark.integration

# Each case must be over well before asyncpg's own 60 s connect timeout.
START_LIMIT_S = 40


def postgres_binary() -> Path:
    return Path(_import_pgserver().__file__).parent / "pginstall" / "bin" / "postgres"


def read_pid_file(pgdata: Path) -> list[str]:
    return (pgdata / "postmaster.pid").read_text().splitlines()


@pytest.fixture
def pgdata(pg_folder: Path) -> Path:
    """A data folder initialised by a first start and left stopped."""

    async def first() -> None:
        embedded = await start_embedded(pg_folder)
        await embedded.stop()

    asyncio.run(first())
    path = pg_folder / "postgres"
    assert not (path / "postmaster.pid").exists()
    return path


@contextlib.contextmanager
def postmaster(pgdata: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A postmaster that this test process started (its parent: only we can reap it)."""
    user = "pgserver" if os.geteuid() == 0 else None  # pgserver's user when run as root
    process = subprocess.Popen(
        [str(postgres_binary()), "-D", str(pgdata), "-h", "", "-k", str(pgdata)],
        user=user,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                lines = read_pid_file(pgdata)
                if len(lines) >= 8 and lines[0] == str(process.pid) and lines[7].strip() == "ready":
                    break
            assert process.poll() is None, "postgres did not start"
            time.sleep(0.05)
        else:
            raise AssertionError("postgres not ready within 30 s")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def gone(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


async def start(folder: Path, stale_wait: float) -> tuple[EmbeddedPostgres, float]:
    """start_embedded, with the seconds it took; fails rather than hang."""
    began = time.monotonic()
    embedded = await asyncio.wait_for(start_embedded(folder, stale_wait=stale_wait), START_LIMIT_S)
    return embedded, time.monotonic() - began


async def answers(embedded: EmbeddedPostgres) -> int:
    connection = await asyncpg.connect(embedded.dsn, timeout=10)
    try:
        value: int = await connection.fetchval("SELECT 41 + 1")
        return value
    finally:
        await connection.close()


def found(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name == "jackpot.database")


async def test_a_stopped_postmaster_is_waited_for_then_replaced(
    pgdata: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jackpot.database")
    with postmaster(pgdata) as old:
        os.kill(old.pid, signal.SIGSTOP)  # alive, holding the data folder, answering nothing
        embedded, took = await start(pgdata.parent, stale_wait=2)
        try:
            assert await answers(embedded) == 42
            assert gone(old.pid)  # killed (psutil reaps it: it is our child here)
            assert read_pid_file(pgdata)[0] != str(old.pid)
            assert took >= 2, "it did not wait for the old postmaster to answer"
            assert f"postmaster {old.pid} did not answer" in found(caplog)
        finally:
            await embedded.stop()


async def test_a_postmaster_not_yet_reaped_is_waited_for_then_replaced(
    pgdata: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jackpot.database")
    with postmaster(pgdata) as old:
        old.send_signal(signal.SIGKILL)  # and no wait(): a zombie until we reap it
        deadline = time.monotonic() + 10
        while psutil.Process(old.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline
            time.sleep(0.02)  # noqa: ASYNC251 - waits for a zombie outside any server; nothing else runs on the loop
        embedded, took = await start(pgdata.parent, stale_wait=1)
        try:
            assert await answers(embedded) == 42
            assert psutil.Process(old.pid).status() == psutil.STATUS_ZOMBIE  # still unreaped
            assert took >= 1, "it did not wait for the old postmaster to be reaped"
            assert f"postmaster {old.pid} has exited but is not reaped" in found(caplog)
        finally:
            await embedded.stop()


async def test_a_pid_file_naming_a_live_process_of_another_kind(
    pgdata: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # After a reboot or in a new container, the old postmaster's pid is someone else's.
    caplog.set_level(logging.INFO, logger="jackpot.database")
    with postmaster(pgdata) as old:
        saved = read_pid_file(pgdata)
        old.kill()
        old.wait()
    other = subprocess.Popen(["sleep", "120"])  # noqa: ASYNC220 - a stand-in process, started before the code under test runs
    try:
        (pgdata / "postmaster.pid").write_text("\n".join([str(other.pid), *saved[1:]]) + "\n")
        embedded, _ = await start(pgdata.parent, stale_wait=1)
        try:
            assert await answers(embedded) == 42
            assert other.poll() is None, "a process that is not our postmaster was harmed"
            assert f"process {other.pid} is not a postmaster of {pgdata}" in found(caplog)
        finally:
            await embedded.stop()
    finally:
        other.kill()
        other.wait()


async def test_a_pid_file_naming_a_dead_process(
    pgdata: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jackpot.database")
    with postmaster(pgdata) as old:
        old.kill()
        old.wait()  # reaped: its pid names nothing; its children may still be exiting
    embedded, _ = await start(pgdata.parent, stale_wait=1)
    try:
        assert await answers(embedded) == 42
        assert f"postmaster {old.pid} no longer runs" in found(caplog)
    finally:
        await embedded.stop()


async def test_a_postmaster_that_answers_is_joined_not_replaced(
    pgdata: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="jackpot.database")
    with postmaster(pgdata) as running:
        embedded, took = await start(pgdata.parent, stale_wait=5)
        try:
            assert await answers(embedded) == 42
            assert running.poll() is None
            assert read_pid_file(pgdata)[0] == str(running.pid)
            assert took < 5
            assert "did not answer" not in found(caplog)
        finally:
            await embedded.stop()  # our handle goes; pgserver stops the server it joined
