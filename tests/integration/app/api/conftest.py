"""Fixtures shared by the API's tests: the demo floor's server in-process on a test clock,
without and with dual control. A module's own fixture of the same name overrides one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.integration.app.support import make_client
from tests.support import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    async for c in make_client(clock, dual=False):
        yield c


@pytest.fixture
async def dual(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    async for c in make_client(clock, dual=True):
        yield c
