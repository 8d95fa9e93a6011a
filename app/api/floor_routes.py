"""The operators' live floor (the console's source) and a meter's history for its chart.

- `GET /v1/floor` (operator): every link and level with its value, pending awards, stale
  rounds, each table's last event, each level's last 25 hits, open proposals, and `you`
  (`name`, `role`): the console signs in with it.
- `WS /v1/floor/ws` (operator): the same view, first at once, then whenever it changes
  (at most twice a second, however many consoles), and a `ping` every 5 s. The token is
  the subprotocol `jackpot.token.<base64url, unpadded>` offered beside `jackpot` (as the
  displays'), or `Authorization: Bearer`; never in the address. Close 4401: no valid
  operator token.
- `GET /v1/links/{link}/meters/{meter}/history?from&to` (operator): the chart's points.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, WebSocket
from fastapi.responses import JSONResponse
from starlette.websockets import WebSocketDisconnect

from app.api.auth import Principal, Tokens
from app.api.problems import AuthError
from app.api.reading import Auth, TableId, time_range
from app.audit.history import HistoryQuery, history_aside
from app.state.live_views import TableActivity, floor_view
from app.writer.writer import Writer

SUBPROTOCOL = "jackpot"
TOKEN_SUBPROTOCOL = "jackpot.token."
TICK_S = 0.5  # the view is rebuilt at most this often, once for every console
PING_S = 5.0


class FloorFeed:
    """One view of the floor shared by every console: rebuilt each tick while a console
    listens, sent only when it changed; a slow console skips to the latest."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.activity = TableActivity()
        self.version = 0
        self.text = b""
        self.listeners = 0
        self.changed = asyncio.Event()  # set, and replaced, at each new version
        self.task: asyncio.Task[None] | None = None
        self._last = b""

    def view(self) -> dict[str, Any]:
        writer = self.writer
        return floor_view(
            writer.service,
            self.activity,
            writer.clock(),
            degraded=writer.degraded,
            journal=writer.durable_head(),
            last_heard=writer.last_heard,
        )

    def refresh(self) -> None:
        view = self.view()
        now = view.pop("now")
        unchanged = orjson.dumps(view)
        if unchanged != self._last:
            self._last = unchanged
            self.text = orjson.dumps({"type": "floor", "now": now, **view})
            self.wake()

    async def run(self) -> None:
        while self.listeners:
            if self.writer.standby:
                self.wake()  # the consoles close: this floor is no longer the leader's
            else:
                self.refresh()
            await asyncio.sleep(TICK_S)
        self.task = None

    def wake(self) -> None:
        self.version += 1
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()

    def listen(self) -> None:
        self.listeners += 1
        self.refresh()
        if self.task is None:
            self.task = asyncio.create_task(self.run(), name="jackpot-floor-feed")

    async def next(self, seen: int) -> tuple[int, bytes]:
        """The latest view once it is newer than `seen`, or the same after PING_S."""
        if self.version == seen:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), PING_S)
        return self.version, self.text


def floor_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    feed = FloorFeed(writer)

    def you(principal: Principal) -> dict[str, str]:
        return {"name": principal.name, "role": principal.kind}

    @api.get("/v1/floor", tags=["operators"])
    async def get_floor(authorization: Auth = None) -> JSONResponse:
        principal = tokens.role(authorization, "operator")
        return JSONResponse({"you": you(principal), **feed.view()})

    @api.websocket("/v1/floor/ws")
    async def floor_ws(websocket: WebSocket) -> None:
        # Accept, then close with our code: a refusal before accepting reaches a browser
        # as a bare failure, and the console could not say "sign in again".
        await websocket.accept(subprotocol=_subprotocol(websocket))
        try:
            principal = tokens.role(_bearer(websocket), "operator")
        except AuthError as error:
            await websocket.close(4401, error.detail[:120])
            return
        feed.listen()
        try:
            await websocket.send_text(
                orjson.dumps({"type": "hello", "you": you(principal)}).decode()
            )
            await _serve(websocket, feed)
        finally:
            feed.listeners -= 1

    @api.get("/v1/links/{link}/meters/{meter}/history", tags=["operators"])
    async def get_history(
        link: TableId,
        meter: TableId,
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
    ) -> JSONResponse:
        """The meter's final value after each entry recorded in [from, to) that changed
        it, with awards, resets, corrections and seed changes marked."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        floor = writer.service.floor
        floor.meter_index(floor.link(link), meter)  # 404 for an unknown link or meter
        head, _ = writer.durable_head()
        config = writer.service.config
        return JSONResponse(
            await history_aside(writer.journal, config, HistoryQuery(link, meter, start, end, head))
        )


async def _serve(websocket: WebSocket, feed: FloorFeed) -> None:
    async def send() -> None:
        seen = -1
        while True:
            version, text = await feed.next(seen)
            if feed.writer.standby:
                # Another writer leads (docs/api.md "The console's routes"): reconnect,
                # through the proxy, to it.
                await websocket.close(1012, "this writer stood down: reconnect")
                return
            if version == seen:
                await websocket.send_text('{"type":"ping"}')
            else:
                await websocket.send_text(text.decode())
                seen = version

    async def receive() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass  # a console sends nothing; reading sees its close

    tasks = {asyncio.create_task(send()), asyncio.create_task(receive())}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and isinstance(task.exception(), WebSocketDisconnect):
            return


def _subprotocol(websocket: WebSocket) -> str | None:
    """A browser fails the connection unless the server picks a subprotocol it offered."""
    offered = websocket.scope.get("subprotocols") or []
    if SUBPROTOCOL in offered:
        return SUBPROTOCOL
    return next((p for p in offered if p.startswith(TOKEN_SUBPROTOCOL)), None)


def _bearer(websocket: WebSocket) -> str | None:
    """The token as an `Authorization` value: from the subprotocol, else the header."""
    for offered in websocket.scope.get("subprotocols") or ():
        if offered.startswith(TOKEN_SUBPROTOCOL):
            encoded = offered[len(TOKEN_SUBPROTOCOL) :]
            try:
                token = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
            except (binascii.Error, ValueError):
                return None
            return f"Bearer {token}"
    return websocket.headers.get("authorization")
