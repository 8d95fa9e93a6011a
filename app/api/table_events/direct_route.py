"""The table events' direct route: from the ASGI call straight to their handlers.

Bets, outcomes and voids are nearly all of the server's traffic. `FastPathApp` matches
`POST /v1/tables/{table}/rounds/{round}/{kind}` before FastAPI's own stack (its
exception middleware, router scan, dependency solver: docs/performance.md) and runs it
through the app's edge middleware (`Edge`: request context, body limit, standby gate) and
Starlette's 500 answer, as FastAPI would; `TableEvents` then calls the very handlers the
FastAPI routes call (handlers.py), answering their errors with the very exception
handlers the app registered (app/api/problems.py). So the answers are the routes' by
construction, and the OpenAPI description is the routes'. Everything else, any other
method on these paths included (405), goes on through FastAPI unchanged. FastAPI's
native OpenTelemetry spans (off unless a tracer is configured) do not cover table events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from fastapi import FastAPI
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.table_events.handlers import EventHandler, TableEvent

KINDS = ("bets", "outcome", "void")
# Starlette's `{name}` path parameter is `[^/]+`: the same paths as the routes match.
PATH = re.compile(r"/v1/tables/([^/]+)/rounds/([^/]+)/(bets|outcome|void)")

Handler = Callable[[Request, Exception], Any]


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


def install(app: FastPathApp, events: Mapping[str, EventHandler], edge: Edge) -> TableEvents:
    """The app's edge middleware (outermost first) on every route, and the table events'
    direct route inside the same edge, inside Starlette's 500 answer (as FastAPI's stack:
    its handler for 500 or Exception, if the app has one). Returns the table events."""
    for cls, options in reversed(edge):  # the last added is the outermost
        app.add_middleware(cls, **options)  # type: ignore[arg-type]
    # The app's exception handlers, filled by app/api/problems.py before: read per error.
    table_events = TableEvents(events=events, handlers=app.exception_handlers)
    routed: ASGIApp = table_events
    for cls, options in reversed(edge):
        routed = cls(routed, **options)
    app.table_events = ServerErrorMiddleware(
        routed, handler=server_error_handler(app.exception_handlers), debug=app.debug
    )
    return table_events


def authorization(scope: Scope) -> str | None:
    """The Authorization header, as Starlette's `request.headers.get` reads it (the
    server gives the names in lower case: the first one named so)."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return str(value.decode("latin-1"))
    return None


async def read_body(receive: Receive) -> bytes:
    """The request's body whole, as Starlette's `request.body()` reads it: the
    `http.request` messages' bodies joined; a disconnect before the last raises
    ClientDisconnect."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            if not message.get("more_body", False):
                if not chunks:
                    return chunk  # type: ignore[no-any-return]
                chunks.append(chunk)
                return b"".join(chunks)
            if chunk:
                chunks.append(chunk)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def server_error_handler(handlers: Mapping[Any, Handler]) -> Handler | None:
    """The app's own answer to a failure nobody foresaw, as Starlette looks it up."""
    return handlers.get(500) or handlers.get(Exception)


class TableEvents:
    """The handler of a table event, its errors answered by the app's handlers."""

    def __init__(
        self, *, events: Mapping[str, EventHandler], handlers: Mapping[Any, Handler]
    ) -> None:
        if sorted(events) != sorted(KINDS):
            raise ValueError(f"the table events' handlers are {sorted(events)}, not {KINDS}")
        self.events = events
        # The app's exception handlers, the same mapping FastAPI's exception middleware
        # reads (filled by app/api/problems.py before the first request).
        self.handlers = handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = PATH.fullmatch(scope["path"])
        assert match is not None  # FastPathApp sends only these
        event = TableEvent(authorization(scope), match[1], match[2], partial(read_body, receive))
        try:
            response = await self.events[match[3]](event)
        except Exception as error:
            handler = self._handler(error)
            if handler is None:
                raise  # as FastAPI: the server-error middleware answers 500 and logs it
            response = await handler(Request(scope, receive), error)
            # Answered. Its traceback holds the frames it went through, the writer's
            # future among them, which holds the error: a cycle that a freeze of the
            # writer's state would keep (GroupCommitter._apply drops the writer's side).
            error.__traceback__ = None
        await response(scope, receive, send)

    def _handler(self, error: Exception) -> Handler | None:
        """The handler of the error's nearest class, as Starlette looks it up."""
        for cls in type(error).__mro__:
            if cls in self.handlers:
                return self.handlers[cls]
        return None
