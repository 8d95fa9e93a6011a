"""The HTTP answer's head and body in one write (app/cli/serving.py `HeadWithBody`), under
the API it serves: what the client receives is unchanged, in one send instead of two."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

from app.cli.serving import GuardedHttpProtocol, HeadWithBody, ServingConfig


class Recorder:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n"


def held(recorder: Recorder) -> HeadWithBody:
    return HeadWithBody(recorder)  # type: ignore[arg-type]


def test_a_head_with_its_length_goes_out_with_the_body() -> None:
    recorder = Recorder()
    transport = held(recorder)
    transport.write(HEAD)
    assert recorder.writes == []
    transport.write(b"{}")
    assert recorder.writes == [HEAD + b"{}"]


def test_a_chunked_head_and_a_100_continue_go_out_at_once() -> None:
    recorder = Recorder()
    transport = held(recorder)
    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    transport.write(chunked)
    transport.write(b"2\r\n{}\r\n")
    assert recorder.writes == [b"HTTP/1.1 100 Continue\r\n\r\n", chunked, b"2\r\n{}\r\n"]


def test_a_head_without_body_goes_out_on_flush_or_close() -> None:
    recorder = Recorder()
    transport = held(recorder)
    transport.write(HEAD)
    transport.flush()
    assert recorder.writes == [HEAD]
    other = Recorder()
    transport = held(other)
    transport.write(HEAD)
    transport.close()
    assert other.writes == [HEAD] and other.closed
    assert transport.is_closing()  # the rest is the transport's own


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b'{"ok":true}'
    headers = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def test_served_answers_are_whole_for_get_head_and_keep_alive() -> None:
    async def main() -> list[bytes]:
        config = ServingConfig(
            app, port=0, http=GuardedHttpProtocol, lifespan="off", log_level="warning"
        )
        server = uvicorn.Server(config)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            task = asyncio.create_task(server.serve(sockets=[s]))
            while not server.started:
                await asyncio.sleep(0.01)
            port = s.getsockname()[1]
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answers = []
            for method in (b"GET", b"HEAD", b"GET"):  # one keep-alive connection
                writer.write(method + b" / HTTP/1.1\r\nhost: x\r\n\r\n")
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                body = b"" if method == b"HEAD" else await reader.readexactly(11)
                answers.append(head.split(b"\r\n")[0] + b" " + body)
            writer.close()
            server.should_exit = True
            await task
        return answers

    assert asyncio.run(main()) == [
        b'HTTP/1.1 200 OK {"ok":true}',
        b"HTTP/1.1 200 OK ",
        b'HTTP/1.1 200 OK {"ok":true}',
    ]
