"""The console's Unpaid and Signs views in a real headless Chromium against a real
writer: a supervisor pays, a second operator witnesses, the payout slip prints; screens
are listed and a flagged one is red. Screenshots: artifacts/console-payments-*.png.

The floor: the demo floor with `witness_above = "1000.00"`, no simulated tables; one
Three Card Poker round: A K Q of spades at box 1 (the tcp meter, 4.5), three of a kind
at box 3 (150 for a 1.00 wager, 4.4).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, expect
from websockets.asyncio.client import connect

from app.config.demo import DEMO_FLOOR
from app.state.timefmt import format_time
from app.store.database import with_database
from tests.conftest import admin, run_blocking
from tests.e2e.conftest import ARTIFACTS, CHROMIUM, ROOT, Server, _environment
from tests.e2e.support import free_port, wait_healthy

pytestmark = [pytest.mark.browser, pytest.mark.integration]

OPERATOR, SAM = "demo-operator", "demo-supervisor"
T03 = {"Authorization": "Bearer demo-table-T03"}
METER, TRIPS = "T03/R1/1/player", "T03/R1/3/player/fixed"
SignIn = Callable[[str], Awaitable[Page]]


@pytest.fixture(scope="module")
def server(pg_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install it with `apt-get install -y chromium`")
    folder = tmp_path_factory.mktemp("payments")
    name = f"test_{uuid.uuid4().hex}"
    run_blocking(admin(pg_dsn, f'CREATE DATABASE "{name}"'))
    floor = folder / "floor.toml"
    floor.write_text(
        DEMO_FLOOR.read_text().replace(
            "dual_control = false", 'dual_control = false\nwitness_above = "1000.00"'
        )
    )
    port, log = free_port(), folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--config", str(floor),
             "--port", str(port), "--log-level", "warning"],
            env=_environment(with_database(pg_dsn, name)), stdout=out,
            stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}", port, floor, log, process)
    try:
        wait_healthy(port, process, why=server.tail)
        play(server)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)
        run_blocking(admin(pg_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def play(server: Server) -> None:
    """The round, then wait until its meter award is final (the hold, 2 s)."""
    now = int(time.time() * 1000)
    with httpx.Client(base_url=server.base, headers=T03, timeout=30) as client:
        boxes = [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in (1, 2, 3)]
        bets = {"closed_at": format_time(now - 1000), "boxes": boxes}
        assert client.post("/v1/tables/T03/rounds/R1/bets", json=bets).is_success
        hands = [["AS", "KS", "QS"], ["9H", "4C", "2D"], ["5D", "5C", "5H"]]
        outcome = {
            "boxes": [
                {"box": i + 1, "dealt_at": format_time(now - 500), "cards": cards}
                for i, cards in enumerate(hands)
            ]
        }
        assert client.post("/v1/tables/T03/rounds/R1/outcome", json=outcome).is_success
        r = client.get("/v1/tables/T03/rounds/R1", params={"wait": 30})
        assert not r.json()["pending"], r.text


@pytest.fixture
async def page_of(browser: Browser, server: Server) -> AsyncIterator[SignIn]:
    contexts = []

    async def sign_in(token: str) -> Page:
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{server.base}/console")
        await page.fill("#token", token)
        await page.press("#token", "Enter")
        await expect(page.locator("#connection")).to_have_text("Live", timeout=15_000)
        await page.click('.tabs button[data-view="unpaid"]')
        await expect(page.locator("#view-unpaid")).to_be_visible()
        page.errors = errors  # type: ignore[attr-defined]
        return page

    yield sign_in
    for context in contexts:
        await context.close()


async def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"console-payments-{name}.png"), full_page=True)


def award_row(page: Page, table: str, award: str) -> Locator:
    return page.locator(f'#{table} tbody tr[data-award="{award}"]')


async def test_a_supervisor_pays_and_a_second_operator_witnesses(
    page_of: SignIn, server: Server
) -> None:
    sign_in = page_of
    sam = await sign_in(SAM)
    await expect(sam.locator("#unpaid-status")).to_have_text("4 unpaid awards.")
    await shot(sam, "unpaid")

    # Below witness_above: paid at once, the slip shown.
    trips = award_row(sam, "unpaid", TRIPS)
    await trips.locator("button.pay").click()
    form = trips.locator("form.pay-form")
    await expect(form.locator("input").first).to_have_value("150.00")
    await form.locator("select").select_option("chips")
    await form.locator("button.pay-submit").click()
    await expect(sam.locator("#unpaid-result")).to_contain_text(f"Award {TRIPS} paid")
    await expect(sam.locator("#slip-card")).to_be_visible()
    await expect(sam.locator('#slip-fields dd[data-field="amount"]')).to_have_text("150.00")
    await expect(sam.locator('#slip-fields dd[data-field="witness"]')).to_have_text("not required")
    await expect(award_row(sam, "unpaid", TRIPS)).to_have_count(0)
    await expect(award_row(sam, "paid", TRIPS)).to_have_count(1)

    # Above it: recorded, awaiting a witness; the payer cannot witness it.
    meter = award_row(sam, "unpaid", METER)
    await meter.locator("button.pay").click()
    await meter.locator("select").select_option("cheque")
    await meter.locator("button.pay-submit").click()
    await expect(sam.locator("#unpaid-result")).to_contain_text("needs a second operator")
    confirm = award_row(sam, "unpaid", METER).locator("button.confirm")
    await expect(confirm).to_be_disabled()
    await shot(sam, "awaiting-witness")

    olivia = await sign_in(OPERATOR)
    await expect(olivia.locator("#unpaid-status")).to_have_text("3 unpaid awards.")
    # An operator sees no pay action, only the witness's confirmation.
    await expect(olivia.locator("#unpaid button.pay")).to_have_count(0)
    await award_row(olivia, "unpaid", METER).locator("button.confirm").click()
    await expect(olivia.locator("#unpaid-result")).to_contain_text("witnessed by olivia")
    await expect(olivia.locator('#slip-fields dd[data-field="witness"]')).to_have_text("olivia")
    await expect(olivia.locator('#slip-fields dd[data-field="paid_by"]')).to_have_text("sam")
    await expect(olivia.locator("#unpaid-status")).to_have_text("2 unpaid awards.")

    # The slip names the journal entries: their hashes are the journal's.
    slip = httpx.get(
        f"{server.base}/v1/awards/{METER}/slip",
        headers={"Authorization": f"Bearer {OPERATOR}"},
    ).json()
    assert [e["hash"] for e in slip["journal"]] == [
        await olivia.locator(
            f'#slip-fields dd[data-field="journal-{e["seq"]}"] code'
        ).text_content()
        for e in slip["journal"]
    ]
    assert all(e["hash"] for e in slip["journal"])
    await shot(olivia, "slip")
    # Printed, the slip alone is on the page.
    await olivia.emulate_media(media="print")
    await expect(olivia.locator("#unpaid")).not_to_be_visible()
    await expect(olivia.locator("#slip-card")).to_be_visible()
    await olivia.screenshot(path=str(ARTIFACTS / "console-payments-slip-print.png"))
    assert olivia.errors == [] and sam.errors == []  # type: ignore[attr-defined]


async def test_the_signs_view_lists_screens_and_shows_a_flagged_one_red(
    page_of: SignIn, server: Server, browser: Browser
) -> None:
    # A real display page answers; a screen that answered once and then fell silent
    # turns stale after 15 s: its row is red.
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    display = await context.new_page()
    await display.goto(f"{server.base}/display/tcp#screen=bar-left")
    ws_url = (
        server.base.replace("http", "ws", 1) + "/v1/links/tcp/ws?screen=scr-silent-01&name=door"
    )
    async with connect(ws_url) as silent:
        snapshot = json.loads(await silent.recv())
        values = [{"meter": m["meter"], "value": m["value"]} for m in snapshot["meters"]]
        await silent.send(
            json.dumps({"type": "shown", "seq": snapshot["seq"], "values": values, "wins": []})
        )
        olivia = await sign_in_signs(page_of)
        ok_row = olivia.locator('#signs tbody tr:has-text("bar-left")')
        await expect(ok_row).to_be_visible(timeout=15_000)
        await expect(ok_row).not_to_have_class("flagged")
        silent_row = olivia.locator('#signs tr[data-screen="scr-silent-01"]')
        await expect(silent_row).to_have_class("flagged", timeout=25_000)
        await expect(silent_row).to_contain_text("stale")
        await expect(ok_row).not_to_have_class("flagged")
        await shot(olivia, "signs")
    await context.close()


async def sign_in_signs(page_of: SignIn) -> Page:
    page = await page_of(OPERATOR)
    await page.click('.tabs button[data-view="signs"]')
    await expect(page.locator("#view-signs")).to_be_visible()
    return page
