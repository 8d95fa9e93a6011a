"""A standby writer's answer to everything but displays, /health and /metrics: 503.

Another writer process holds the lease (app/writer/follower.py): this one records
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
        await self.app(scope, receive, send)
