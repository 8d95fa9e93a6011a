"""The display page answers back, in a real headless Chromium against a real server: it
acknowledges what it draws (`shown`), keeps its screen id across reloads, takes its name
from `#screen=`, and a page that stops answering turns stale (docs/api.md "Signs").
Screenshots: artifacts/display-acks-*.png."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from playwright.async_api import Page, expect

from app.api import problems
from app.api.auth import floor_tokens
from app.api.screen_routes import screen_router
from app.config.floor_file import load_floor
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.link_routes import display_router
from app.display.screen_watch import ScreenWatch
from app.display.screens import Screens
from tests.e2e.conftest import ARTIFACTS, CHROMIUM
from tests.e2e.test_display_page import browser_page
from tests.support import DEMO, OPERATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium"),
]
AMOUNT = '[data-meter="major"]'


@dataclass
class Floor:
    broadcaster: Broadcaster
    base: str

    async def screens(self) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=self.base, headers=OPERATOR) as client:
            rows: list[dict[str, Any]] = (await client.get("/v1/screens")).json()["screens"]
            return rows

    async def until(self, **expected: Any) -> dict[str, Any]:
        """The first screen once it has every expected field (within 20 s)."""
        rows: list[dict[str, Any]] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(20):
                while True:
                    rows = await self.screens()
                    if rows and all(rows[0].get(k) == v for k, v in expected.items()):
                        return rows[0]
                    await asyncio.sleep(0.1)
        raise AssertionError(f"no screen with {expected}: {rows}")


@pytest.fixture
async def floor() -> AsyncIterator[Floor]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=20, ping_s=1.0)
    broadcaster.configure_link("stud", "SGD", [("major", "Major"), ("minor", "Minor")])
    watch = ScreenWatch(Screens(broadcaster.link_state), broadcaster)
    await broadcaster.start()
    await watch.start()
    broadcaster.meters("stud", {"major": "10000.00", "minor": "2456.80"})
    app = FastAPI()
    problems.install(app)
    app.include_router(display_router(broadcaster, screens=watch.screens))
    app.include_router(screen_router(watch, floor_tokens(load_floor(DEMO))))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield Floor(broadcaster, f"http://127.0.0.1:{port}")
    await watch.stop()
    await broadcaster.stop()
    server.should_exit = True
    await task


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with browser_page(1280, 720) as opened:
        yield opened


def final_win(award: str) -> dict[str, object]:
    return {
        "state": "final", "award_id": award, "table": "T01", "round": "R1", "box": 3,
        "meter": "major", "hand": "royal_flush", "dealt_at": "2026-11-22T18:00:09.410Z",
        "amount": "10000.00",
    }  # fmt: skip


async def test_the_page_acknowledges_what_it_draws(floor: Floor, page: Page) -> None:
    await page.goto(floor.base + "/display/stud#screen=bar-left")
    await expect(page.locator(AMOUNT)).to_have_text("10,000.00", timeout=10_000)
    row = await floor.until(name="bar-left", seq_behind=0)
    assert (row["link"], row["connected"], row["variance"], row["flags"]) == (
        "stud", True, "0.00", [],
    )  # fmt: skip
    assert {v["meter"]: v["value"] for v in row["values"]} == {
        "major": "10000.00", "minor": "2456.80",
    }  # fmt: skip
    screen = row["screen"]

    # A change drawn: acknowledged at its seq, with its value.
    floor.broadcaster.meters("stud", {"major": "10234.50"})
    await expect(page.locator(AMOUNT)).to_have_text("10,234.50", timeout=10_000)
    row = await floor.until(seq_behind=0, variance="0.00")
    assert {v["meter"]: v["value"] for v in row["values"]}["major"] == "10234.50"

    # A final win: celebrated, then listed among what the screen has shown.
    floor.broadcaster.win("stud", final_win("T01/R1/3/player"))
    await expect(page.locator("#celebration")).to_be_visible(timeout=10_000)
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "display-acks-win.png"))
    async with asyncio.timeout(10):
        while True:
            async with httpx.AsyncClient(base_url=floor.base, headers=OPERATOR) as client:
                report = (await client.get("/v1/reports/signs")).json()["screens"][0]
            if report["wins"] and report["wins"][0]["delay_ms"] is not None:
                break
            await asyncio.sleep(0.1)
    assert report["wins"][0]["award"] == "T01/R1/3/player"
    assert 0 <= report["wins"][0]["delay_ms"] < 5_000

    # The same browser keeps its screen id across a reload.
    await page.reload()
    await expect(page.locator(AMOUNT)).to_have_text("10,234.50", timeout=10_000)
    rows = await floor.screens()
    assert [r["screen"] for r in rows] == [screen]


async def test_a_page_that_stops_answering_turns_stale(floor: Floor, page: Page) -> None:
    await page.goto(floor.base + "/display/stud#screen=door")
    await expect(page.locator(AMOUNT)).to_have_text("10,000.00", timeout=10_000)
    await floor.until(name="door", stale=False)
    # Frozen as far as the server can tell: the page still draws but sends nothing.
    await page.evaluate("WebSocket.prototype.send = function () {}")
    await asyncio.sleep(15.5)
    row = await floor.until(name="door", stale=True)
    assert "stale" in row["flags"] and row["connected"]
    await page.screenshot(path=str(ARTIFACTS / "display-acks-stale.png"))
