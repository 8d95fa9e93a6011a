"""The interactive API documentation loads Swagger UI and ReDoc from a public CDN: off
unless JACKPOT_API_DOCS=1 (the demo); the OpenAPI document itself is always served."""

from __future__ import annotations

import httpx
import pytest

from app.compose import display_app
from app.config.floor_file import load_floor
from app.config.settings import Settings
from tests.integration.app.support import build_server
from tests.support import DEMO

pytestmark = pytest.mark.integration


async def statuses(api_docs: bool, display: bool = False) -> dict[str, int]:
    app = (
        display_app(
            Settings(api_docs=api_docs, redis_url="redis://unused:6379/0"), load_floor(DEMO)
        )
        if display
        else build_server(api_docs=api_docs).app
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return {p: (await client.get(p)).status_code for p in ("/docs", "/redoc", "/openapi.json")}


async def test_no_cdn_pages_by_default() -> None:
    assert await statuses(False) == {"/docs": 404, "/redoc": 404, "/openapi.json": 200}
    found = await statuses(False, display=True)
    assert (found["/docs"], found["/redoc"]) == (404, 404)


async def test_the_demo_turns_them_on() -> None:
    assert await statuses(True) == {
        "/docs": 200, "/redoc": 200, "/openapi.json": 200
    }  # fmt: skip
