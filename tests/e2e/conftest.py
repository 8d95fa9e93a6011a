"""A real writer (`jackpot serve`) on the demo floor with dual control, its tables
simulated (`jackpot simulate`), for the console's browser tests; and the browser."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, async_playwright

from app.config.demo import DEMO_FLOOR
from app.store.database import with_database
from tests.conftest import admin, run_blocking, server_folder

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"  # the display page's tests keep their screenshots here too
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip
# Server strings that are markup: they must show as text and never run.
HOSTILE = "<img src=x onerror=window.pwned=1>"


@dataclass
class Server:
    base: str
    port: int
    floor: Path
    log: Path
    process: subprocess.Popen[bytes]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


@pytest.fixture(autouse=True, scope="session")
def demo_tokens() -> Iterator[None]:
    """The servers these tests start run on the demo floor's published tokens, on purpose
    (`jackpot serve` refuses them otherwise)."""
    before = os.environ.get("JACKPOT_DEMO_TOKENS")
    os.environ["JACKPOT_DEMO_TOKENS"] = "1"
    yield
    if before is None:
        del os.environ["JACKPOT_DEMO_TOKENS"]
    else:
        os.environ["JACKPOT_DEMO_TOKENS"] = before


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def demo_floor(target: Path) -> Path:
    """The demo floor with dual control on and a link named with markup."""
    text = DEMO_FLOOR.read_text().replace("dual_control = false", "dual_control = true")
    text = text.replace('name = "Three Card Poker Progressive"', f'name = "{HOSTILE}"')
    assert HOSTILE in text and "dual_control = true" in text
    target.write_text(text)
    return target


def _environment(dsn: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JACKPOT_")}
    env.pop("REDIS_URL", None)
    env["DATABASE_URL"] = dsn
    env["PYTHONPATH"] = str(ROOT)
    env["JACKPOT_DEMO_TOKENS"] = "1"  # the demo floor's tokens, on purpose
    return env


@pytest.fixture(scope="module")
def server(pg_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The writer on a database of its own, and the simulated tables posting rounds."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install it with `apt-get install -y chromium`")
    folder = tmp_path_factory.mktemp("console")
    name = f"test_{uuid.uuid4().hex}"
    run_blocking(admin(pg_dsn, f'CREATE DATABASE "{name}"'))
    env = _environment(with_database(pg_dsn, name))
    floor, port, log = demo_floor(folder / "floor.toml"), free_port(), folder / "server.log"
    exe = [sys.executable, "-m", "app.cli"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*exe, "serve", "--config", str(floor), "--port", str(port), "--log-level", "warning"],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", port, floor, log, process)
    simulator = None
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"the server exited:\n{server.tail()}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{server.base}/health", timeout=1).status_code == 200:
                    break
            assert time.monotonic() < deadline, f"the server did not start:\n{server.tail()}"
            time.sleep(0.3)
        simulator = subprocess.Popen(
            [*exe, "simulate", "--url", server.base, "--config", str(floor),
             "--boost", "2000", "--rate", "1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
        )  # fmt: skip
        yield server
    finally:
        for proc in (simulator, process):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        run_blocking(admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
def folder() -> Iterator[Path]:
    """A scratch folder for writer processes and their embedded PostgreSQL, open to the
    server's own user (tests/conftest.py `server_folder`)."""
    with server_folder() as path:
        yield path
