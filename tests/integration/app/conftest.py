"""Fixtures shared by the app's integration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from app.store.database import create_pool
from app.store.journal import Journal, MemoryJournal, PostgresJournal


@pytest.fixture(params=["memory", "postgres"])
async def journal(request: pytest.FixtureRequest) -> AsyncIterator[Journal]:
    """The journal both ways, the same history reading the same from either: in memory,
    and PostgreSQL on a fresh database. A module's own `journal` fixture overrides it."""
    adapter: Journal
    if request.param == "memory":
        adapter = MemoryJournal()
    else:
        adapter = await PostgresJournal.connect(request.getfixturevalue("fresh_dsn"))
    yield adapter
    await adapter.close()


@pytest.fixture
async def pool(fresh_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    """A connection pool to a fresh database (`fresh_dsn`), closed afterwards."""
    pool = await create_pool(fresh_dsn)
    yield pool
    await pool.close()
