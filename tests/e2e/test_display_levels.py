"""The display page with a five-level link in a real headless Chromium: every level's name
and value legible, the mystery level's "must hit by" and its commitment (shortened, the
full value on the page), and the reveal when it hits (docs/api.md, Displays)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.async_api import Page, expect

from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.link_routes import display_router
from tests.e2e.test_display_page import ARTIFACTS, CHROMIUM, browser_page, shows

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium"),
]
LEVELS = [("grand", "Grand"), ("major", "Major"), ("minor", "Minor"), ("mini", "Mini"),
          ("mystery", "Mystery")]  # fmt: skip
VALUES = {"grand": "250000.00", "major": "10000.00", "minor": "2456.80", "mini": "512.35",
          "mystery": "473.05"}  # fmt: skip
SHOWN = ["250,000.00", "10,000.00", "2,456.80", "512.35", "473.05"]
NONCE = "5f2d8c0e9a7b4c1d3e6f708192a3b4c5"
TRIGGER = "473.12"
COMMITMENT = hashlib.sha256(f"{TRIGGER}|{NONCE}".encode()).hexdigest()
NEXT = hashlib.sha256(f"61.20|{'0' * 32}".encode()).hexdigest()


def level(commitment: str) -> dict[str, dict[str, object]]:
    return {
        "mystery": {"must_hit_from": "50.00", "must_hit_by": "500.00", "commitment": commitment}
    }


@pytest.fixture
async def served() -> AsyncIterator[tuple[Broadcaster, str]]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=20, ping_s=2.0)
    broadcaster.configure_link("tiers", "SGD", LEVELS)
    await broadcaster.start()
    broadcaster.meters("tiers", VALUES)
    broadcaster.levels("tiers", level(COMMITMENT))
    app = FastAPI()
    app.include_router(display_router(broadcaster))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield broadcaster, f"http://127.0.0.1:{port}"
    await broadcaster.stop()
    server.should_exit = True
    await task


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    async with browser_page() as opened:
        yield opened


async def test_five_levels_laid_out_with_the_mystery_level_and_its_reveal(
    served: tuple[Broadcaster, str], page: Page
) -> None:
    broadcaster, base = served
    p = page
    await p.goto(base + "/display/tiers")
    for (meter, name), shown in zip(LEVELS, SHOWN, strict=True):
        await shows(p, f'[data-meter="{meter}"]', shown)
        await shows(p, f'[data-meter-card="{meter}"] .meter-name', name)
    # Legible: every card on screen, none over another, every value at least 40 px high
    # and within its card.
    boxes = []
    for meter, _ in LEVELS:
        card = await p.locator(f'[data-meter-card="{meter}"]').bounding_box()
        value = await p.locator(f'[data-meter="{meter}"]').bounding_box()
        assert card is not None and value is not None
        assert value["height"] >= 40, meter
        assert card["x"] <= value["x"] and value["x"] + value["width"] <= card["x"] + card["width"]
        assert card["y"] >= 0 and card["y"] + card["height"] <= 1080
        boxes.append(card)
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a["y"] + a["height"] <= b["y"] + 1 or a["x"] + a["width"] <= b["x"] + 1
    # The mystery level: its "must hit by" and its commitment, shortened, the whole on the page.
    mystery = '[data-meter-card="mystery"]'
    await shows(p, f"{mystery} .must-hit", "must hit by SGD 500.00")
    commitment = p.locator(f"{mystery} .commitment")
    await expect(commitment).to_have_text(f"commitment {COMMITMENT[:8]}…{COMMITMENT[-4:]}")
    await expect(commitment).to_have_attribute("title", COMMITMENT)
    await expect(commitment).to_have_attribute("data-commitment", COMMITMENT)
    await expect(p.locator('[data-meter-card="major"] .meter-level')).to_be_hidden()
    ARTIFACTS.mkdir(exist_ok=True)
    await p.screenshot(path=str(ARTIFACTS / "display-levels.png"))
    assert TRIGGER not in await p.content()  # the trigger is nowhere before the hit

    reveal = {"commitment": COMMITMENT, "trigger": TRIGGER, "nonce": NONCE,
              "must_hit_from": "50.00", "must_hit_by": "500.00"}  # fmt: skip
    hit = {"state": "final", "award_id": "T01/R9/3/must_hit_by:mystery", "table": "T01",
           "round": "R9", "box": 3, "meter": "mystery", "hand": "must_hit_by",
           "amount": "473.15", "dealt_at": "2026-11-22T18:00:09.410Z"}  # fmt: skip
    broadcaster.win("tiers", {**hit, "reveal": reveal})
    broadcaster.meters("tiers", {"mystery": "50.00"})
    broadcaster.levels("tiers", level(NEXT))
    await shows(p, "#celebration-amount", "SGD 473.15")
    await shows(p, "#celebration-meter", "Mystery")
    await shows(p, "#celebration-hand", "must hit by SGD 500.00")
    revealed = p.locator("#celebration-reveal")
    await expect(revealed).to_contain_text(f"hit at SGD {TRIGGER}")
    await expect(revealed).to_contain_text(f"sha256({TRIGGER}|{NONCE})")
    await expect(revealed).to_contain_text(COMMITMENT)
    await p.screenshot(path=str(ARTIFACTS / "display-levels-hit.png"))
    # The next draw's commitment is on the level at once.
    await expect(p.locator(f"{mystery} .commitment")).to_have_attribute("title", NEXT)
