"""`jackpot serve`'s uvicorn configuration (app/cli/serving.py) against hostile clients: a real
uvicorn server in this process, raw sockets and real websocket clients."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.cli.serving import MAX_HEAD_BYTES, WS_MAX_SIZE, uvicorn_config
from app.config.settings import Settings
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.link_routes import display_router

QUIET = 3600.0
READ_TIMEOUT_S = 0.5


@contextlib.asynccontextmanager
async def serve(**settings: object) -> AsyncIterator[tuple[int, Broadcaster]]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=1, ping_s=QUIET)
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    await broadcaster.start()
    app = FastAPI()
    app.include_router(display_router(broadcaster))

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    values = {"port": 0, "request_read_timeout_s": READ_TIMEOUT_S, **settings}
    config = uvicorn_config(app, Settings(**values), log_level="warning")  # type: ignore[arg-type]
    config.timeout_graceful_shutdown = 2  # a request left hanging must not hang the test
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield port, broadcaster
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task


async def read_until_closed(reader: asyncio.StreamReader, seconds: float = 5.0) -> bytes:
    """Everything the server sends until it closes; fails if it keeps the connection."""
    async with asyncio.timeout(seconds):
        return await reader.read()


async def test_a_connection_that_sends_nothing_is_closed_after_the_read_timeout() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await read_until_closed(reader)
        assert answer.startswith(b"HTTP/1.1 408 ")
        writer.close()


async def test_a_request_head_sent_a_byte_at_a_time_is_cut_off() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        # Read as it comes: a write after the server closed would lose what it sent.
        answer = asyncio.create_task(drain(reader))
        head = b"GET /v1/links/stud HTTP/1.1\r\nhost: x\r\n" + b"x-slow: " + b"a" * 200
        sent = 0
        with contextlib.suppress(ConnectionError):
            for byte in head:  # 4 bytes/s: the whole head would take a minute
                if answer.done():
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                sent += 1
                await asyncio.sleep(0.25)
        async with asyncio.timeout(5):
            assert (await answer).startswith(b"HTTP/1.1 408 ")
        assert sent < 20
        writer.close()


async def drain(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    with contextlib.suppress(ConnectionError):
        while chunk := await reader.read(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def test_a_body_sent_slowly_is_cut_off_and_a_whole_one_is_answered() -> None:
    async with serve() as (port, _):
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            assert (await http.post("/echo", content=b"x" * 1000)).json() == {"bytes": 1000}
            # head and a 60 KB body in one write: the head bound is on the head alone
            assert (await http.post("/echo", content=b"x" * 60_000)).json() == {"bytes": 60_000}
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\nabc")
        await writer.drain()
        answer = await read_until_closed(reader)
        assert not answer.startswith(b"HTTP/1.1 200")
        writer.close()


async def test_an_idle_keep_alive_connection_is_closed() -> None:
    async with serve(keep_alive_s=1) as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /v1/links/stud HTTP/1.1\r\nhost: x\r\n\r\n")
        await writer.drain()
        answer = await read_until_closed(reader, seconds=5.0)
        assert answer.startswith(b"HTTP/1.1 200 ")
        writer.close()


async def test_an_oversized_request_head_gets_431() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * MAX_HEAD_BYTES + b"\r\n")
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        answer = await read_until_closed(reader)
        assert answer.startswith(b"HTTP/1.1 431 ")
        writer.close()


async def test_a_display_websocket_outlives_the_read_timeout() -> None:
    async with (
        serve() as (port, broadcaster),
        connect(f"ws://127.0.0.1:{port}/v1/links/stud/ws", compression=None) as ws,
    ):
        await ws.recv()  # the snapshot
        await asyncio.sleep(READ_TIMEOUT_S * 3)
        broadcaster.meters("stud", {"major": "10.00"})
        async with asyncio.timeout(5):
            assert '"meters"' in str(await ws.recv())


async def test_a_display_that_sends_a_big_message_is_closed_1009() -> None:
    # Displays send nothing: uvicorn's default would buffer up to 16 MiB per message.
    async with (
        serve() as (port, _),
        connect(f"ws://127.0.0.1:{port}/v1/links/stud/ws", compression=None) as ws,
    ):
        await ws.recv()
        await ws.send("x" * (WS_MAX_SIZE + 1))
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(5):
                while True:
                    await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


@pytest.mark.parametrize(
    ("link", "headers", "status"),
    [("x" * 10_000, {}, 414), ("stud", {"x-long": "a" * 9_000}, 431)],
)
async def test_a_handshake_line_too_long_for_the_websockets_library_gets_an_answer(
    link: str, headers: dict[str, str], status: int
) -> None:
    # Without it: a traceback in the server's log, and the client waits for ever.
    async with serve() as (port, _):
        with pytest.raises(InvalidStatus) as refused:
            async with asyncio.timeout(5):
                await connect(
                    f"ws://127.0.0.1:{port}/v1/links/{link}/ws", additional_headers=headers
                )
        assert refused.value.response.status_code == status


async def test_beyond_max_connections_websockets_and_requests_get_503() -> None:
    async with serve(max_connections=16) as (port, _):
        url = f"ws://127.0.0.1:{port}/v1/links/stud/ws"
        held = []
        try:
            for _ in range(15):
                ws = await connect(url, compression=None)
                await ws.recv()
                held.append(ws)
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, compression=None)
            assert refused.value.response.status_code == 503
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                assert (await http.get("/v1/links/stud")).status_code == 503
            await held.pop().close()
            await asyncio.sleep(0.1)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                assert (await http.get("/v1/links/stud")).status_code == 200
        finally:
            for ws in held:
                await ws.close()
