"""The interactive API documentation loads Swagger UI and ReDoc from a public CDN: off
unless JACKPOT_API_DOCS=1 (the demo); the OpenAPI document itself is always served."""

from __future__ import annotations

import httpx
import pytest

from app.api.application import create_app, create_display_app
from app.config.floor_file import load_floor
from app.config.settings import Settings
from app.store.journal import MemoryJournal
from tests.support import DEMO

pytestmark = pytest.mark.integration


async def statuses(settings: Settings, display: bool = False) -> dict[str, int]:
    floor = load_floor(DEMO)
    app = (
        create_display_app(
            settings.model_copy(update={"redis_url": "redis://unused:6379/0"}), floor
        )
        if display
        else create_app(settings, floor, journal=MemoryJournal())
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return {p: (await client.get(p)).status_code for p in ("/docs", "/redoc", "/openapi.json")}


async def test_no_cdn_pages_by_default() -> None:
    assert await statuses(Settings()) == {"/docs": 404, "/redoc": 404, "/openapi.json": 200}
    found = await statuses(Settings(), display=True)
    assert (found["/docs"], found["/redoc"]) == (404, 404)


async def test_the_demo_turns_them_on() -> None:
    assert await statuses(Settings(api_docs=True)) == {
        "/docs": 200, "/redoc": 200, "/openapi.json": 200
    }  # fmt: skip
