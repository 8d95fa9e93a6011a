"""A standby writer's answer to everything but displays, /health and /metrics: 503.

Another writer process holds the lease (app/writer/leadership.py): this one records
nothing and its state may lag the journal, so table events, operator changes and the
operators' reads of the writer's state are all refused with problem+json and
Retry-After, for the proxy (deploy/nginx.conf) or the client to send them to the leader.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.problems import problem
from app.writer.writer import Writer

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
