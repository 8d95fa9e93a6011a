"""The table events' direct route: from the ASGI call straight to their endpoints.

Bets, outcomes and voids are nearly all of the server's traffic (each round of each
table posts one of each kind). Through FastAPI's routing each passed the exception
middleware, the router's scan of every route, `APIRoute.handle`, the request-response
wrapper and the dependency solver: as many py-spy samples as the endpoint itself under
`bench/bench_http.py`'s load (7.0 % and 7.5 %); without them the server's CPU per bets
request fell by a quarter (docs/operations.md). `FastPathApp` matches
`POST /v1/tables/{table}/rounds/{round}/{kind}` before FastAPI's own stack too (its
telemetry checks, about 15 µs of a bets request's API side, issue 21) and runs it
through the app's edge middleware (request context, body limit: `edge`) and Starlette's
500 answer, as FastAPI would; `TableEvents` then calls the very endpoint functions the
FastAPI routes hold, answering their errors with the very exception handlers the app
registered (app/api/problems.py). So the answers are the routes' answers by
construction, and the OpenAPI description is the routes'. Everything else, any other
method on these paths included (405), goes on through FastAPI unchanged. FastAPI's
native OpenTelemetry spans (off unless a tracer is configured) do not cover table events.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

KINDS = ("bets", "outcome", "void")
# Starlette's `{name}` path parameter is `[^/]+`: the same paths as the routes match.
PATH = re.compile(r"/v1/tables/([^/]+)/rounds/([^/]+)/(bets|outcome|void)")

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Any]


def table_endpoints(api: APIRouter) -> dict[str, Endpoint]:
    """The endpoint of each table event, taken from the router's own POST routes."""
    posts = {
        route.path: route.endpoint
        for route in api.routes
        if isinstance(route, APIRoute) and "POST" in (route.methods or ())
    }
    paths = {kind: f"/v1/tables/{{table}}/rounds/{{round}}/{kind}" for kind in KINDS}
    missing = [kind for kind, path in paths.items() if path not in posts]
    if missing:
        raise ValueError(f"the router has no POST route for the table events {missing}")
    return {kind: posts[path] for kind, path in paths.items()}


class FastPathApp(FastAPI):
    """FastAPI, with the table events taken before its own middleware stack."""

    table_events: ASGIApp | None = None  # set by `install`

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A root_path (a proxy's prefix) is left to the router, which knows its rules.
        if (
            self.table_events is not None
            and scope["type"] == "http"
            and scope["method"] == "POST"
            and not scope.get("root_path")
            and not self.root_path
            and PATH.fullmatch(scope["path"]) is not None
        ):
            scope["app"] = self
            await self.table_events(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


Edge = list[tuple[type[Any], dict[str, Any]]]


def install(app: FastPathApp, api: APIRouter, edge: Edge) -> None:
    """The app's edge middleware (outermost first) on every route, and the table events'
    direct route inside the same edge, inside Starlette's 500 answer (as FastAPI's stack:
    its handler for 500 or Exception, if the app has one)."""
    for cls, options in reversed(edge):  # the last added is the outermost
        app.add_middleware(cls, **options)  # type: ignore[arg-type]
    handlers = app.exception_handlers  # filled by app/api/problems.py before: read per error
    events: ASGIApp = TableEvents(endpoints=table_endpoints(api), handlers=handlers)
    for cls, options in reversed(edge):
        events = cls(events, **options)
    error = handlers.get(500) or handlers.get(Exception)
    app.table_events = ServerErrorMiddleware(events, handler=error, debug=app.debug)


class TableEvents:
    """The endpoint of a table event, its errors answered by the app's handlers."""

    def __init__(
        self, *, endpoints: Mapping[str, Endpoint], handlers: Mapping[Any, Handler]
    ) -> None:
        self.endpoints = endpoints
        # The app's exception handlers, the same mapping FastAPI's exception middleware
        # reads (filled by app/api/problems.py before the first request).
        self.handlers = handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = PATH.fullmatch(scope["path"])
        assert match is not None  # FastPathApp sends only these
        scope["path_params"] = {"table": match[1], "round": match[2]}
        request = Request(scope, receive)
        try:
            response = await self.endpoints[match[3]](request)
        except Exception as error:
            handler = self._handler(error)
            if handler is None:
                raise  # as FastAPI: the server-error middleware answers 500 and logs it
            response = await handler(request, error)
        await response(scope, receive, send)

    def _handler(self, error: Exception) -> Handler | None:
        """The handler of the error's nearest class, as Starlette looks it up."""
        for cls in type(error).__mro__:
            if cls in self.handlers:
                return self.handlers[cls]
        return None
