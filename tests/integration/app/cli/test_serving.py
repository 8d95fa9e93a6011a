"""`jackpot serve`'s uvicorn configuration (app/cli/serving.py) against hostile clients: a real
uvicorn server in this process, raw sockets and real websocket clients."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import psutil  # type: ignore[import-untyped]
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

    @app.get("/wait")
    async def wait(seconds: float) -> dict[str, float]:
        await asyncio.sleep(seconds)  # a long poll: the answer is the app's time
        return {"waited": seconds}

    @app.api_route("/hello", methods=["GET", "HEAD"])
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

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


# Pipelining and keep-alive: each request of a connection gets the head bound and the read
# deadline, not only the first (docs/operations.md, "Limits").

HELLO = b"GET /hello HTTP/1.1\r\nhost: x\r\n\r\n"
LONG_POLL = b"GET /wait?seconds=30 HTTP/1.1\r\nhost: x\r\n\r\n"
MiB = 1024 * 1024


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


async def flood(writer: asyncio.StreamWriter, total: int) -> int:
    """A header that never ends, `total` bytes of it; what was sent before the server closed."""
    sent = 0
    chunk = b"a" * MiB
    with contextlib.suppress(ConnectionError):
        writer.write(b"GET /hello HTTP/1.1\r\nhost: x\r\nx-flood: ")
        while sent < total:
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
    return sent


async def test_a_header_flood_pipelined_behind_a_long_poll_is_cut_off_with_memory_flat() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = asyncio.create_task(drain(reader))
        before = rss()
        writer.write(LONG_POLL)  # in progress for 30 s: the flood comes in behind it
        sent = await asyncio.wait_for(flood(writer, 64 * MiB), 10)
        async with asyncio.timeout(READ_TIMEOUT_S * 4):
            got = await answer
        # Nothing may be answered before the long poll's answer: the connection is just closed.
        assert got == b""
        assert sent < 64 * MiB
        assert rss() - before < 32 * MiB  # generous: the server kept at most a read or two
        writer.close()


async def test_a_header_flood_on_a_keep_alive_connection_gets_431() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(HELLO)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200 ")
        await reader.readexactly(17)  # {"hello":"world"}
        answer = asyncio.create_task(drain(reader))
        sent = await asyncio.wait_for(flood(writer, 64 * MiB), 10)
        async with asyncio.timeout(5):
            assert (await answer).startswith(b"HTTP/1.1 431 ")
        assert sent < 64 * MiB
        writer.close()


async def trickle(writer: asyncio.StreamWriter, answer: asyncio.Task[bytes]) -> int:
    """A request head a byte every 0.1 s (it would take half a minute); the bytes sent."""
    sent = 0
    with contextlib.suppress(ConnectionError):
        for byte in b"GET /hello HTTP/1.1\r\nhost: x\r\nx-slow: " + b"a" * 300:
            if answer.done():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            sent += 1
            await asyncio.sleep(0.1)
    return sent


async def test_a_slow_second_request_on_a_keep_alive_connection_gets_408() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(HELLO)
        await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        await reader.readexactly(17)
        answer = asyncio.create_task(drain(reader))
        sent = await trickle(writer, answer)
        async with asyncio.timeout(5):
            assert (await answer).startswith(b"HTTP/1.1 408 ")
        assert sent < READ_TIMEOUT_S / 0.1 * 3
        writer.close()


async def test_a_slow_request_pipelined_behind_a_long_poll_is_closed_at_the_deadline() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = asyncio.create_task(drain(reader))
        writer.write(LONG_POLL)
        await writer.drain()
        sent = await trickle(writer, answer)
        async with asyncio.timeout(5):
            assert await answer == b""  # nothing answered ahead of the long poll's answer
        assert sent < READ_TIMEOUT_S / 0.1 * 3
        writer.close()


async def test_pipelined_heads_and_a_get_are_all_answered_in_order() -> None:
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = b"HEAD /hello HTTP/1.1\r\nhost: x\r\n\r\n"
        writer.write(head + head + HELLO)
        await writer.drain()
        answers = []
        async with asyncio.timeout(5):
            for method in (b"HEAD", b"HEAD", b"GET"):
                lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
                assert b"content-length: 17" in lines
                body = b"" if method == b"HEAD" else await reader.readexactly(17)
                answers.append(lines[0] + b" " + body)
        assert answers == [
            b"HTTP/1.1 200 OK ",
            b"HTTP/1.1 200 OK ",
            b'HTTP/1.1 200 OK {"hello":"world"}',
        ]
        writer.close()


async def test_a_request_waiting_its_turn_behind_a_long_poll_is_not_timed_out() -> None:
    # uvicorn reads nothing more of a pipelined request until the answers before it are out:
    # the wait is the server's, so the read deadline does not run out on the client.
    async with serve() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        poll = f"GET /wait?seconds={READ_TIMEOUT_S * 4} HTTP/1.1\r\nhost: x\r\n\r\n".encode()
        body = b"x" * MiB
        post = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body)
        writer.write(poll + post + body)
        await writer.drain()
        answers = []
        async with asyncio.timeout(10):
            for _ in range(2):
                lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
                length = next(
                    int(line[16:]) for line in lines if line.startswith(b"content-length")
                )
                answers.append(lines[0] + b" " + await reader.readexactly(length))
        assert answers == [
            b'HTTP/1.1 200 OK {"waited":2.0}',
            b'HTTP/1.1 200 OK {"bytes":1048576}',
        ]
        writer.close()
