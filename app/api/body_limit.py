"""The request body limit: a body above it is refused (413, problem+json), never read whole.

Starlette's own limiter answers a declared oversize in plain text, replacing the app's
answer; docs/api.md wants every error as problem+json. Here a Content-Length above the limit
is answered before the app runs, and a body without one (chunked) is counted as it
arrives: past the limit, reading it raises an HTTPException(413) that the app's handler
answers as it answers every error (app/api/problems.py).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem


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
