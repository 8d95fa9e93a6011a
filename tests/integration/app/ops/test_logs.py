"""Structured logs: JSON lines or text, with the request id, table and round of the request."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from app.cli.serving import uvicorn_config
from app.config.settings import Settings
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.link_routes import display_router
from app.ops.logs import (
    JsonFormatter,
    RequestContextMiddleware,
    ScrubFilter,
    TextFormatter,
    configure,
)
from app.ops.metrics import PrometheusMetrics

log = logging.getLogger("jackpot.test")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """configure() replaces the root logger's handlers: put pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    uvicorn = {
        name: (list(logging.getLogger(name).handlers), logging.getLogger(name).propagate)
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
    }
    chatty = {
        name: logging.getLogger(name).level for name in ("pgserver", "alembic.runtime.plugins")
    }
    yield
    for name, saved_level in chatty.items():
        logging.getLogger(name).setLevel(saved_level)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name, (saved, propagate) in uvicorn.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = saved
        logger.propagate = propagate


def build(*, access_log: bool = False, metrics: PrometheusMetrics | None = None) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/tables/{table}/rounds/{round}/bets")
    async def bets(table: str, round: str) -> JSONResponse:
        log.info("bets received")
        return JSONResponse({"ok": True})

    @app.get("/v1/links/{link}")
    async def link(link: str) -> JSONResponse:
        log.warning("link read", extra={"link": link})
        return JSONResponse({"link": link})

    @app.get("/boom")
    async def boom() -> JSONResponse:
        raise RuntimeError("a bug")

    app.add_middleware(RequestContextMiddleware, access_log=access_log, metrics=metrics)
    return app


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=build(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.mark.usefixtures("restore_logging")
async def test_json_lines_carry_request_id_table_and_round(client: httpx.AsyncClient) -> None:
    stream = io.StringIO()
    configure(json=True, level="info", stream=stream)
    r = await client.post("/v1/tables/T01/rounds/R1001/bets", headers={"X-Request-Id": "till-7"})
    assert r.headers["x-request-id"] == "till-7"
    [line] = [x for x in lines(stream) if x["logger"] == "jackpot.test"]
    assert line["message"] == "bets received" and line["level"] == "info"
    assert (line["request_id"], line["table"], line["round"]) == ("till-7", "T01", "R1001")
    assert str(line["time"]).endswith("Z") and len(str(line["time"])) == 24


@pytest.mark.usefixtures("restore_logging")
async def test_a_request_id_is_made_when_none_or_a_bad_one_is_given(
    client: httpx.AsyncClient,
) -> None:
    stream = io.StringIO()
    configure(json=True, level="info", stream=stream)
    made = (await client.get("/v1/links/stud")).headers["x-request-id"]
    assert len(made) == 16 and int(made, 16) >= 0
    bad = await client.get("/v1/links/stud", headers={"X-Request-Id": "a b\tc" + "x" * 200})
    assert len(bad.headers["x-request-id"]) == 16 and bad.headers["x-request-id"] != made
    first, second = [x for x in lines(stream) if x["logger"] == "jackpot.test"]
    assert first["request_id"] == made and first["link"] == "stud"  # extra= fields too
    assert "table" not in first  # not a table's path


@pytest.mark.usefixtures("restore_logging")
async def test_the_context_ends_with_the_request(client: httpx.AsyncClient) -> None:
    stream = io.StringIO()
    configure(json=True, level="info", stream=stream)
    await client.post("/v1/tables/T01/rounds/R1/bets")
    log.info("between requests")
    last = lines(stream)[-1]
    assert last["message"] == "between requests"
    assert "request_id" not in last and "table" not in last


@pytest.mark.usefixtures("restore_logging")
async def test_text_lines_for_a_terminal(client: httpx.AsyncClient) -> None:
    stream = io.StringIO()
    configure(json=False, level="info", stream=stream)
    await client.post("/v1/tables/T02/rounds/R9/bets", headers={"X-Request-Id": "abc"})
    text = stream.getvalue()
    assert "INFO  jackpot.test  bets received  [T02/R9 req=abc]" in text


@pytest.mark.usefixtures("restore_logging")
async def test_no_access_log_unless_asked() -> None:
    for access_log, expected in ((False, 0), (True, 1)):
        stream = io.StringIO()
        configure(json=True, level="info", stream=stream)
        app = build(access_log=access_log)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test"
        ) as c:
            await c.post("/v1/tables/T01/rounds/R1/bets")
        access = [x for x in lines(stream) if x["logger"] == "jackpot.access"]
        assert len(access) == expected
    assert access[0]["status"] == 200 and access[0]["path"] == "/v1/tables/T01/rounds/R1/bets"
    assert access[0]["table"] == "T01"


async def test_answers_are_counted_by_status_errors_too() -> None:
    metrics = PrometheusMetrics(process=False)
    app = build(metrics=metrics)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        assert (await c.post("/v1/tables/T01/rounds/R1/bets")).status_code == 200
        assert (await c.get("/nowhere")).status_code == 404
        assert (await c.get("/boom")).status_code == 500
    assert metrics.responses == {200: 1, 404: 1, 500: 1}


TOKEN = "s3cret-display-token"


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize("json_lines", [True, False])
async def test_a_display_token_in_a_query_string_is_in_no_log_line(json_lines: bool) -> None:
    # Uvicorn logs `"WebSocket /v1/links/stud/ws?token=..." [accepted]`.
    stream = io.StringIO()
    configure(json=json_lines, level="info", stream=stream)
    broadcaster = Broadcaster(MemoryBackend(), ping_s=3600.0)
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    await broadcaster.start()
    app = FastAPI()
    app.include_router(display_router(broadcaster, display_token=TOKEN))
    app.add_middleware(RequestContextMiddleware, access_log=True)
    server = uvicorn.Server(uvicorn_config(app, Settings(port=0), log_level="info"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    base = f"127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        async with connect(f"ws://{base}/v1/links/stud/ws?token={TOKEN}") as ws:
            assert json.loads(await ws.recv())["type"] == "snapshot"
        async with httpx.AsyncClient(base_url=f"http://{base}") as http:
            assert (await http.get(f"/v1/links/stud?token={TOKEN}")).status_code == 200
            assert (await http.get(f"/v1/links/stud?x=1&token={TOKEN}x")).status_code == 401
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task
    text = stream.getvalue()
    assert "WebSocket /v1/links/stud/ws?token=[scrubbed]" in text  # the line is still there
    assert TOKEN not in text


SUBPROTOCOL = "jackpot.token." + base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("=")


@pytest.mark.usefixtures("restore_logging")
@pytest.mark.parametrize(
    ("json_lines", "level"), [(True, "debug"), (False, "debug"), (False, "trace")]
)
async def test_a_token_in_a_header_or_a_subprotocol_is_in_no_log_line_at_any_level(
    json_lines: bool, level: str
) -> None:
    """At debug the websockets library logs every handshake header (`< authorization:
    Bearer ...`, `< sec-websocket-protocol: jackpot, jackpot.token....`); at trace uvicorn
    logs each ASGI scope with its headers."""
    stream = io.StringIO()
    configure(json=json_lines, level=level, stream=stream)
    broadcaster = Broadcaster(MemoryBackend(), ping_s=3600.0)
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    await broadcaster.start()
    app = FastAPI()
    app.include_router(display_router(broadcaster, display_token=TOKEN))
    server = uvicorn.Server(uvicorn_config(app, Settings(port=0), log_level=level))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    base = f"127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    try:
        async with connect(f"ws://{base}/v1/links/stud/ws", additional_headers=bearer) as ws:
            assert json.loads(await ws.recv())["type"] == "snapshot"
        protocols = [Subprotocol("jackpot"), Subprotocol(SUBPROTOCOL)]
        async with connect(f"ws://{base}/v1/links/stud/ws", subprotocols=protocols) as ws:
            assert json.loads(await ws.recv())["type"] == "snapshot"
        async with httpx.AsyncClient(base_url=f"http://{base}") as http:
            assert (await http.get("/v1/links/stud", headers=bearer)).status_code == 200
            basic = {"Authorization": f"Basic {TOKEN}"}  # any scheme
            assert (await http.get("/v1/links/stud", headers=basic)).status_code == 401
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task
    text = stream.getvalue()
    assert "authorization" in text.lower() and "jackpot.token.[scrubbed]" in text  # still there
    assert TOKEN not in text and SUBPROTOCOL not in text
    assert SUBPROTOCOL.removeprefix("jackpot.token.") not in text


@pytest.mark.parametrize(
    "line",
    [
        "< authorization: Bearer {t}",
        "< Authorization: Basic {t}",
        "< authorization: {t}",
        "headers: [(b'authorization', b'Bearer {t}'), (b'host', b'x')]",
        "{{'authorization': 'Token {t}', 'host': 'x'}}",
        '{{"authorization": "Bearer {t}"}}',
        "< sec-websocket-protocol: jackpot, jackpot.token.{t}",
        "< sec-websocket-protocol: jackpot.token.{t}, jackpot",
        "GET /v1/links/stud/ws?token={t} HTTP/1.1",
        "the header was 'Bearer {t}'",
    ],
)
def test_the_scrub_filter_blanks_credentials_in_every_form(line: str) -> None:
    secret = "Zm9v.YmFy-_x+/="
    record = logging.makeLogRecord({"msg": "%s", "args": (line.format(t=secret),)})
    assert ScrubFilter().filter(record)
    assert secret not in record.getMessage() and "[scrubbed]" in record.getMessage()
    assert "host" not in line or "host" in record.getMessage()  # only the credential goes


def test_the_scrub_filter_blanks_a_token_in_a_traceback() -> None:
    try:
        raise ValueError(f"bad header: authorization: Bearer {TOKEN}")
    except ValueError:
        record = logging.makeLogRecord(
            {"msg": "handshake failed", "exc_info": sys.exc_info(), "levelno": logging.ERROR}
        )
    ScrubFilter().filter(record)
    for formatter in (JsonFormatter(), TextFormatter()):
        text = formatter.format(record)
        assert "ValueError" in text and TOKEN not in text, text
