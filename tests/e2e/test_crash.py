"""kill -9 under load: every acknowledged event survives exactly once, and money is conserved.

The server runs as a real subprocess on the demo floor with its embedded PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import cast

import asyncpg
import httpx
import pytest

from app.state.timefmt import format_time
from tests.conftest import server_folder
from tests.e2e.support import JACKPOT, ROOT, free_port, wait_healthy

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOKENS = {"T01": "demo-table-T01", "T02": "demo-table-T02"}
OPERATOR = {"Authorization": "Bearer demo-operator"}


def start(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_CONFIG")
    }
    # Snapshots every 100 entries: the snapshotter process stores them while the load
    # runs and the kill lands, and the restart recovers from one (plus the rows after).
    env["JACKPOT_SNAPSHOT_EVERY"] = "100"
    # The load opens rounds it never settles, more than the demo's max_open_rounds a table.
    floor = data.parent / "floor.toml"
    demo = (ROOT / "app/demo/floor.toml").read_text()
    floor.write_text("max_open_rounds = 1000000\n" + demo)
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [
                JACKPOT,
                "serve",
                "--config",
                str(floor),
                "--data-dir",
                str(data),
                "--port",
                str(port),
                "--log-level",
                "info",
            ],
            env=env,
            stdout=out,
            stderr=out,
        )


def body(boxes: int) -> dict[str, object]:
    return {
        "closed_at": format_time(time.time_ns() // 1_000_000),
        "boxes": [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, boxes + 1)],
    }


async def load(
    port: int,
    posted: dict[str, tuple[str, dict[str, object]]],
    acked: set[str],
    stop: asyncio.Event,
) -> None:
    async def worker(w: int) -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            n = 0
            while not stop.is_set():
                n += 1
                table = "T01" if w % 2 else "T02"
                rnd = f"W{w}-{n}"
                payload = body(random.randint(1, 7))
                posted[f"{table}/{rnd}"] = (table, payload)
                try:
                    r = await client.post(
                        f"/v1/tables/{table}/rounds/{rnd}/bets",
                        json=payload,
                        headers={"Authorization": f"Bearer {TOKENS[table]}"},
                    )
                except httpx.HTTPError:
                    return  # the server died under us
                if r.status_code == 200:
                    acked.add(f"{table}/{rnd}")

    await asyncio.gather(*(worker(w) for w in range(16)))


async def snapshot_stored(data: Path, within_s: float = 120.0) -> None:
    """Wait until the server's database holds a snapshot (its embedded PostgreSQL's socket
    is in data/postgres: app/store/database.py)."""
    dsn = f"postgresql://postgres:@/jackpot?host={(data / 'postgres').resolve()}"
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            connection = await asyncpg.connect(dsn)
            try:
                if await connection.fetchval("SELECT count(*) FROM snapshots"):
                    return
            finally:
                await connection.close()
        except (OSError, asyncpg.PostgresError):
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"no snapshot stored within {within_s} s")


@pytest.fixture
def data_dir() -> Iterator[Path]:
    with server_folder() as path:
        yield path


def test_kill_9_loses_no_acknowledged_event_and_counts_none_twice(data_dir: Path) -> None:
    data, log = data_dir / "data", data_dir / "server.log"
    port = free_port()
    proc = start(data, port, log)
    try:
        wait_healthy(port, proc)
        posted: dict[str, tuple[str, dict[str, object]]] = {}
        acked: set[str] = set()

        async def run() -> None:
            stop = asyncio.Event()
            task = asyncio.create_task(load(port, posted, acked, stop))
            # The kill lands once a snapshot is stored (the snapshotter follows the journal
            # at its own pace: on a busy machine it may lag the first seconds' load).
            await snapshot_stored(data)
            await asyncio.sleep(random.uniform(1.5, 4.0))
            proc.send_signal(signal.SIGKILL)  # at a random moment, mid-flight
            await asyncio.sleep(0.2)
            stop.set()
            await task

        asyncio.run(run())
        proc.wait(timeout=10)
        assert len(acked) > 100, "the load did not get going"

        proc = start(data, port, log)
        wait_healthy(port, proc)
        # The restart began from a snapshot: it replayed fewer entries than there are.
        recovered = re.findall(r"recovered: (\d+) journal entries replayed, head seq (\d+)",
                               log.read_text())  # fmt: skip
        replayed, head = map(int, recovered[-1])
        assert head > 100 and replayed < head, recovered
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            present: dict[str, Decimal] = {}
            for key, (table, _payload) in posted.items():
                rnd = key.split("/")[1]
                r = client.get(f"/v1/tables/{table}/rounds/{rnd}", headers=OPERATOR)
                assert r.status_code in (200, 404)
                if r.status_code == 200:
                    present[key] = sum(
                        (Decimal(b["contribution"]) for b in r.json()["boxes"]), Decimal(0)
                    )
            # Every acknowledged event is there (an unacknowledged one may be too: it
            # was committed, and the answer was lost with the process).
            assert acked <= set(present)
            meter = client.get("/v1/links/stud/meters/major", headers=OPERATOR).json()
            # Exactly once: the meter holds the seed plus each recorded round once.
            assert Decimal(meter["value"]) == Decimal("10000.00") + sum(present.values())
            # A retry of every event, acknowledged or not, is answered and counts once.
            for key, (table, payload) in posted.items():
                rnd = key.split("/")[1]
                r = client.post(
                    f"/v1/tables/{table}/rounds/{rnd}/bets",
                    json=payload,
                    headers={"Authorization": f"Bearer {TOKENS[table]}"},
                )
                if r.status_code == 422:  # closed more than round_timeout ago cannot happen here
                    raise AssertionError(r.text)
                assert r.status_code == 200, r.text
            meter = client.get("/v1/links/stud/meters/major", headers=OPERATOR).json()
            per_round = {
                k: sum((Decimal("0.25") for _ in cast(list[object], p[1]["boxes"])), Decimal(0))
                for k, p in posted.items()
            }
            assert Decimal(meter["value"]) == Decimal("10000.00") + sum(per_round.values())
    finally:
        proc.terminate()
        try:
            assert proc.wait(timeout=60) == 0  # SIGTERM drains and exits 0
        finally:
            if proc.poll() is None:
                proc.kill()
