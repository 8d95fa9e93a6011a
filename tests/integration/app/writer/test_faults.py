"""PostgreSQL stopped under load: 503 with Retry-After, no acknowledged loss, recovery after."""

from __future__ import annotations

import asyncio
import time
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from app.state.timefmt import format_time
from app.store.database import create_pool, migrate, start_embedded
from app.store.journal import PostgresJournal
from tests.integration.app.support import build_server
from tests.support import Clock, bets_body

pytestmark = [pytest.mark.integration, pytest.mark.slow]
T01 = {"Authorization": "Bearer demo-table-T01"}
OPERATOR = {"Authorization": "Bearer demo-operator"}


def bets(box_count: int = 2) -> dict[str, object]:
    return {
        "closed_at": format_time(time.time_ns() // 1_000_000),
        "boxes": [{"box": b, "ante": "5.00", "jackpot": "1.00"} for b in range(1, box_count + 1)],
    }


async def test_database_stopped_under_load_gives_503_then_recovers(pg_folder: Path) -> None:
    database = await start_embedded(pg_folder)
    await migrate(database.dsn)
    pool = await create_pool(database.dsn)
    journal = PostgresJournal(pool, timeout=2.0)
    app = build_server(journal=journal).app
    acked: dict[str, int] = {}
    statuses: list[int] = []
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://t", timeout=30
            ) as client:

                async def post(n: int) -> None:
                    r = await client.post(
                        f"/v1/tables/T01/rounds/F{n}/bets", json=bets(), headers=T01
                    )
                    statuses.append(r.status_code)
                    if r.status_code == 200:
                        acked[f"F{n}"] = 2
                    else:
                        assert r.status_code == 503, r.text
                        assert r.headers["retry-after"] == "1"
                        assert r.headers["content-type"] == "application/problem+json"

                await asyncio.gather(*(post(n) for n in range(40)))
                assert len(acked) == 40
                health = (await client.get("/health")).json()
                assert health["status"] == "ok"

                await database.stop()  # the database goes away under load
                await asyncio.gather(*(post(n) for n in range(40, 80)))
                assert statuses.count(503) > 0
                assert (await client.get("/health")).json()["status"] == "degraded"

                database = await start_embedded(pg_folder)  # ... and comes back
                deadline = time.monotonic() + 60
                n = 80
                while time.monotonic() < deadline:
                    await post(n)
                    n += 1
                    if statuses[-1] == 200:
                        break
                    await asyncio.sleep(0.5)
                assert statuses[-1] == 200, "the server did not recover"
                await asyncio.gather(*(post(m) for m in range(n, n + 20)))
                assert (await client.get("/health")).json()["status"] == "ok"
    finally:
        await pool.close()

    # A fresh process over the same journal: every acknowledged event is there, once.
    pool = await create_pool(database.dsn)
    try:
        app = build_server(journal=PostgresJournal(pool)).app
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://t", timeout=30
            ) as client:
                present = 0
                for rnd in acked:
                    r = await client.get(f"/v1/tables/T01/rounds/{rnd}", headers=OPERATOR)
                    assert r.status_code == 200, rnd
                total = Decimal(0)
                for k in range(n + 20):  # every round any post may have reached
                    r = await client.get(f"/v1/tables/T01/rounds/F{k}", headers=OPERATOR)
                    if r.status_code == 200:
                        present += 1
                        total += sum(Decimal(b["contribution"]) for b in r.json()["boxes"])
                assert present >= len(acked)
                meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
                assert Decimal(meter["value"]) == Decimal("10000.00") + total
    finally:
        await pool.close()
        await database.stop()


async def test_a_stopped_database_is_503_on_every_path_that_reads_the_journal(
    pg_folder: Path,
) -> None:
    """An archived round, the reconciliation and a late retry read the
    journal; with the database stopped each answers 503 problem+json with Retry-After
    (not 500), and /health says degraded at once, before any commit has failed."""
    database = await start_embedded(pg_folder)
    await migrate(database.dsn)
    pool = await create_pool(database.dsn)
    clock = Clock()
    journal = PostgresJournal(pool, timeout=2.0, dsn=database.dsn)
    app = build_server(journal=journal, clock=clock, outcome_wait_s=0.2).app
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://t", timeout=30
            ) as client:
                body = bets_body(clock, (1, "25.00", "1.00"))
                r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
                assert r.status_code == 200, r.text
                hands = [
                    {"box": 1, "dealt_at": clock.at(5), "cards": ["2S", "7H", "9D", "JC", "KS"]}
                ]
                r = await client.post(
                    "/v1/tables/T01/rounds/R1/outcome", json={"boxes": hands}, headers=T01
                )
                assert r.status_code == 200, r.text
                clock.now += 16 * 60_000  # R1 leaves memory: its answers are the journal's
                r = await client.post(
                    "/v1/tables/T01/rounds/R2/bets",
                    json=bets_body(clock, (1, "25.00", "1.00")),
                    headers=T01,
                )
                assert r.status_code == 200, r.text
                archived = await client.get("/v1/tables/T01/rounds/R1", headers=OPERATOR)
                assert archived.status_code == 200 and archived.json()["archived"] is True
                health = await client.get("/health")
                assert (health.status_code, health.json()) == (
                    200,
                    {"status": "ok", "role": "leader"},
                )

                await database.stop()
                deadline = time.monotonic() + 10
                while (health := await client.get("/health")).status_code == 200:
                    assert time.monotonic() < deadline, "/health did not notice the database"
                    await asyncio.sleep(0.1)
                assert (health.status_code, health.json()) == (
                    503,
                    {"status": "degraded", "role": "leader"},
                )
                for method, path, json in (
                    ("GET", "/v1/tables/T01/rounds/R1", None),
                    ("GET", "/v1/reports/reconciliation", None),
                    ("POST", "/v1/tables/T01/rounds/R1/bets", body),  # a late retry
                ):
                    headers = T01 if method == "POST" else OPERATOR
                    r = await client.request(method, path, json=json, headers=headers)
                    assert r.status_code == 503, (path, r.text)
                    assert r.headers["content-type"] == "application/problem+json", path
                    assert r.headers["retry-after"] == "1", path
                    assert r.json()["status"] == 503
    finally:
        pool.terminate()
