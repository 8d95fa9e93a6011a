"""Fixtures shared by the app's integration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

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
