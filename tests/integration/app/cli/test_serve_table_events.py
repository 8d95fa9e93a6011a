"""Table events over real sockets: a uvicorn server in this process with `jackpot
serve`'s configuration (app/cli/serving.py), the whole app on the demo floor (in-memory
journal). Every table event of the shared script gets its status and headers; then the
HTTP/1.1 edges: pipelining, `Connection: close`, HTTP/1.0, a body arriving after its
head, `Expect: 100-continue`, a chunked or oversized body, a standby writer, a failure
nobody foresaw.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn

from app.cli.serving import uvicorn_config
from app.compose import WriterProcess
from app.config.settings import Settings
from app.ops.logs import ContextFilter
from app.state.timefmt import format_time
from app.writer.writer import Writer
from tests.integration.app.support import TABLE_EVENT_STATUSES, build_server, table_event_script

START = 1_800_000_000_000
BETS = {"closed_at": format_time(START), "boxes": [{"box": 1, "ante": "1.00", "jackpot": "1.00"}]}
AUTH = b"authorization: Bearer demo-table-T02\r\n"


@contextlib.asynccontextmanager
async def served(clock: list[int]) -> AsyncIterator[tuple[int, WriterProcess]]:
    process = build_server(clock=lambda: clock[0], outcome_wait_s=0.05)
    config = uvicorn_config(process.app, Settings(port=0), log_level="warning")
    config.timeout_graceful_shutdown = 2
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1], process
    finally:
        server.should_exit = True
        await task


async def answers() -> list[tuple[int, list[tuple[str, str]], Any]]:
    got = []
    async with (
        served(clock := [START]) as (port, _),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
    ):
        for i, (method, path, headers, body) in enumerate(
            table_event_script(lambda ms: format_time(START + ms))
        ):
            clock[0] += 1_000
            content = body if isinstance(body, bytes) else None
            json_body = None if body is None or content is not None else body
            headers = {**headers, "X-Request-Id": f"req-{i}"}
            r = await client.request(method, path, headers=headers, json=json_body, content=content)
            where = f"http://127.0.0.1:{port}"  # the servers' ports differ: a redirect's
            shown = sorted((k, v.replace(where, "")) for k, v in r.headers.items() if k != "date")
            got.append((r.status_code, shown, r.json() if r.content else None))
    return got


async def test_every_table_event_is_answered_over_a_socket() -> None:
    got = await answers()
    assert [status for status, _, _ in got] == TABLE_EVENT_STATUSES
    # The request id is echoed, and the table's answers keep their media types.
    assert ("x-request-id", "req-0") in got[0][1]
    assert ("content-type", "application/json") in got[0][1]
    assert ("content-type", "application/problem+json") in got[3][1]
    # Every answer declares its length (its head goes out with its body: HeadWithBody).
    assert all(("transfer-encoding", "chunked") not in headers for _, headers, _ in got)


def bets_request(round_id: str, *extra: bytes, body: bytes | None = None) -> bytes:
    body = json.dumps(BETS).encode() if body is None else body
    return (
        f"POST /v1/tables/T02/rounds/{round_id}/bets HTTP/1.1\r\nhost: x\r\n".encode()
        + AUTH
        + b"content-type: application/json\r\n"
        + f"content-length: {len(body)}\r\n".encode()
        + b"".join(extra)
        + b"\r\n"
        + body
    )


async def read_answers(reader: asyncio.StreamReader, n: int) -> list[tuple[bytes, bytes]]:
    """`n` answers read off a connection: each one's head and body."""
    out = []
    async with asyncio.timeout(10):
        for _ in range(n):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            out.append((head, await reader.readexactly(length)))
    return out


async def test_pipelined_table_events_are_answered_in_order() -> None:
    async with served([START]) as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(bets_request("P1") + bets_request("P2") + bets_request("P3"))
        got = await read_answers(reader, 3)
        writer.close()
    assert [json.loads(body)["round"] for _, body in got] == ["P1", "P2", "P3"]
    assert all(head.startswith(b"HTTP/1.1 200 OK\r\n") for head, _ in got)


async def test_connection_close_and_http_1_0_get_their_answer_then_the_connection_closes() -> None:
    async with served([START]) as (port, _):
        for request in (
            bets_request("C1", b"connection: close\r\n"),
            bets_request("C2").replace(b"HTTP/1.1", b"HTTP/1.0", 1),
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            async with asyncio.timeout(10):
                answer = await reader.read()  # to the end: the server closes
            writer.close()
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK\r\n")
            assert b"\r\nconnection: close" in head
            assert json.loads(body)["round"] in ("C1", "C2")


async def test_a_body_that_comes_after_its_head_is_waited_for() -> None:
    async with served([START]) as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = bets_request("S1")
        head, body = request[: request.index(b"\r\n\r\n") + 4], request[len(request) - 40 :]
        writer.write(request[: len(request) - 40])
        await writer.drain()
        await asyncio.sleep(0.2)
        assert head and not reader.at_eof()  # no answer yet: the body is waited for
        writer.write(body)
        [(answer, payload)] = await read_answers(reader, 1)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ") and json.loads(payload)["round"] == "S1"


async def test_continue_chunked_oversized_and_standby_are_answered() -> None:
    body = json.dumps(BETS).encode()
    async with served([START]) as (port, process):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        # Expect: 100-continue: the ASGI path sends the 100 when the body is read.
        writer.write(bets_request("E1", b"expect: 100-continue\r\n", body=b""))
        async with asyncio.timeout(10):
            assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(body)  # the body, declared above as empty, is not part of it
        writer.close()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            path = "/v1/tables/T02/rounds/{}/bets"
            auth = {"Authorization": "Bearer demo-table-T02"}

            async def chunks() -> AsyncIterator[bytes]:
                yield body

            chunked = await client.post(path.format("K1"), content=chunks(), headers=auth)
            assert chunked.status_code == 200 and chunked.json()["round"] == "K1"
            big = await client.post(path.format("B1"), content=b" " * 70_000, headers=auth)
            assert big.status_code == 413
            assert big.headers["content-type"] == "application/problem+json"
            process.writer.stand_by()
            standby = await client.post(path.format("W1"), json=BETS, headers=auth)
            process.writer.lead()
            assert standby.status_code == 503 and standby.headers["retry-after"] == "1"
            assert standby.json()["title"] == "Not the leading writer"


async def test_an_unforeseen_failure_is_a_500_logged_and_counted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("nobody foresaw this")

    monkeypatch.setattr(Writer, "submit_json", broken)
    auth = {"Authorization": "Bearer demo-table-T02", "X-Request-Id": "boom-1"}
    caplog.handler.addFilter(ContextFilter())  # as `jackpot serve`'s handler has
    with caplog.at_level(logging.ERROR):
        async with (
            served([START]) as (port, _),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
        ):
            r = await client.post("/v1/tables/T02/rounds/X1/bets", json=BETS, headers=auth)
            # The connection stays usable, as after Starlette's 500.
            again = await client.post("/v1/tables/T02/rounds/X2/bets", json=BETS, headers=auth)
            metrics = (await client.get("/metrics")).text
    assert (r.status_code, r.headers["content-type"], r.text) == (
        500,
        "text/plain; charset=utf-8",
        "Internal Server Error",
    )
    assert again.status_code == 500
    assert 'jackpot_http_responses_total{code="500"} 2.0' in metrics
    failures = [rec for rec in caplog.records if "nobody foresaw" in (rec.exc_text or "")]
    assert [getattr(rec, "request_id", None) for rec in failures] == ["boom-1", "boom-1"]
