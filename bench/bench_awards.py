"""GET /v1/awards over many past awards, and bets beside it.

N past awards (rows shaped as the writer writes them: app/store/past_award_book.py) are
copied into a fresh embedded PostgreSQL, then the server is built on it (in-process, as
the integration tests build it) and times, over `--requests` requests each:
`GET /v1/awards?limit=25`, `GET /v1/awards?limit=25&state=paid&table=T03`, `&meter=major`
(none match), `&table=T03` over two days (`from`/`to`), and bets posted one after
another. Latencies include the in-process client.

    .venv/bin/python bench/bench_awards.py --awards 500000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.compose import writer_process  # noqa: E402
from app.config.floor_file import parse_floor  # noqa: E402
from app.config.settings import Settings  # noqa: E402
from app.state.past_award import PastAward  # noqa: E402
from app.state.timefmt import (
    format_time,  # noqa: E402
    wall_clock_ms,  # noqa: E402
)
from app.store.database import create_pool, migrate, start_embedded  # noqa: E402
from app.store.journal import PostgresJournal  # noqa: E402
from app.store.past_award_book import records  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = {"Authorization": "Bearer demo-operator"}
T03 = {"Authorization": "Bearer demo-table-T03"}
TABLES = [f"T{i:02d}" for i in range(1, 11)]


def past_award(i: int, at: int) -> PastAward:
    """The i-th past award: a straight flush's 175.00 at table T01..T10, paid or void."""
    table, round_id = TABLES[i % len(TABLES)], f"B{i:07d}"
    award_id = f"{table}/{round_id}/1/player/fixed"
    state = "void" if i % 3 == 0 else "paid"
    dealt_at = at - 1_000 * (i + 1)
    row = {
        "id": award_id, "kind": "fixed", "state": state, "table": table, "round": round_id,
        "box": 1, "link": None, "meter": None, "amount": "175.00",
        "dealt_at": format_time(dealt_at),
    }  # fmt: skip
    text = json.dumps(row, separators=(",", ":"))
    return PastAward(
        award_id, None, table, round_id, None, "player", state, 1, dealt_at, 0, 0, i + 1, text
    )


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p50 = ordered[len(ordered) // 2]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms"


async def timed(client: httpx.AsyncClient, n: int, params: dict[str, Any]) -> list[float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        r = await client.get("/v1/awards", params=params, headers=OPERATOR)
        times.append(time.perf_counter() - t)
        assert r.status_code == 200, r.text
    return times


async def bets(client: httpx.AsyncClient, n: int) -> list[float]:
    times = []
    for k in range(n):
        now = wall_clock_ms()
        body = {
            "closed_at": format_time(now),
            "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
        }
        t = time.perf_counter()
        r = await client.post(f"/v1/tables/T03/rounds/K{k:05d}/bets", json=body, headers=T03)
        times.append(time.perf_counter() - t)
        assert r.status_code in (200, 201), r.text
    return times


async def run(args: argparse.Namespace, folder: Path) -> None:
    database = await start_embedded(folder)
    try:
        await migrate(database.dsn)
        pool = await create_pool(database.dsn)
        t = time.perf_counter()
        at = wall_clock_ms()
        for start in range(0, args.awards, 50_000):
            chunk = [past_award(i, at) for i in range(start, min(start + 50_000, args.awards))]
            await pool.copy_records_to_table(
                "past_awards", records=records(chunk), columns=list(_columns())
            )
        await pool.execute("ANALYZE past_awards")
        print(f"{args.awards:,} past awards written in {time.perf_counter() - t:.1f} s")
        floor = parse_floor((ROOT / "app" / "demo" / "floor.toml").read_text())
        server = writer_process(Settings(demo_tokens=True), floor, journal=PostgresJournal(pool))
        transport = httpx.ASGITransport(app=server.app)
        async with (
            server.app.router.lifespan_context(server.app),
            httpx.AsyncClient(transport=transport, base_url="http://b") as client,
        ):
            first = await client.get("/v1/awards", params={"limit": 25}, headers=OPERATOR)
            print(f"total listed: {first.json()['total']:,}")
            n = args.requests
            print("GET /v1/awards?limit=25:", percentiles(await timed(client, n, {"limit": 25})))
            wanted = {"limit": 25, "state": "paid", "table": "T03"}
            print("  ...&state=paid&table=T03:", percentiles(await timed(client, n, wanted)))
            wanted = {"limit": 25, "meter": "major"}
            print("  ...&meter=major:", percentiles(await timed(client, n, wanted)))
            # Two days, at neither end on an hour: the total counts rows at both edges.
            first_day = {
                "from": format_time(at - 3 * 86_400_000 - 1_234),
                "to": format_time(at - 86_400_000 + 777),
            }
            wanted = {"limit": 25, "table": "T03", **first_day}
            print("  ...&table=T03&from&to (2 days):", percentiles(await timed(client, n, wanted)))
            print("POST bets:", percentiles(await bets(client, n)))
        await pool.close()
    finally:
        await database.stop()


def _columns() -> tuple[str, ...]:
    from app.store.past_award_book import _COLUMNS

    return _COLUMNS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--awards", type=int, default=500_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    (ROOT / ".jackpot").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="bench_awards_", dir=ROOT / ".jackpot"))
    try:
        asyncio.run(run(args, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
