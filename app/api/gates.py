"""The gates a request passes before the app's routes (app/api/application.py stacks
them): the body limit and a standby's refusal, each answering with problem+json.

The body limit: a body above it is refused (413), never read whole. Starlette's own
limiter answers a declared oversize in plain text, replacing the app's answer; docs/api.md
wants every error as problem+json. Here a Content-Length above the limit is answered
before the app runs, and a body without one (chunked) is counted as it arrives: past the
limit, reading it raises an HTTPException(413) that the app's handler answers as it
answers every error (app/api/problems.py).

A standby writer answers everything but displays, /health and /metrics with 503: another
writer process holds the lease (app/writer/leadership.py), this one records nothing and
its state may lag the journal, so table events, operator changes and the operators' reads
of the writer's state are all refused with Retry-After, for the proxy (deploy/nginx.conf)
or the client to send them to the leader.
"""

from __future__ import annotations

import re

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem
from app.writer.writer import Writer


class BodyLimit:
    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope["headers"])
        if declared is not None and declared > self.limit:
            await problem(413, "Content Too Large", self._detail())(scope, receive, send)
            return
        if declared is not None:  # the server reads no more than it declares
            await self.app(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise HTTPException(413, self._detail())
            return message

        await self.app(scope, counted, send)

    def _detail(self) -> str:
        return f"the request body is over {self.limit:,} bytes"


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


# -- a standby's gate -----------------------------------------------------------------

# What a standby still serves: the displays' routes (they read the broadcaster).
DISPLAYS = re.compile(r"/v1/links/[^/]+(/ws)?")
FLOOR_WS = "/v1/floor/ws"  # the console's live floor (app/api/floor_routes.py)


class StandbyGate:
    def __init__(self, app: ASGIApp, *, writer: Writer) -> None:
        self.app = app
        self.writer = writer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.writer.standby
            and scope["type"] == "http"
            and scope["path"].startswith("/v1/")
            and not DISPLAYS.fullmatch(scope["path"])
        ):
            response = problem(
                503,
                "Not the leading writer",
                "this writer is a standby: another one leads; retry (through the proxy)",
                headers={"Retry-After": "1"},
            )
            await response(scope, receive, send)
            return
        if self.writer.standby and scope["type"] == "websocket" and scope["path"] == FLOOR_WS:
            await refuse_websocket(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def refuse_websocket(scope: Scope, receive: Receive, send: Send) -> None:
    """The console's live floor is the writer's state: a standby refuses the handshake
    with an HTTP 503 (the ASGI denial response, which uvicorn offers), so the proxy passes
    it on to the leader and the console reconnects; without that extension, a close."""
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        body = b'{"title":"Not the leading writer","status":503}'
        await send(
            {
                "type": "websocket.http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", b"1"),
                ],
            }
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1013})  # try again later
