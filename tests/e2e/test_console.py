"""The operator console in a real headless Chromium against a real writer (`jackpot serve`
on the demo floor with dual control, its tables simulated). Screenshots of every view go to
artifacts/console-*.png."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.e2e.conftest import ARTIFACTS, HOSTILE, Server

pytestmark = [pytest.mark.browser, pytest.mark.integration]

OPERATOR, SAM, SUE = "demo-operator", "demo-supervisor", "demo-supervisor-2"
SIZES: dict[str, ViewportSize] = {
    "hd": {"width": 1920, "height": 1080},
    "laptop": {"width": 1280, "height": 800},
}


class Console:
    """One browser tab signed in; collects the page's script errors."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    async def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        await self.page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=True)

    async def view(self, name: str) -> None:
        await self.page.click(f'.tabs button[data-view="{name}"]')
        await expect(self.page.locator(f"#view-{name}")).to_be_visible()


SignIn = Callable[..., Awaitable[Console]]


@pytest.fixture
async def open_console(browser: Browser, server: Server) -> AsyncIterator[SignIn]:
    contexts = []

    async def sign_in(token: str, size: str = "hd") -> Console:
        context = await browser.new_context(viewport=SIZES[size], accept_downloads=True)
        contexts.append(context)
        console = Console(await context.new_page())
        await console.page.goto(f"{server.base}/console")
        await console.page.fill("#token", token)
        await console.page.press("#token", "Enter")
        await expect(console.page.locator("#connection")).to_have_text("Live", timeout=15_000)
        return console

    yield sign_in
    for context in contexts:
        await context.close()


def api(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


async def test_an_operator_signs_in_and_sees_the_links_move_with_no_change_forms(
    open_console: SignIn, server: Server
) -> None:
    console = await open_console(OPERATOR, "laptop")
    p = console.page
    await expect(p.locator("#who-role")).to_have_text("operator")
    value = p.locator('tr[data-link="stud"][data-meter="major"] td.value')
    first = await value.text_content()
    # The simulated tables post a round a second each: the value changes, pushed.
    await expect(value).not_to_have_text(first or "", timeout=20_000)
    assert "token" not in p.url and OPERATOR not in p.url
    assert await p.evaluate("sessionStorage.getItem('jackpot.console.token')") == OPERATOR
    assert await p.context.cookies() == []
    await expect(p.locator('article[data-link="stud"] .pill')).to_have_text("ok")
    await expect(p.locator('#tables tr[data-table="T01"]')).to_contain_text("active")
    await console.shot("floor-1280x800")

    await console.view("changes")
    for form in ("#seed-form", "#reset-form", "#corr-form"):
        assert await p.locator(form).count() == 0, f"{form} is offered to an operator"
    await expect(p.locator("#role-note")).to_contain_text("change nothing")
    await console.shot("changes-operator")
    # The server refuses it anyway.
    with api(server, OPERATOR) as client:
        answer = client.put("/v1/links/stud/meters/major/seed", json={"seed": "1", "reason": "x"})
    assert answer.status_code == 403
    assert console.errors == []


async def test_markup_in_a_link_name_and_a_reason_shows_as_text(
    open_console: SignIn, server: Server
) -> None:
    console = await open_console(SAM)
    p = console.page
    await expect(p.locator('article[data-link="tcp"] .link-name')).to_have_text(HOSTILE)
    with api(server, SAM) as client:
        proposed = client.post(
            "/v1/links/tcp/meters/major/corrections",
            json={"kind": "adjust", "amount": "1.00", "reason": HOSTILE},
        )
    assert proposed.status_code == 202
    await console.view("changes")
    row = p.locator(f'#proposals tr[data-change="{proposed.json()["id"]}"]')
    await expect(row).to_contain_text(HOSTILE)
    await console.view("audit")
    await expect(p.locator("#audit tbody")).to_contain_text(HOSTILE)
    assert await p.locator("img").count() == 0
    assert await p.evaluate("window.pwned") is None
    with api(server, SUE) as client:  # leave the floor as it was
        rejected = client.post(
            f"/v1/changes/{proposed.json()['id']}/reject", json={"reason": "test"}
        )
    assert rejected.status_code == 200
    assert console.errors == []


async def test_a_supervisor_proposes_a_seed_and_a_second_one_approves_it(
    open_console: SignIn, server: Server
) -> None:
    sam = await open_console(SAM)
    p = sam.page
    await sam.view("changes")
    await expect(p.locator("#dual-note")).to_contain_text("Dual control is on")
    await p.select_option("#seed-meter", "stud/major")
    await p.fill("#seed-value", "12345.67")
    await p.fill("#seed-reason", "weekend promotion")
    await expect(p.locator("#seed-form-preview")).to_contain_text("10,000.00 → 12,345.67")
    await sam.shot("changes-supervisor")
    await p.click("#seed-form-submit")
    await expect(p.locator("#seed-form-result")).to_contain_text("Proposed as change-")
    change = (await p.locator("#seed-form-result").text_content() or "").split()[2].rstrip(":")
    own = p.locator(f'#proposals tr[data-change="{change}"]')
    await expect(own).to_contain_text("waiting for a different supervisor")
    assert await own.locator("button").count() == 0  # the proposer cannot approve it

    sue = await open_console(SUE)
    q = sue.page
    await sue.view("changes")
    theirs = q.locator(f'#proposals tr[data-change="{change}"]')
    await expect(theirs).to_contain_text("new seed 12,345.67")
    await sue.shot("changes-approve")
    await theirs.get_by_role("button", name=f"Approve {change}").click()
    await expect(q.locator("#approve-numbers")).to_contain_text("10,000.00 → 12,345.67")
    await q.click("#approve-confirm")
    await expect(q.locator("#approve-result")).to_contain_text(f"{change} approved")
    await q.click("#approve-cancel")
    await expect(q.locator("#proposals-result")).to_contain_text(f"{change} approved")
    await expect(theirs).to_have_count(0)

    await sue.view("floor")
    await q.get_by_role("button", name="Details of Stud Poker Progressive Major").click()
    detail = q.locator('tr.detail-row[data-link="stud"][data-meter="major"]')
    await expect(detail).to_contain_text("12,345.67")
    await sue.shot("meter-detail")
    await sue.view("audit")
    seed_row = q.locator("#audit tbody tr", has_text="weekend promotion").filter(
        has_text="seed 12,345.67"
    )
    await expect(seed_row).to_contain_text("sue")
    await sue.shot("audit")
    with api(server, OPERATOR) as client:
        meter = client.get("/v1/links/stud/meters/major").json()
    assert meter["next_seed"] == "12345.67"
    assert sam.errors == [] and sue.errors == []


async def test_a_reset_without_a_reason_cannot_be_sent(open_console: SignIn) -> None:
    console = await open_console(SAM, "laptop")
    p = console.page
    sent: list[str] = []
    p.on("request", lambda r: sent.append(r.url) if r.url.endswith("/reset") else None)
    await console.view("changes")
    submit = p.locator("#reset-form-submit")
    await expect(submit).to_be_disabled()
    await expect(p.locator("#reset-form-problem")).to_have_text("A listed reason is required.")
    await p.select_option("#reset-code", "malfunction")
    await expect(p.locator("#reset-form-problem")).to_have_text("A reason is required.")
    await p.fill("#reset-reason", "   ")
    await expect(submit).to_be_disabled()
    # Not by the keyboard nor by a script either.
    await p.evaluate("document.getElementById('reset-form').requestSubmit()")
    await asyncio.sleep(0.5)
    assert sent == []
    await expect(p.locator("#reset-form-preview")).to_contain_text("Value now")
    await console.shot("reset-refused")


async def test_a_reset_is_sent_with_its_listed_reason(open_console: SignIn, server: Server) -> None:
    console = await open_console(SAM, "laptop")
    p = console.page
    await console.view("changes")
    await p.select_option("#reset-meter", "tcp/major")
    await p.select_option("#reset-code", "regulator_order")
    await p.fill("#reset-reason", "ordered off the floor")
    async with p.expect_response(lambda r: r.url.endswith("/reset")) as answer:
        await p.click("#reset-form-submit")
    sent = (await answer.value).request.post_data_json
    assert sent == {"reason": "ordered off the floor", "reason_code": "regulator_order"}
    await console.shot("reset-with-listed-reason")
    proposal = await (await answer.value).json()
    if (await answer.value).status == 202:  # dual control: left for no other test
        with api(server, SUE) as sue:
            sue.post(f"/v1/changes/{proposal['id']}/reject", json={"reason": "test over"})


async def test_the_reconciliation_chart_draws_the_periods_points_and_marks(
    open_console: SignIn, server: Server
) -> None:
    with api(server, SAM) as sam, api(server, SUE) as sue:
        proposed = sam.post(
            "/v1/links/tcp/meters/major/reset",
            json={"reason": "chart test", "reason_code": "malfunction"},
        )
        assert proposed.status_code == 202
        assert sue.post(f"/v1/changes/{proposed.json()['id']}/approve").status_code == 200
    await asyncio.sleep(3)  # the reset is final after the hold
    console = await open_console(OPERATOR)
    p = console.page
    async with p.expect_response(lambda r: "/meters/tcp" not in r.url and "/history" in r.url):
        await console.view("reconciliation")
    await expect(p.locator('#rec tr[data-link="tcp"]')).to_contain_text("balanced")
    async with p.expect_response(lambda r: "/links/tcp/meters/major/history" in r.url) as got:
        await p.get_by_role("button", name="Chart of tcp major").click()
    history = await (await got.value).json()
    chart = p.locator("#chart svg.chart")
    await expect(chart).to_have_attribute("data-points", str(len(history["points"])))
    assert len(history["points"]) >= 2
    # A step line: one H and one V per point, plus the opening and the period's end.
    d = await chart.locator("path.series").get_attribute("d") or ""
    assert d.count("H") == len(history["points"]) + 1
    kinds = [m["kind"] for m in history["marks"]]
    assert "reset" in kinds
    await expect(chart.locator("g.mark")).to_have_count(len(kinds))
    await expect(chart.locator('g.mark[data-kind="reset"]')).to_have_count(kinds.count("reset"))
    await expect(p.locator("#chart ul.marks")).to_contain_text("chart test")
    assert Decimal(history["closing"]) >= 0
    await console.shot("reconciliation")


async def test_the_csv_downloads_are_the_apis_own(open_console: SignIn, server: Server) -> None:
    console = await open_console(OPERATOR)
    p = console.page
    await console.view("audit")
    await expect(p.locator("#audit-status")).to_contain_text("record")
    async with p.expect_download() as download:
        await p.click("#audit-csv")
    saved = await (await download.value).path()
    with api(server, OPERATOR) as client:
        expected = client.get("/v1/audit", params={"format": "csv", "limit": 1000}).text
    assert saved.read_text() == expected
    assert expected.startswith("id,at,who,action,link,meter,")

    await console.view("awards")
    await p.select_option("#awards-kind", "meter")
    await p.click("#awards-apply")
    await expect(p.locator("#awards-status")).to_contain_text("award")
    async with p.expect_download() as download:
        await p.click("#awards-csv")
    text = (await (await download.value).path()).read_text()
    assert text.startswith("id,link,table,round,box,hand,meter,")
    assert all(line.split(",")[15] == "meter" for line in text.splitlines()[1:])
    await console.shot("awards")
    await console.view("journal")
    await expect(p.locator("#journal-head")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    await console.shot("journal")


async def test_writer_unreachable_when_its_socket_drops(
    open_console: SignIn, server: Server
) -> None:
    """Last in the module: it stops the server."""
    console = await open_console(OPERATOR, "laptop")
    p = console.page
    server.process.terminate()
    server.process.wait(timeout=30)
    await expect(p.locator("#connection")).to_contain_text("Writer unreachable", timeout=15_000)
    await expect(p.locator("#banner")).to_be_visible()
    await expect(p.locator('article[data-link="stud"] .pill')).to_have_text("writer unreachable")
    await console.shot("unreachable")
