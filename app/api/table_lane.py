"""The table events' lane: `jackpot serve`'s HTTP protocol hands them straight to here.

A table event through ASGI passed, besides its handler: uvicorn's proxy-headers
middleware, Starlette's 500 answer, the request context, the body limit and the standby
gate (each a coroutine wrapping `send`), a Starlette Request, and uvicorn's generic
`send` of the answer's head and body; under `bench/bench_http.py`'s load, about 60 µs of
the ~290 µs of CPU a bets request cost (issue 21). The server's protocol
(app/cli/serving.py) asks `takes` of each request whose head is in: this lane takes a
table event whose answer is the handler's alone (its body whole and declared within the
limit, a leading writer, no prefix); the protocol reads the body and writes `serve`'s
answer in one write. Everything else goes through ASGI as before, and `serve` does what
that edge does for the requests it takes: the request context (id, table and round in
the logs, the id echoed), the responses counted, Starlette's 500 for a failure nobody
foresaw. The answers are the routes': the same handlers (app/api/table_routes.py) and
exception handlers (app/api/table_fastpath.py `TableEvents`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from app.api.requests import TableEvent
from app.api.table_fastpath import PATH, TableEvents, server_error_handler
from app.ops.logs import enter_request, leave_request, request_done
from app.ops.metrics import PrometheusMetrics
from app.writer.writer import Writer

log = logging.getLogger("uvicorn.error")  # where the ASGI path logs the same failure

Headers = Iterable[tuple[bytes, bytes]]
Event = re.Match[str]  # PATH's match: the table, the round, the kind


class TableLane:
    def __init__(
        self,
        events: TableEvents,
        writer: Writer,
        *,
        limit: int,
        metrics: PrometheusMetrics | None,
        access_log: bool,
    ) -> None:
        self.events = events
        self.writer = writer
        self.limit = limit  # the body limit (app/api/body_limit.py)
        # As the request context's (app/ops/logs.py): responses counted, the access log.
        self.metrics, self.access_log = metrics, access_log

    def takes(self, method: str, path: str, root_path: str, headers: Headers) -> Event | None:
        """The table event this lane answers (its path's table, round and kind): one
        with its body's length declared and within the limit, at a leading writer. Any
        other request (a chunked or oversized body, a standby's 503, a proxy's prefix)
        is the ASGI app's: None."""
        if method != "POST" or root_path or self.writer.standby:
            return None
        event = PATH.fullmatch(path)
        if event is None:
            return None
        length = None
        for name, value in headers:
            if name == b"content-length":
                length = int(value) if value.isdigit() else None
            elif name == b"transfer-encoding":
                return None
        return event if length is not None and length <= self.limit else None

    async def serve(self, event: Event, headers: Headers, body: bytes) -> Response:
        """The answer to a table event `takes` gave, its body read whole."""
        path = event.string
        started = time.perf_counter() if self.access_log else 0.0
        rid, context = enter_request(headers, path)
        authorization = None
        for name, value in headers:
            if name == b"authorization":
                authorization = value.decode("latin-1")
                break

        def request() -> Request:  # for an exception handler: it reads nothing of it
            scope = {"type": "http", "method": "POST", "path": path, "headers": list(headers)}
            return Request(scope)

        try:
            table_event = TableEvent(authorization, event[1], event[2], _ready(body))
            response = await self.events.answer(event[3], table_event, request)
        except Exception as error:
            # Starlette's 500 answer, and the line uvicorn logs for it on the ASGI path, in
            # the request's context.
            log.exception("Exception in ASGI application")
            handler = server_error_handler(self.events.handlers)
            if handler is None:
                response = PlainTextResponse("Internal Server Error", status_code=500)
            else:
                response = await handler(request(), error)
        response.raw_headers.append((b"x-request-id", rid.encode("latin-1")))
        request_done(self.metrics, self.access_log, "POST", path, response.status_code, started)
        leave_request(context)
        return response


def _ready(body: bytes) -> Callable[[], Awaitable[bytes]]:
    async def read() -> bytes:
        return body

    return read
