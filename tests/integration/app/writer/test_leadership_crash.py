"""A leadership loop ended by an error no branch expects stops its process (exit status
6, docs/operations.md "Exit status"), against real PostgreSQL: a standby whose loop died
silently would never take over while /health still said "standby"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from app.cli.commands import _served
from app.cli.exit_status import CRASHED
from app.store.journal import PostgresJournal
from app.store.lease import Term
from app.writer.leadership import Leadership
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NoLease, service

pytestmark = pytest.mark.integration


class BrokenLease(NoLease):
    """A lease whose takeover fails with an error the leadership does not expect."""

    async def acquire(self) -> Term | None:
        raise RuntimeError("a bug in the lease")


async def test_a_leadership_loop_ended_by_an_error_stops_its_process(pool: asyncpg.Pool) -> None:
    crashes: list[BaseException] = []
    standby = Writer(service(), PostgresJournal(pool), WriterSettings())
    await standby.recover()
    leadership = Leadership(standby, PostgresJournal(pool), BrokenLease(), on_crash=crashes.append)
    leadership.start()
    for _ in range(200):
        if crashes:
            break
        await asyncio.sleep(0.05)
    assert [repr(e) for e in crashes] == [repr(RuntimeError("a bug in the lease"))]
    assert standby.standby and not leadership.leading
    await leadership.stop()  # the error was reported once, not raised again at shut-down


class Stopped:
    """A server that served and stopped (as uvicorn's `run` after SIGTERM)."""

    def run(self) -> None:
        return None


def test_a_process_stopped_by_a_crash_exits_with_its_own_status() -> None:
    class Process:
        refused: list[object] = []
        crashed = [RuntimeError("a bug in the lease")]

    assert _served(Stopped(), Process(), Path("floor.toml")) == CRASHED  # type: ignore[arg-type]
    Process.crashed = []
    assert _served(Stopped(), Process(), Path("floor.toml")) == 0  # type: ignore[arg-type]
