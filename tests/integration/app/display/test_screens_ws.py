"""Screens answer back over a real uvicorn server and real websocket clients: a `shown`
is taken and listed by `GET /v1/screens`; anything else closes the socket (docs/api.md
"Displays", "Signs")."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.api import problems
from app.api.auth import floor_tokens
from app.api.screen_routes import screen_router
from app.config.floor_file import load_floor
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.frames import DisplayWebSocketProtocol
from app.display.link_routes import display_router
from app.display.screen_watch import ScreenWatch
from app.display.screens import Screens
from tests.support import DEMO, OPERATOR


@contextlib.asynccontextmanager
async def serve(ws: str | type[asyncio.Protocol]) -> AsyncIterator[tuple[str, Broadcaster]]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=10, ping_s=3600.0)
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    watch = ScreenWatch(Screens(broadcaster.link_state), broadcaster)
    await broadcaster.start()
    app = FastAPI()
    problems.install(app)
    app.include_router(display_router(broadcaster, screens=watch.screens))
    app.include_router(screen_router(watch, floor_tokens(load_floor(DEMO))))
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", ws=ws,
        ws_per_message_deflate=False, ws_max_size=4096,
    )  # fmt: skip
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}", broadcaster
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task


@pytest.fixture(params=["auto", DisplayWebSocketProtocol], ids=["asgi", "direct"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Broadcaster]]:
    async with serve(request.param) as s:
        yield s


async def recv(ws: ClientConnection) -> dict[str, Any]:
    async with asyncio.timeout(10):
        message: dict[str, Any] = json.loads(await ws.recv())
        return message


async def screens(host: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient() as client:
        r = await client.get(f"http://{host}/v1/screens", headers=OPERATOR)
        assert r.status_code == 200, r.text
        rows: list[dict[str, Any]] = r.json()["screens"]
        return rows


async def until_listed(host: str, **expected: Any) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            rows = await screens(host)
            if rows and all(rows[0].get(k) == v for k, v in expected.items()):
                return rows[0]
            await asyncio.sleep(0.05)


async def test_a_shown_is_listed_with_its_seq_values_and_no_variance(
    served: tuple[str, Broadcaster],
) -> None:
    host, broadcaster = served
    broadcaster.meters("stud", {"major": "10000.25"})
    broadcaster.flush()
    url = f"ws://{host}/v1/links/stud/ws?screen=scr-test-0001&name=bar-left"
    async with connect(url) as ws:
        snapshot = await recv(ws)
        shown = {"type": "shown", "seq": snapshot["seq"],
                 "values": [{"meter": "major", "value": "10000.25"}], "wins": []}  # fmt: skip
        await ws.send(json.dumps(shown))
        row = await until_listed(host, seq=snapshot["seq"])
        assert (row["screen"], row["name"], row["link"], row["connected"]) == (
            "scr-test-0001", "bar-left", "stud", True,
        )  # fmt: skip
        assert (row["seq_behind"], row["lag_ms"], row["variance"], row["flags"]) == (
            0,
            0,
            "0.00",
            [],
        )
        # The value moves on and the screen has not said it shows it: behind, and off.
        broadcaster.meters("stud", {"major": "10100.25"})
        broadcaster.flush()
        await recv(ws)
        row = await until_listed(host, seq_behind=1)
        assert row["variance"] == "100.00" and row["lag_ms"] >= 0
    row = await until_listed(host, connected=False)
    assert row["screen"] == "scr-test-0001"
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"http://{host}/v1/screens")).status_code == 401


@pytest.mark.parametrize(
    "message", ["hello", '{"type": "shown"}', '{"type": "ping", "seq": 1}', b"\x00\x01"]
)
async def test_any_other_message_closes_the_socket(
    served: tuple[str, Broadcaster], message: str | bytes
) -> None:
    host, _ = served
    async with connect(f"ws://{host}/v1/links/stud/ws?screen=scr-test-0002") as ws:
        await recv(ws)
        await ws.send(message)
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(10):
                while True:
                    await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_a_message_above_4_kib_still_closes_1009(served: tuple[str, Broadcaster]) -> None:
    host, _ = served
    async with connect(f"ws://{host}/v1/links/stud/ws") as ws:
        await recv(ws)
        shown = {"type": "shown", "seq": 1, "values": [], "wins": ["x" * 120] * 40}
        await ws.send(json.dumps(shown))
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(10):
                while True:
                    await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
