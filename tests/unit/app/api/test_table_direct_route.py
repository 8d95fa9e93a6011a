"""The table events' direct route (app/api/table_events/direct_route.py), taken before FastAPI's own
stack: a failure nobody foresaw is answered as FastAPI answers it (Starlette's 500), and
the request context still sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from app.api.table_events.direct_route import FastPathApp, authorization, read_body
from app.api.table_events.handlers import JournaledAnswer
from app.state.timefmt import format_time
from app.writer.writer import Writer
from tests.integration.app.support import build_server

DEMO = Path(__file__).resolve().parents[4] / "app" / "demo" / "floor.toml"
START = 1_800_000_000_000


async def answer(direct: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str, str]:
    app = cast(FastPathApp, build_server(clock=lambda: START).app)
    if not direct:
        app.table_events = None  # through FastAPI's stack and router

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("nobody foresaw this")

    monkeypatch.setattr(Writer, "submit_json", broken)  # what the bets route calls
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    client = httpx.AsyncClient(transport=transport, base_url="http://test")
    async with app.router.lifespan_context(app), client:
        body = {"closed_at": format_time(START), "boxes": [{"box": 1, "ante": "1.00"}]}
        headers = {"Authorization": "Bearer demo-table-T01"}
        r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=headers)
        metrics = (await client.get("/metrics")).text
    counted = [line for line in metrics.splitlines() if 'responses_total{code="500"}' in line]
    return r.status_code, r.headers["content-type"], r.text, "".join(counted)


async def test_an_unforeseen_failure_is_answered_as_fastapi_answers_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    direct = await answer(True, monkeypatch)
    assert direct == await answer(False, monkeypatch)
    assert direct[:3] == (500, "text/plain; charset=utf-8", "Internal Server Error")
    assert direct[3].endswith(" 1.0")  # the request context counted it


def test_a_journaled_answer_has_the_headers_starlette_would_give_it() -> None:
    text = b'{"table":"T01","round":"R1","boxes":[]}'
    mine = JournaledAnswer(text)
    theirs = Response(text, media_type="application/json")
    assert (mine.status_code, mine.body, mine.raw_headers, mine.background) == (
        theirs.status_code,
        theirs.body,
        theirs.raw_headers,
        theirs.background,
    )
    assert mine.raw_headers == [(b"content-length", b"39"), (b"content-type", b"application/json")]


def receiving(*messages: dict[str, Any]) -> Any:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    return receive


@pytest.mark.parametrize(
    "messages",
    [
        [{"type": "http.request", "body": b'{"a":1}'}],
        [{"type": "http.request", "body": b""}],
        [{"type": "http.request"}],
        [
            {"type": "http.request", "body": b'{"a"', "more_body": True},
            {"type": "http.request", "body": b"", "more_body": True},
            {"type": "http.request", "body": b":1}"},
        ],
    ],
)
async def test_the_body_is_read_as_starlette_reads_it(messages: list[dict[str, Any]]) -> None:
    scope = {"type": "http", "headers": []}
    expected = await Request(scope, receiving(*messages)).body()
    assert await read_body(receiving(*messages)) == expected
    assert expected in (b'{"a":1}', b"")


async def test_a_disconnect_before_the_body_is_whole_is_starlettes_error() -> None:
    messages = (
        {"type": "http.request", "body": b"{", "more_body": True},
        {"type": "http.disconnect"},
    )
    with pytest.raises(ClientDisconnect):
        await Request({"type": "http", "headers": []}, receiving(*messages)).body()
    with pytest.raises(ClientDisconnect):
        await read_body(receiving(*messages))


@pytest.mark.parametrize(
    "headers",
    [
        [],
        [(b"authorization", b"Bearer x")],
        [(b"host", b"h"), (b"authorization", b"Bearer \xe9"), (b"authorization", b"Bearer y")],
    ],
)
def test_the_authorization_is_read_as_starlette_reads_it(
    headers: list[tuple[bytes, bytes]],
) -> None:
    scope = {"type": "http", "headers": headers}
    assert authorization(scope) == Request(scope).headers.get("authorization")
