"""The table events' direct route: from the ASGI call straight to their endpoints.

Bets, outcomes and voids are nearly all of the server's traffic (each round of each
table posts one of each kind). Through FastAPI's routing each passed the exception
middleware, the router's scan of every route, `APIRoute.handle`, the request-response
wrapper and the dependency solver: as many py-spy samples as the endpoint itself under
`bench/bench_http.py`'s load (7.0 % and 7.5 %); without them the server's CPU per bets
request fell by a quarter (docs/operations.md). This middleware, the innermost of the
app's own, matches `POST /v1/tables/{table}/rounds/{round}/{kind}`
itself and calls the very endpoint functions the FastAPI routes hold, answering their
errors with the very exception handlers the app registered (app/api/problems.py). So the
answers are the routes' answers by construction, and the OpenAPI description is the
routes'. Everything else, any other method on these paths included (405), goes on
through FastAPI unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from fastapi import APIRouter
from fastapi.routing import APIRoute
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


class TableEventRoute:
    def __init__(
        self,
        app: ASGIApp,
        *,
        endpoints: Mapping[str, Endpoint],
        handlers: Mapping[Any, Handler],
    ) -> None:
        self.app = app
        self.endpoints = endpoints
        # The app's exception handlers, the same mapping FastAPI's exception middleware
        # reads (filled by app/api/problems.py before the first request).
        self.handlers = handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A root_path (a proxy's prefix) is left to the router, which knows its rules.
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            match = PATH.fullmatch(scope["path"])
            if match is not None:
                await self._event(match, scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _event(
        self, match: re.Match[str], scope: Scope, receive: Receive, send: Send
    ) -> None:
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
