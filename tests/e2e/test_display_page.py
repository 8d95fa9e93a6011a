"""The display page in a real headless Chromium against a real server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.async_api import Page, async_playwright, expect

from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.link_routes import display_router
from tests.e2e.support import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="no /usr/bin/chromium: install it with `apt-get install -y chromium`",
    ),
]
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
AMOUNT = '[data-meter="major"]'


@dataclass
class Floor:
    broadcaster: Broadcaster
    server: uvicorn.Server
    task: asyncio.Task[None]
    base: str

    async def stop_server(self) -> None:
        self.server.should_exit = True
        await self.task


@pytest.fixture
async def floor() -> AsyncIterator[Floor]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=20, ping_s=2.0)
    broadcaster.configure_link(
        "stud", "SGD", [("major", "Major"), ("minor", "Minor"), ("mini", "Mini")]
    )
    await broadcaster.start()
    broadcaster.meters("stud", {"major": "10000.00", "minor": "2456.80", "mini": "512.35"})
    broadcaster.win(
        "stud", {**win("A0", box=5, table="T07"), "state": "final", "amount": "1230.55"}
    )
    app = FastAPI()
    app.include_router(display_router(broadcaster))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield Floor(broadcaster, server, task, f"http://127.0.0.1:{port}")
    await broadcaster.stop()
    if not task.done():
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def browser_page(width: int = 1920, height: int = 1080) -> AsyncIterator[Page]:
    """A page of headless Chromium at this viewport (every display test's browser)."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = await browser.new_context(viewport={"width": width, "height": height})
        try:
            yield await context.new_page()
        finally:
            with contextlib.suppress(Exception):
                await context.close()
            await browser.close()


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with browser_page() as opened:
        yield opened


def win(award: str, *, box: int = 3, table: str = "T01") -> dict[str, object]:
    return {
        "state": "pending",
        "award_id": award,
        "table": table,
        "round": "R1001",
        "box": box,
        "meter": "major",
        "hand": "royal_flush",
        "dealt_at": "2026-11-22T18:00:09.410Z",
    }


async def shows(page: Page, selector: str, text: str) -> None:
    await expect(page.locator(selector)).to_have_text(text, timeout=10_000)


async def test_meters_tick_up_then_a_win_is_pending_then_celebrated(
    floor: Floor, page: Page
) -> None:
    p = page
    await p.goto(floor.base + "/display/stud")
    await shows(p, AMOUNT, "10,000.00")
    await shows(p, '[data-meter-card="major"] .currency', "SGD")
    await expect(p.locator("#banner-down")).to_be_hidden()
    ARTIFACTS.mkdir(exist_ok=True)
    await p.screenshot(path=str(ARTIFACTS / "display.png"))

    # Record every value painted while the meter counts up to its new value.
    painted = p.evaluate(
        """(selector) => new Promise((done) => {
            const el = document.querySelector(selector), seen = [];
            const start = performance.now();
            const step = () => {
                if (seen[seen.length - 1] !== el.textContent) seen.push(el.textContent);
                if (performance.now() - start < 2500) requestAnimationFrame(step);
                else done(seen);
            };
            requestAnimationFrame(step);
        })""",
        AMOUNT,
    )
    recording = asyncio.ensure_future(painted)
    await asyncio.sleep(0.2)
    floor.broadcaster.meters("stud", {"major": "10234.50"})
    seen = await recording
    assert seen[0] == "10,000.00" and seen[-1] == "10,234.50"
    assert len(seen) > 5, f"the value jumped instead of counting up: {seen}"
    assert seen == sorted(seen, key=lambda s: int(s.replace(",", "").replace(".", "")))

    floor.broadcaster.win("stud", win("A1"))
    await expect(p.locator("#pending")).to_be_visible()
    await shows(p, "#pending .pending-title", "JACKPOT PENDING")
    await expect(p.locator("#pending-detail")).to_contain_text("TABLE T01 · BOX 3")
    await p.screenshot(path=str(ARTIFACTS / "display-pending.png"))

    floor.broadcaster.win("stud", {**win("A1"), "state": "final", "amount": "10234.50"})
    floor.broadcaster.meters("stud", {"major": "10000.00"})
    await expect(p.locator("#celebration")).to_be_visible()
    await expect(p.locator("#pending")).to_be_hidden()
    await shows(p, "#celebration-amount", "SGD 10,234.50")
    await shows(p, "#celebration-where", "TABLE T01 · BOX 3")
    await shows(p, "#celebration-hand", "royal flush")
    await asyncio.sleep(0.8)  # let the entrance animation finish before the picture
    await p.screenshot(path=str(ARTIFACTS / "display-win.png"))
    await shows(p, AMOUNT, "10,000.00")  # the reset jumps down, no counting


async def test_link_down_when_degraded_and_when_the_server_stops(floor: Floor, page: Page) -> None:
    p = page
    banner = p.locator("#banner-down")
    await p.goto(floor.base + "/display/stud")
    await shows(p, AMOUNT, "10,000.00")
    await expect(banner).to_be_hidden()

    floor.broadcaster.status("stud", "degraded", "jackpot server cannot record events")
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("LINK DOWN")
    await expect(banner).to_contain_text("cannot record events")
    floor.broadcaster.status("stud", "ok")
    await expect(banner).to_be_hidden()

    await floor.stop_server()
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("LINK DOWN")
    await p.screenshot(path=str(ARTIFACTS / "display-down.png"))


async def test_link_down_after_twelve_silent_seconds_then_reconnects(
    floor: Floor, page: Page
) -> None:
    p = page
    await p.clock.install()
    await p.goto(floor.base + "/display/stud")
    await shows(p, AMOUNT, "10,000.00")
    banner = p.locator("#banner-down")
    await expect(banner).to_be_hidden()
    # Remember whether the banner ever shows: the page reconnects right after.
    await p.evaluate(
        """() => new MutationObserver(() => {
            if (!document.getElementById("banner-down").hidden) window.bannerShown = true;
        }).observe(document.getElementById("banner-down"), {attributes: true})"""
    )
    # The socket stays open but, on the page's clock, nothing comes for 14 s.
    await p.clock.run_for(14_000)
    await p.wait_for_function("() => window.bannerShown === true", timeout=10_000)
    await expect(banner).to_be_hidden(timeout=10_000)  # a fresh snapshot came
    floor.broadcaster.meters("stud", {"major": "10001.00"})
    await shows(p, AMOUNT, "10,001.00")


@pytest.mark.parametrize("where", ["#token=", "?token="])
async def test_the_page_sends_the_display_token_in_no_url(page: Page, where: str) -> None:
    # The token rides in Sec-WebSocket-Protocol, a header no log line holds;
    # an older screen's ?token= is moved into the fragment, so a reload does not send it.
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=20, ping_s=2.0)
    broadcaster.configure_link("stud", "SGD", [("major", "Major")])
    await broadcaster.start()
    broadcaster.meters("stud", {"major": "10000.00"})
    inner = FastAPI()
    inner.include_router(display_router(broadcaster, display_token="s3 cret/é"))
    sockets: list[dict[str, object]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            sockets.append(scope)
        await inner(scope, receive, send)

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    try:
        await page.goto(f"{base}/display/stud{where}s3%20cret%2F%C3%A9")
        await shows(page, AMOUNT, "10,000.00")  # the token was accepted
        assert page.url.startswith(f"{base}/display/stud#token=s3")
        # The address holds the screen's id and name only (docs/api.md "Signs").
        queries = [parse_qs(cast(bytes, s["query_string"]).decode()) for s in sockets]
        assert queries and all(set(q) == {"screen"} for q in queries)
        assert all(s["subprotocols"][0] == "jackpot" for s in sockets)  # type: ignore[index]
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task


async def test_a_voided_pending_win_leaves_the_jackpot_pending_list(
    floor: Floor, page: Page
) -> None:
    """docs/design.md "The watermark": "jackpot pending" while an award is pending; a void of
    its box cancels it (paid to nobody): off the list, and never celebrated."""
    p = page
    await p.goto(floor.base + "/display/stud")
    await shows(p, AMOUNT, "10,000.00")
    floor.broadcaster.win("stud", win("A1"))
    floor.broadcaster.win("stud", win("A2", box=6, table="T02"))
    await shows(p, "#pending-detail", "2 wins being verified")
    floor.broadcaster.win("stud", {**win("A1"), "state": "void"})
    await expect(p.locator("#pending-detail")).to_contain_text("TABLE T02 · BOX 6")
    await expect(p.locator("#pending")).to_have_attribute("data-count", "1")
    floor.broadcaster.win("stud", {**win("A2", box=6, table="T02"), "state": "void"})
    await expect(p.locator("#pending")).to_be_hidden()
    await expect(p.locator("#celebration")).to_be_hidden()
    await expect(p.locator("#recent-list li")).to_have_count(1)  # the fixture's final win only
