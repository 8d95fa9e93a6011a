"""The demo floor's tiered link (`tiers`: major, minor and the must-hit-by mini) served as
`jackpot demo` serves it (JACKPOT_DEMO_TOKENS=1, its tables simulated), in a real headless
Chromium: the display page and `GET /v1/links/tiers` show the three levels and the
mystery level's "must hit by" and commitment (docs/api.md, Displays); the console's Levels
panel shows every level, the mystery level's range and commitment, and a mystery hit with
its reveal (docs/design.md "Must-hit-by levels"). Screenshots go to artifacts/."""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, expect

from app.state.timefmt import format_time
from tests.e2e.conftest import ARTIFACTS, Server

pytestmark = [pytest.mark.browser, pytest.mark.integration]

# What app/demo/floor.toml declares, written out here rather than read from it.
LEVELS = [("major", "Major"), ("minor", "Minor"), ("mini", "Mini Mystery")]
MINI = '[data-meter-card="mini"]'
HEX64 = re.compile(r"[0-9a-f]{64}")
T06 = {"Authorization": "Bearer demo-table-T06"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
# Seven hands without a pair, straight or flush (ranks 2 4 6 8 T or 3 5 7 9 J, each suit
# turned by one per hand): no pay-table row wins, so only the mini's trigger can pay.
HANDS = [
    [f"{rank}{'SHDC'[(j + k) % 4]}" for j, rank in enumerate(ranks)]
    for ranks, turns in (("2468T", range(4)), ("3579J", range(3)))
    for k in turns
]


async def read_tiers(base: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        answer = await client.get("/v1/links/tiers")
    assert answer.status_code == 200, answer.text
    read: dict[str, Any] = answer.json()
    return read


async def commitment_shown(
    read: Callable[[], Awaitable[dict[str, Any]]], locator: Locator, attribute: str | None
) -> str:
    """The commitment the page shows once it is the server's current one: the simulated
    tables may hit the mini meanwhile, and a new draw brings a new commitment."""
    shown, current = None, None
    for _ in range(40):
        current = (await read())["meters"][2]["commitment"]
        if attribute is None:
            shown = await locator.text_content()
        else:
            shown = await locator.get_attribute(attribute)
        if shown == current and isinstance(current, str):
            return current
        await asyncio.sleep(0.5)
    raise AssertionError(f"the page shows commitment {shown}, the server {current}")


async def test_the_demo_floor_shows_its_tiered_link_and_mystery_level(
    browser: Browser, server: Server
) -> None:
    read = await read_tiers(server.base)
    assert read["link"] == "tiers" and read["currency"] == "SGD"
    assert [(m["meter"], m["name"]) for m in read["meters"]] == LEVELS
    major, minor, mini = read["meters"]
    assert (mini["must_hit_from"], mini["must_hit_by"]) == ("20.00", "40.00")
    assert HEX64.fullmatch(mini["commitment"]), mini
    for level in (major, minor):
        assert not {"must_hit_from", "must_hit_by", "commitment"} & set(level), level
    assert "trigger" not in str(read)

    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = await context.new_page()
        await page.goto(f"{server.base}/display/tiers")
        for meter, name in LEVELS:
            card = page.locator(f'[data-meter-card="{meter}"]')
            await expect(card.locator(".meter-name")).to_have_text(name, timeout=10_000)
            await expect(page.locator(f'[data-meter="{meter}"]')).to_have_text(
                re.compile(r"^\d{1,3}(,\d{3})*\.\d{2}$")
            )
        await expect(page.locator(f"{MINI} .must-hit")).to_have_text("must hit by SGD 40.00")
        await expect(page.locator('[data-meter-card="major"] .must-hit')).to_be_hidden()
        commitment = page.locator(f"{MINI} .commitment")
        shown = await commitment_shown(
            lambda: read_tiers(server.base), commitment, "data-commitment"
        )
        await expect(commitment).to_have_text(f"commitment {shown[:8]}…{shown[-4:]}")
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "display-demo-tiers.png"))
    finally:
        await context.close()


async def play_t06_until_the_mini_hits(base: str) -> dict[str, Any]:
    """T06 rounds of seven 1.00 jackpot wagers, none winning a hand, until the mini's
    trigger is crossed (at most 40.00 - 20.00 at 5 %: 400 wagers) and its award is final:
    decided once event time (the watermark) passes the crossing."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:

        async def mini_hits() -> list[dict[str, Any]]:
            query: dict[str, str | int] = {"link": "tiers", "meter": "mini", "limit": 25}
            answer = await client.get("/v1/awards", params=query, headers=OPERATOR)
            assert answer.status_code == 200, answer.text
            awards: list[dict[str, Any]] = answer.json()["awards"]
            return awards

        before = {a["id"] for a in await mini_hits()}
        for n in range(70):
            url = f"/v1/tables/T06/rounds/LEVELS-{n}"
            closed = format_time(time.time_ns() // 1_000_000)
            boxes = [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, 8)]
            bets = await client.post(
                f"{url}/bets", json={"closed_at": closed, "boxes": boxes}, headers=T06
            )
            assert bets.status_code in (200, 201), bets.text
            dealt = format_time(time.time_ns() // 1_000_000)
            hands = [{"box": b, "dealt_at": dealt, "cards": HANDS[b - 1]} for b in range(1, 8)]
            outcome = await client.post(f"{url}/outcome", json={"boxes": hands}, headers=T06)
            assert outcome.status_code in (200, 201), outcome.text
            mini = (await client.get("/v1/links/tiers")).json()["meters"][2]
            if Decimal(mini["value"]) >= Decimal(mini["must_hit_by"]):
                break  # past any trigger: the crossing is decided as event time passes it
        new: list[dict[str, Any]] = []
        for _ in range(120):
            new = [a for a in await mini_hits() if a["id"] not in before]
            if new:
                break
            await asyncio.sleep(0.5)
        else:
            read = (await client.get("/v1/links/tiers")).json()
            raise AssertionError(f"the mini went past 40.00 and did not hit: {read}")
        for _ in range(60):
            hit = next(a for a in await mini_hits() if a["id"] == new[0]["id"])
            if hit["state"] == "final":
                return hit
            await asyncio.sleep(0.5)
        raise AssertionError(f"the mini's hit stayed {hit['state']}: {hit}")


async def console(browser: Browser, base: str) -> Page:
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    page = await context.new_page()
    await page.goto(f"{base}/console")
    await page.fill("#token", "demo-operator")
    await page.press("#token", "Enter")
    await expect(page.locator("#connection")).to_have_text("Live", timeout=15_000)
    return page


async def test_the_console_shows_every_level_and_a_mystery_hit_with_its_reveal(
    browser: Browser, server: Server
) -> None:
    hit = await play_t06_until_the_mini_hits(server.base)
    reveal = hit["reveal"]
    # Checked here independently of the server and the page: the commitment drawn before
    # play is sha256("<trigger>|<nonce>"), and the trigger lay in the published range.
    text = f"{reveal['trigger']}|{reveal['nonce']}"
    assert hashlib.sha256(text.encode()).hexdigest() == reveal["commitment"]
    assert (reveal["must_hit_from"], reveal["must_hit_by"]) == ("20.00", "40.00")
    assert 20 <= float(reveal["trigger"]) < 40
    assert hit["table"] == "T06" and hit["hand"] == "must_hit_by"

    page = await console(browser, server.base)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        tiers = page.locator('#levels article[data-levels="tiers"]')
        levels = tiers.locator("section.level")
        await expect(levels).to_have_count(3)
        for i, (meter, name) in enumerate(LEVELS):
            await expect(levels.nth(i)).to_have_attribute("data-meter", meter)
            await expect(levels.nth(i).locator("h4")).to_contain_text(name)
            await expect(levels.nth(i).locator("dd.value")).to_have_text(
                re.compile(r"^\d{1,3}(,\d{3})*\.\d{2}$")
            )
        major = tiers.locator('section[data-meter="major"]')
        await expect(major.locator("dd.seed")).to_have_text("2,500.00")
        await expect(major.locator("dd.ceiling")).to_have_text("100,000.00")
        await expect(major.locator(".level-commitment")).to_have_count(0)
        mini = tiers.locator('section[data-meter="mini"]')
        await expect(mini.locator("dd.seed")).to_have_text("20.00")
        await expect(mini.locator("dd.ceiling")).to_have_text("none")
        await expect(mini.locator("dd.must-hit")).to_have_text("from 20.00 by 40.00")
        await commitment_shown(
            lambda: read_tiers(server.base), mini.locator(".level-commitment code"), None
        )
        # The hit: when, where, how much, and its reveal, checked against the commitment.
        row = mini.locator(f'li[data-hit="{hit["id"]}"]')
        await expect(row).to_contain_text(f"table T06 · round {hit['round']} · box {hit['box']}")
        await expect(row.locator("strong")).to_have_text(hit["amount"])  # below 1,000.00
        await expect(row.locator("time")).to_have_attribute("datetime", hit["dealt_at"])
        shown = row.locator(".reveal")
        await expect(shown).to_contain_text(f"sha256({text})")
        await expect(shown.locator("code.commitment")).to_have_text(reveal["commitment"])
        await expect(shown.locator("[data-check]")).to_have_attribute("data-check", "ok")
        await expect(shown).to_contain_text("matches the commitment")
        ARTIFACTS.mkdir(exist_ok=True)
        await page.locator("#levels").screenshot(path=str(ARTIFACTS / "console-levels.png"))
        await page.screenshot(path=str(ARTIFACTS / "console-levels-floor.png"), full_page=True)
        assert errors == []
    finally:
        await page.context.close()
