"""Display endpoints: the link's websocket, its JSON state and the display page.

Routes, tokens and close codes: docs/api.md "Displays". Serving thousands of displays
from one process (`uvicorn_config`, app/cli/serving.py): docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import secrets
from collections.abc import Callable
from pathlib import Path

import orjson
from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.websockets import WebSocketDisconnect, WebSocketState

from app.display.broadcaster import Broadcaster, Subscription
from app.display.frames import SINK
from app.display.screen_watch import wall_ms
from app.display.screens import Screens, read_shown, screen_name

STATIC = Path(__file__).resolve().parent / "static"
PROBLEM = "application/problem+json"
CLOSE_TIMEOUT_S = 2.0
MAX_CLOSE_REASON = 123
SUBPROTOCOL = "jackpot"
TOKEN_SUBPROTOCOL = "jackpot.token."


def display_router(
    broadcaster: Broadcaster, *, display_token: str | None = None, screens: Screens | None = None
) -> APIRouter:
    """The display endpoints over one Broadcaster (writer or display role); `screens`
    keeps what each page acknowledges it shows."""
    router = APIRouter(tags=["displays"])

    @router.get("/v1/links/{link}", response_model=None)
    async def get_link(request: Request, link: str) -> Response:
        if display_token is not None and not _token_ok(request, display_token):
            return _token_required()
        state = broadcaster.link_state(link)
        if state is None:
            return _unknown_link(link)
        return JSONResponse(state)

    @router.websocket("/v1/links/{link}/ws")
    async def link_ws(websocket: WebSocket, link: str) -> None:
        await _serve_link(websocket, link, broadcaster, display_token, screens)

    @router.get("/display/{link}", response_model=None)
    async def display_page(link: str) -> Response:
        if broadcaster.link_state(link) is None:
            return _unknown_link(link)
        return HTMLResponse((STATIC / "display.html").read_text(), headers=_NO_CACHE)

    @router.get("/static/display.js", include_in_schema=False)
    async def display_js() -> FileResponse:
        return FileResponse(STATIC / "display.js", media_type="text/javascript", headers=_NO_CACHE)

    @router.get("/static/in_play.js", include_in_schema=False)
    async def in_play_js() -> FileResponse:
        return FileResponse(STATIC / "in_play.js", media_type="text/javascript", headers=_NO_CACHE)

    @router.get("/static/display.css", include_in_schema=False)
    async def display_css() -> FileResponse:
        return FileResponse(STATIC / "display.css", media_type="text/css", headers=_NO_CACHE)

    # The pages' icon, and the address browsers ask for it by default: a wall of signs
    # and every console would log a 404 a page load without it.
    @router.get("/static/favicon.svg", include_in_schema=False)
    @router.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    return router


async def _serve_link(
    websocket: WebSocket,
    link: str,
    broadcaster: Broadcaster,
    display_token: str | None,
    screens: Screens | None,
) -> None:
    """A display's websocket: the token, the link's messages, and its `shown` acks."""
    # Accept first, then close with our code: a close before accepting reaches
    # the browser as a bare HTTP 403 and the page could not tell why.
    await websocket.accept(subprotocol=_subprotocol(websocket))
    if display_token is not None and not _token_ok(websocket, display_token):
        await websocket.close(4401, "display token required")
        return
    try:
        subscription = broadcaster.subscribe(link)
    except KeyError:
        await websocket.close(4404, close_reason(f"unknown link {link!r}"))
        return
    sink = websocket.scope.get("extensions", {}).get(SINK)
    if sink is not None:  # served by DisplayWebSocketProtocol: no queue, no task wake-ups
        subscription.attach(sink)
    if screens is None:
        await _serve(websocket, subscription)
        return
    query = websocket.query_params
    screen = screens.connect(
        query.get("screen"),
        link,
        screen_name(query.get("name")),
        _address(websocket),
        wall_ms(),
    )
    try:
        await _serve(websocket, subscription, lambda text: _ack(screens, screen, text))
    finally:
        screens.disconnect(screen)


# Screens stay up for weeks: have them revalidate so a new page reaches them on reload.
_NO_CACHE = {"Cache-Control": "no-cache"}


OnText = Callable[[str | None], bool]


def _ack(screens: Screens, screen: str, text: str | None) -> bool:
    """A page's message: a `shown` (docs/api.md "Displays"), or the socket is closed."""
    try:
        message = orjson.loads(text) if text is not None else None
    except orjson.JSONDecodeError:
        message = None
    return screens.ack(screen, read_shown(message), wall_ms())


def _address(websocket: WebSocket) -> str:
    """The screen's address: the proxy's X-Forwarded-For (nginx sets it), else the peer."""
    forwarded = websocket.headers.get("x-forwarded-for", "").split(",")[0].strip()
    peer = websocket.client.host if websocket.client else ""
    return (forwarded or peer)[:64]


async def _serve(
    websocket: WebSocket, subscription: Subscription, on_text: OnText | None = None
) -> None:
    """Send the subscription's messages until the client leaves or falls behind."""
    sender = asyncio.create_task(_send_all(websocket, subscription))
    # A send stuck on a full socket must not hold the connection: cancel it.
    subscription.on_slow(sender.cancel)
    receiver = asyncio.create_task(_wait_disconnect(websocket, on_text))
    try:
        await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        subscription.close()
        for task in (sender, receiver):
            task.cancel()
        await asyncio.gather(sender, receiver, return_exceptions=True)
    if websocket.application_state != WebSocketState.CONNECTED:
        return
    if receiver.done() and not receiver.cancelled() and receiver.exception() is None:
        return  # the client closed: nothing more to say
    code, reason = (1013, "too slow: reconnect") if subscription.slow else (1012, "restarting")
    # The socket may be full (a display that stopped reading): give up after a while,
    # and the server drops the connection when it can.
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CLOSE_TIMEOUT_S):
            await websocket.close(code, reason)


async def _send_all(websocket: WebSocket, subscription: Subscription) -> None:
    with contextlib.suppress(WebSocketDisconnect, OSError, RuntimeError):
        async for text in subscription:
            await websocket.send_text(text)


async def _wait_disconnect(websocket: WebSocket, on_text: OnText | None = None) -> None:
    # Displays send only `shown` acks (any other message closes the socket, 1008);
    # reading also sees the client's close frame.
    while (message := await websocket.receive())["type"] != "websocket.disconnect":
        if on_text is not None and not on_text(message.get("text")):
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await websocket.close(1008, "a display sends only shown messages")
            return


def close_reason(text: str) -> str:
    """At most 123 bytes of UTF-8 (RFC 6455 5.5: a control frame's payload is at most 125,
    two of them the code): a longer reason makes the close itself fail."""
    data = text.encode()
    if len(data) <= MAX_CLOSE_REASON:
        return text
    return data[: MAX_CLOSE_REASON - 3].decode(errors="ignore") + "..."


def _subprotocol(websocket: WebSocket) -> str | None:
    """A browser fails the connection unless the server picks one of the subprotocols it
    offered: `jackpot` if offered, else the token's own (a client that sent only that)."""
    offered = websocket.scope.get("subprotocols") or []
    if SUBPROTOCOL in offered:
        return SUBPROTOCOL
    return next((p for p in offered if p.startswith(TOKEN_SUBPROTOCOL)), None)


def _token_ok(connection: Request | WebSocket, token: str) -> bool:
    given = _given_token(connection)
    return given is not None and secrets.compare_digest(given.encode(), token.encode())


def _given_token(connection: Request | WebSocket) -> str | None:
    for offered in connection.scope.get("subprotocols") or ():
        if offered.startswith(TOKEN_SUBPROTOCOL):
            encoded = offered[len(TOKEN_SUBPROTOCOL) :]
            try:
                return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
            except (binascii.Error, ValueError):
                return None
    scheme, _, credentials = connection.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip(" \t")  # SP and HTAB only, as app/api/auth.py
    return connection.query_params.get("token")


def _token_required() -> JSONResponse:
    problem = {
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": "display token missing or wrong",
    }
    return JSONResponse(
        problem, status_code=401, media_type=PROBLEM, headers={"WWW-Authenticate": "Bearer"}
    )


def _unknown_link(link: str) -> JSONResponse:
    problem = {
        "type": "about:blank",
        "title": "Not Found",
        "status": 404,
        "detail": f"unknown link {link!r}",
    }
    return JSONResponse(problem, status_code=404, media_type=PROBLEM)
