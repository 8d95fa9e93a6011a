"""`jackpot serve` refuses a floor file whose parameters the journal's state forbids
(docs/operations.md "Changing a parameter"): before anything is written, every problem on
stderr, and its own exit status (docs/operations.md "Exit status")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from app.cli.exit_status import START_REFUSED
from app.config.demo import DEMO_FLOOR
from app.state.timefmt import format_time
from tests.conftest import run_blocking
from tests.e2e.support import ROOT, free_port, wait_healthy

pytestmark = [pytest.mark.integration]

T01 = {"Authorization": "Bearer demo-table-T01"}


def environment(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JACKPOT_")}
    env.pop("REDIS_URL", None)
    # The demo floor's tokens, on purpose (a floor holding them is refused without it).
    env.update(DATABASE_URL=dsn, PYTHONPATH=str(ROOT), JACKPOT_DEMO_TOKENS="1")
    return env


def without_the_stud_link(text: str) -> str:
    """The stud link taken out of the file, its tables moved to tcp."""
    start = text.index('[[links]]\nid = "stud"')
    end = text.index('[[links]]\nid = "tcp"')
    return (text[:start] + text[end:]).replace('link = "stud"', 'link = "tcp"')


async def head(dsn: str) -> int:
    connection = await asyncpg.connect(dsn)
    try:
        seq = await connection.fetchval("SELECT max(seq) FROM journal")
    finally:
        await connection.close()
    return int(seq)


def test_a_refused_start_writes_nothing_and_says_why(fresh_dsn: str, tmp_path: Path) -> None:
    floor, env, port = tmp_path / "floor.toml", environment(fresh_dsn), free_port()
    floor.write_text(DEMO_FLOOR.read_text())
    serve = [sys.executable, "-m", "app.cli", "serve", "--config", str(floor),
             "--port", str(port), "--log-level", "warning"]  # fmt: skip
    log = tmp_path / "first.log"
    with log.open("wb") as out:
        process = subprocess.Popen(serve, env=env, cwd=ROOT, stdout=out, stderr=out)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(port, process, why=log.read_text)
        body = {
            "closed_at": format_time(int(time.time() * 1000)),
            "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
        }
        r = httpx.post(f"{base}/v1/tables/T01/rounds/R1/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, log.read_text()
    seq = run_blocking(head(fresh_dsn))

    floor.write_text(without_the_stud_link(DEMO_FLOOR.read_text()))
    done = subprocess.run(serve, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == START_REFUSED == 4, done.stderr
    assert "links[stud]: removed, but it holds money: major 10000.25" in done.stderr
    assert "tables[T01].link: changed (stud -> tcp) while rounds are open: R1" in done.stderr
    assert "tables[T02].link: changed" not in done.stderr  # no open round there
    assert run_blocking(head(fresh_dsn)) == seq
