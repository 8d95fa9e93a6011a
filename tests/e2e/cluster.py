"""Writer processes on one database, as `jackpot serve` subprocesses, and a table client
that retries an event on the other writer as the proxy does (deploy/nginx.conf)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from app.state.timefmt import format_time

ROOT = Path(__file__).resolve().parents[2]
JACKPOT = str(Path(sys.executable).parent / "jackpot")
TOKENS = {"T01": "demo-table-T01", "T02": "demo-table-T02"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
LEASE_MS = 1_000
TAKEOVER_S = 20.0  # the tests' bound; bench_failover measures the goal (5 s)
SEED = Decimal("10000.00")  # the demo's major meter (stud link)
SHARE = Decimal("0.25")  # of each box's 1.00 jackpot wager, to the major meter


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def floor_file(folder: Path) -> Path:
    """The demo floor, with room for the rounds a load opens and never settles."""
    floor = folder / "floor.toml"
    floor.write_text("max_open_rounds = 1000000\n" + (ROOT / "app/demo/floor.toml").read_text())
    return floor


@dataclass
class Writer:
    """One `jackpot serve --role writer` on the shared DATABASE_URL."""

    name: str
    folder: Path
    dsn: str
    floor: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"

    def start(self) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_CONFIG")
        }
        env.update(
            DATABASE_URL=self.dsn,
            JACKPOT_LEASE_MS=str(LEASE_MS),
            JACKPOT_SNAPSHOT_EVERY="200",
        )
        env.update(self.extra_env)  # may set any of those too
        data = self.folder / f"{self.name}-data"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [JACKPOT, "serve", "--role", "writer", "--config", str(self.floor),
                 "--data-dir", str(data), "--port", str(self.port), "--log-level", "info"],
                env=env, stdout=out, stderr=out,
            )  # fmt: skip

    def health(self) -> tuple[int, dict[str, Any]] | None:
        try:
            r = httpx.get(f"{self.url}/health", timeout=1)
        except httpx.HTTPError:
            return None
        return r.status_code, r.json()

    def role(self) -> str | None:
        answer = self.health()
        return None if answer is None else str(answer[1].get("role"))

    def leads(self) -> bool:
        return self.health() == (200, {"status": "ok", "role": "leader"})

    def signal(self, number: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(number)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> int | None:
        """SIGTERM (drains, releases the lease); the exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


@contextlib.contextmanager
def writer_pair(
    folder: Path, dsn: str, env: dict[str, str] | None = None
) -> Iterator[list[Writer]]:
    """Writers "a" and "b" on the demo floor in `folder` (not started); killed at the end."""
    floor = floor_file(folder)
    writers = [Writer(name, folder, dsn, floor, extra_env=env or {}) for name in ("a", "b")]
    try:
        yield writers
    finally:
        for writer in writers:
            writer.kill()


def wait_for(what: str, check: Any, seconds: float, why: Any = lambda: "") -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}\n{why()}")


def leader_of(writers: list[Writer], seconds: float = 60) -> Writer:
    """The one writer that says it leads, once exactly one does and the others stand by."""

    def one() -> Writer | None:
        roles = [w.role() for w in writers]
        if roles.count("leader") == 1 and roles.count("standby") == len(writers) - 1:
            return writers[roles.index("leader")]
        return None

    found: Writer = wait_for(
        "one leader, the others standby", one, seconds,
        lambda: "\n".join(f"--- {w.name}\n{w.tail()}" for w in writers),
    )  # fmt: skip
    return found


def bets_body(boxes: int) -> dict[str, object]:
    return {
        "closed_at": format_time(time.time_ns() // 1_000_000),
        "boxes": [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, boxes + 1)],
    }


async def post_until_answered(
    clients: list[httpx.AsyncClient],
    table: str,
    round_id: str,
    body: dict[str, object],
    *,
    seconds: float = 30.0,
) -> tuple[int, dict[str, Any]]:
    """The table controller behind the proxy: the same event again, on the next writer,
    after a 503 or a lost connection (both may have recorded it: idempotent by key)."""
    import asyncio

    deadline = time.monotonic() + seconds
    turn = 0
    while True:
        client = clients[turn % len(clients)]
        turn += 1
        try:
            r = await client.post(
                f"/v1/tables/{table}/rounds/{round_id}/bets",
                json=body,
                headers={"Authorization": f"Bearer {TOKENS[table]}"},
            )
        except httpx.HTTPError:
            pass
        else:
            if r.status_code != 503:
                return r.status_code, r.json()
        if time.monotonic() > deadline:
            raise AssertionError(f"{table}/{round_id} not answered within {seconds} s")
        await asyncio.sleep(0.05)
