"""The operator console's page and its static files (plain HTML, CSS and JavaScript
modules, no build step). The page holds no data and needs no credential: its script signs
in with a name and a password (the session's HttpOnly cookie, docs/api.md "Sign-in and
sessions"), or with an operator's token kept in the tab's sessionStorage and sent as a
header (API calls) or a websocket subprotocol (`WS /v1/floor/ws`), never in an address."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

STATIC = Path(__file__).resolve().parent / "static"
MEDIA = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
FILES = {p.name: MEDIA[p.suffix] for p in STATIC.iterdir() if p.suffix in MEDIA}
# Only our own files run: no inline script, no other origin (a server string that slipped
# into the page as markup still could not run), no framing (a console is not embedded).
HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def console_router() -> APIRouter:
    router = APIRouter(tags=["console"], include_in_schema=False)

    @router.get("/console", response_model=None)
    async def console_page() -> Response:
        return HTMLResponse((STATIC / "console.html").read_text(), headers=HEADERS)

    @router.get("/console/static/{name}", response_model=None)
    async def console_file(name: str) -> Response:
        media = FILES.get(name)
        if media is None:  # only the files shipped beside the page, by name
            return Response(status_code=404)
        return FileResponse(STATIC / name, media_type=media, headers=HEADERS)

    return router
