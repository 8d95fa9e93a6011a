"""The sessions and sign-in log port: one contract over the memory and PostgreSQL
adapters (app/store/sessions.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.store.database import create_pool
from app.store.sessions import (
    MemorySessions,
    PostgresSessions,
    Session,
    Sessions,
    SignInEvent,
    SignInQuery,
)

T0 = 1_800_000_000_000


@pytest.fixture(params=["memory", "postgres"])
async def sessions(request: pytest.FixtureRequest) -> AsyncIterator[Sessions]:
    if request.param == "memory":
        yield MemorySessions()
        return
    pool = await create_pool(request.getfixturevalue("fresh_dsn"))
    try:
        yield PostgresSessions(pool)
    finally:
        await pool.close()


def session(key: str, account: str = "ann", created: int = T0) -> Session:
    return Session(key, account, 0, "csrf-" + key, "10.0.0.1", created, created, created + 1000)


async def test_a_session_is_kept_by_its_hash_touched_and_ended_once(sessions: Sessions) -> None:
    assert await sessions.get("a" * 64) is None
    await sessions.open(session("a" * 64))
    assert await sessions.get("a" * 64) == session("a" * 64)
    await sessions.touch("a" * 64, T0 + 10)
    await sessions.touch("a" * 64, T0 + 5)  # never back in time
    found = await sessions.get("a" * 64)
    assert found is not None and found.last_seen_at == T0 + 10
    await sessions.end("a" * 64, T0 + 20, "signout")
    await sessions.end("a" * 64, T0 + 30, "idle")
    found = await sessions.get("a" * 64)
    assert found is not None and (found.ended_at, found.end_reason) == (T0 + 20, "signout")


async def test_live_sessions_are_not_ended_nor_past_their_lifetime(sessions: Sessions) -> None:
    await sessions.open(session("a" * 64, created=T0))
    await sessions.open(session("b" * 64, "bob", created=T0 + 500))
    await sessions.open(session("c" * 64, "cy", created=T0 + 600))
    await sessions.end("c" * 64, T0 + 700, "signout")
    assert [s.account for s in await sessions.live(T0 + 900)] == ["bob", "ann"]
    assert [s.account for s in await sessions.live(T0 + 1000)] == ["bob"]


async def test_the_log_keeps_order_and_answers_by_name_address_and_page(
    sessions: Sessions,
) -> None:
    events = [
        SignInEvent(T0, "failure", "ann", "10.0.0.1", "wrong password"),
        SignInEvent(T0 + 1, "failure", "bob", "10.0.0.2", "unknown name"),
        SignInEvent(T0 + 2, "lockout", "", "10.0.0.1", "2 failed sign-ins", T0 + 99, "address"),
        SignInEvent(T0 + 3, "signin", "ann", "10.0.0.3"),
    ]
    for event in events:
        await sessions.record(event)
    by_name = await sessions.recent("name", "ann", T0)
    assert [(e.event, e.seq) for e in by_name] == [("failure", 1), ("signin", 4)]
    by_address = await sessions.recent("address", "10.0.0.1", T0)
    assert [e.event for e in by_address] == ["failure", "lockout"]
    assert by_address[1].until == T0 + 99 and by_address[1].scope == "address"
    assert [e.event for e in await sessions.recent("address", "10.0.0.1", T0 + 1)] == ["lockout"]
    page, total = await sessions.events(SignInQuery(T0, T0 + 10, limit=2, offset=1))
    assert total == 4 and [e.seq for e in page] == [2, 3]
    page, total = await sessions.events(SignInQuery(T0, T0 + 10, name="ann", event="signin"))
    assert total == 1 and page[0].address == "10.0.0.3"
    page, total = await sessions.events(SignInQuery(T0, T0 + 10, offset=10))
    assert (page, total) == ([], 4)
