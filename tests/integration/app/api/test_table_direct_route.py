"""The table events' direct route (app/api/table_events/direct_route.py) answers exactly
as FastAPI's routing.

The same requests, in the same order, at the same clock, go to two apps: one as served
(table events through the direct route) and one without it (through FastAPI's router).
Every answer must be the same: status, body and the headers a client reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.middleware.errors import ServerErrorMiddleware

from app.api.gates import BodyLimit, StandbyGate
from app.api.sessions import SessionGate
from app.api.table_events.direct_route import FastPathApp, TableEvents
from app.ops.logs import RequestContextMiddleware
from app.state.timefmt import format_time
from tests.integration.app.support import TABLE_EVENT_STATUSES, build_server, table_event_script
from tests.support import T02

START = 1_800_000_000_000
HEADERS = ("content-type", "www-authenticate", "retry-after", "allow", "location")


def app_at(clock: list[int], *, direct: bool) -> FastAPI:
    app = build_server(clock=lambda: clock[0], outcome_wait_s=0.05).app
    if not direct:
        cast(FastPathApp, app).table_events = None
    return app


@pytest.fixture
def routes_handled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths FastAPI's router handed to a route, in order."""
    handled: list[str] = []
    handle = APIRoute.handle

    async def counted(self: APIRoute, scope: Any, receive: Any, send: Any) -> None:
        handled.append(scope["raw_path"].decode())
        await handle(self, scope, receive, send)

    monkeypatch.setattr(APIRoute, "handle", counted)
    return handled


async def answers(app: FastAPI, clock: list[int]) -> list[tuple[int, dict[str, str], Any]]:
    got = []
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            for method, path, headers, body in table_event_script(
                lambda ms: format_time(START + ms)
            ):
                clock[0] += 1_000
                content = body if isinstance(body, bytes) else None
                json = None if body is None or content is not None else body
                r = await client.request(method, path, headers=headers, json=json, content=content)
                shown = {h: r.headers[h] for h in HEADERS if h in r.headers}
                got.append((r.status_code, shown, r.json() if r.content else None))
    return got


async def test_the_direct_route_answers_as_the_router(routes_handled: list[str]) -> None:
    direct = await answers(app_at(clock := [START], direct=True), clock)
    through_direct = list(routes_handled)
    routes_handled.clear()
    routed = await answers(app_at(clock := [START], direct=False), clock)
    assert direct == routed
    statuses = [status for status, _, _ in direct]
    assert statuses == TABLE_EVENT_STATUSES
    requests = [(method, path) for method, path, _, _ in table_event_script(str)]
    # Without the direct route FastAPI's router handed every request to a route but the
    # redirected one; with it, only the two that are not table events (GET, PUT).
    assert routes_handled == [path for method, path in requests if not path.endswith("/")]
    assert through_direct == [path for method, path in requests if method != "POST"]


def test_every_table_event_has_its_endpoint_inside_the_apps_edge() -> None:
    app = cast(FastPathApp, build_server().app)
    layers: list[object] = []
    layer: object = app.table_events
    while layer is not None:
        layers.append(layer)
        layer = getattr(layer, "app", None)
    edge: list[object] = [m.cls for m in app.user_middleware]  # outermost first
    # The console's sessions innermost, on FastAPI's stack only: a table event is never
    # authenticated by a cookie (app/api/sessions.py).
    assert edge == [RequestContextMiddleware, BodyLimit, StandbyGate, SessionGate]
    edge = edge[:-1]
    # As FastAPI's own stack: Starlette's 500 answer outermost, then the same edge.
    assert [type(x) for x in layers] == [ServerErrorMiddleware, *edge, TableEvents]
    route = layers[-1]
    assert isinstance(route, TableEvents)
    assert sorted(route.events) == ["bets", "outcome", "void"]
    assert route.handlers is app.exception_handlers


@pytest.fixture
async def served() -> AsyncIterator[FastAPI]:
    app = app_at([START], direct=True)
    async with app.router.lifespan_context(app):
        yield app


async def test_request_id_and_metrics_cover_the_direct_route(served: FastAPI) -> None:
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        body = {"closed_at": format_time(START), "boxes": [{"box": 1, "ante": "1.00"}]}
        r = await client.post(
            "/v1/tables/T02/rounds/R1/bets", json=body, headers={**T02, "X-Request-Id": "abc-1"}
        )
        assert r.status_code == 200 and r.headers["x-request-id"] == "abc-1"
        exposition = (await client.get("/metrics")).text
    assert 'jackpot_http_responses_total{code="200"} 1.0' in exposition
