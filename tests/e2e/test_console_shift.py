"""The console as a floor supervisor runs a shift from it, in a real headless Chromium
against a real writer (the demo floor with dual control, its tables simulated), at 800 px,
1400x900 and 1920x1080. Screenshots go to artifacts/console-shift-*.png."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.e2e.conftest import ARTIFACTS, Server

pytestmark = [pytest.mark.browser, pytest.mark.integration]

SINGAPORE = ZoneInfo("Asia/Singapore")  # the demo floor's time_zone
SAM = "demo-supervisor"
SUE = "demo-supervisor-2"
SIZES: dict[str, ViewportSize] = {
    "narrow": {"width": 800, "height": 900},
    "laptop": {"width": 1400, "height": 900},
    "hd": {"width": 1920, "height": 1080},
}
# 3 Card Poker straights (rule 4.4), one a box, 21 distinct cards.
STRAIGHTS = [
    ["2H", "3D", "4C"], ["5H", "6D", "7C"], ["8H", "9D", "TC"], ["JH", "QD", "KC"],
    ["2D", "3C", "4S"], ["5D", "6C", "7S"], ["8D", "9C", "TS"],
]  # fmt: skip


class Tab:
    """One browser tab signed in; collects the page's script errors."""

    def __init__(self, page: Page, size: str) -> None:
        self.page = page
        self.size = size
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    async def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"console-shift-{name}-{self.size}.png"
        await self.page.screenshot(path=str(path))

    async def view(self, name: str) -> None:
        await self.page.click(f'.tabs button[data-view="{name}"]')
        # Generous: on a loaded machine the page may be busy drawing the floor's updates.
        await expect(self.page.locator(f"#view-{name}")).to_be_visible(timeout=15_000)


SignIn = Callable[[str, str], Awaitable[Tab]]


@pytest.fixture
async def sign_in(browser: Browser, server: Server) -> AsyncIterator[SignIn]:
    contexts = []

    async def open_tab(token: str, size: str) -> Tab:
        context = await browser.new_context(viewport=SIZES[size], accept_downloads=True)
        contexts.append(context)
        tab = Tab(await context.new_page(), size)
        await tab.page.goto(f"{server.base}/console")
        await tab.page.fill("#token", token)
        await tab.page.press("#token", "Enter")
        await expect(tab.page.locator("#connection")).to_have_text("Live", timeout=15_000)
        return tab

    yield open_tab
    for context in contexts:
        await context.close()


def stamp(offset_ms: int = 0) -> str:
    now = datetime.now(UTC).timestamp() * 1000 + offset_ms
    return datetime.fromtimestamp(now / 1000, UTC).isoformat(timespec="milliseconds")


def play_straights(server: Server, prefix: str, rounds: int) -> None:
    """`rounds` rounds at T03, each box a straight: seven fixed awards a round."""
    headers = {"Authorization": "Bearer demo-table-T03"}
    with httpx.Client(base_url=server.base, headers=headers, timeout=30) as client:
        for n in range(rounds):
            path = f"/v1/tables/T03/rounds/{prefix}{n}"
            boxes = [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, 8)]
            r = client.post(f"{path}/bets", json={"closed_at": stamp(), "boxes": boxes})
            assert r.status_code == 200, r.text
            hands = [
                {"box": b, "dealt_at": stamp(), "cards": cards}
                for b, cards in enumerate(STRAIGHTS, 1)
            ]
            r = client.post(f"{path}/outcome", json={"boxes": hands})
            assert r.status_code == 200, r.text


@pytest.mark.parametrize("size", ["narrow", "laptop", "hd"])
async def test_an_awards_export_of_thousands_of_rows_is_complete(
    sign_in: SignIn, server: Server, size: str
) -> None:
    await asyncio.to_thread(play_straights, server, f"X{size}-", 150)
    tab = await sign_in(SAM, size)
    p = tab.page
    await tab.view("awards")
    await p.select_option("#awards-table", "T03")
    await p.click("#awards-apply")
    await expect(p.locator("#awards-status")).to_contain_text("the downloads have every one")
    async with p.expect_download() as waiting:
        await p.click("#awards-csv")
    download = await waiting.value
    assert download.suggested_filename == "awards.csv"
    text = (await download.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) >= 1050  # more than any page (1,000) and today's cap (500)
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["table"] for r in rows} == {"T03"}
    await expect(p.locator("#awards-status")).to_have_text(
        f"Downloaded awards.csv: all {len(rows):,} awards of the period."
    )
    await tab.shot("awards-export")
    async with p.expect_download() as waiting:
        await p.click("#awards-jsonl")
    lines = (await (await waiting.value).path()).read_text(encoding="utf-8").splitlines()
    assert len(lines) >= len(rows)
    assert tab.errors == []


def post(server: Server, table: str, path: str, body: object) -> dict[str, object]:
    headers = {"Authorization": f"Bearer demo-table-{table}"}
    r = httpx.post(
        f"{server.base}/v1/tables/{table}/{path}", json=body, headers=headers, timeout=30
    )
    assert r.status_code == 200, r.text
    answer: dict[str, object] = r.json()
    return answer


async def test_a_round_left_open_is_named_beside_the_jackpot_it_holds_with_its_remedy(
    sign_in: SignIn, server: Server
) -> None:
    sam = await sign_in(SAM, "narrow")
    p = sam.page
    bets = {"closed_at": stamp(), "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]}
    await asyncio.to_thread(post, server, "T01", "rounds/HOLD1/bets", bets)
    await asyncio.sleep(1)
    bets = {"closed_at": stamp(), "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]}
    await asyncio.to_thread(post, server, "T02", "rounds/ROYAL1/bets", bets)
    royal = {"boxes": [{"box": 1, "dealt_at": stamp(), "cards": ["AH", "KH", "QH", "JH", "TH"]}]}
    await asyncio.to_thread(post, server, "T02", "rounds/ROYAL1/outcome", royal)
    # By its id: the simulated tables deal boosted royal flushes at T02 too.
    award = p.locator('article[data-link="stud"] ul.pending li[data-award="T02/ROYAL1/1/player"]')
    await expect(award).to_contain_text("table T02 · box 1 · royal flush", timeout=5_000)
    await expect(award).to_contain_text("Held by round HOLD1 at table T01", timeout=5_000)
    await expect(award).to_contain_text("at the latest")
    await expect(p.locator('#tables tr[data-table="T01"] td.num')).not_to_have_text("0")
    await sam.shot("pending-held")
    # The same on the award itself (docs/api.md "Records and reports": held_by).
    await sam.view("awards")
    await p.select_option("#awards-kind", "meter")
    await p.click("#awards-apply")
    row = p.locator("#awards tbody tr", has_text="ROYAL1")
    await expect(row).to_contain_text("pending: held by round HOLD1 at T01")
    await sam.shot("award-held")
    await sam.view("floor")
    # Past the floor's warning (30 s): plain words, the remedies, the supervisor's void.
    warning = p.locator('.hold-warning[data-table="T01"][data-round="HOLD1"]')
    await expect(warning).to_contain_text("is holding", timeout=45_000)
    await expect(warning).to_contain_text("rule 5.17")
    await sam.shot("hold-warning")
    await warning.locator("button").click()
    await expect(p.locator("#void-dialog")).to_be_visible()
    await p.select_option("#void-code", "error_correction")  # it lowers the meter
    await p.fill("#void-reason", "table T01 lost the round")
    await sam.shot("void-dialog")
    await p.click("#void-confirm")
    await expect(p.locator("#void-result")).to_contain_text("Proposed as", timeout=10_000)
    change = (await p.locator("#void-result").text_content() or "").split()[2].rstrip(":")
    with httpx.Client(
        base_url=server.base, headers={"Authorization": "Bearer demo-supervisor-2"}, timeout=30
    ) as client:
        approved = client.post(f"/v1/changes/{change}/approve")
    assert approved.status_code == 200, approved.text
    await p.click("#void-cancel")
    await expect(warning).to_have_count(0, timeout=10_000)
    await expect(award).to_have_count(0, timeout=10_000)
    assert sam.errors == []


@pytest.mark.parametrize("size", ["narrow", "laptop", "hd"])
async def test_an_approval_shows_the_value_the_seed_and_the_funding_and_repeats_them(
    sign_in: SignIn, size: str
) -> None:
    sam = await sign_in(SAM, size)
    p = sam.page
    await sam.view("changes")
    await p.select_option("#reset-meter", "stud/major")
    await p.select_option("#reset-code", "closure")  # a listed reason (docs/api.md)
    await p.fill("#reset-reason", f"end of promotion ({size})")
    # The proposer sees what it would do now: value, seed, where the money goes.
    preview = p.locator("#reset-figures")
    for label in ("Value now", "Value after", "Seed", "From the reserve", "From the house"):
        await expect(preview).to_contain_text(label)
    await sam.shot("reset-proposal")
    await p.click("#reset-form-submit")
    await expect(p.locator("#reset-form-result")).to_contain_text("Proposed as change-")
    await expect(p.locator("#reset-form-result")).to_be_in_viewport()  # beside its button
    change = (await p.locator("#reset-form-result").text_content() or "").split()[2].rstrip(":")

    sue = await sign_in(SUE, size)
    q = sue.page
    await sue.view("changes")
    row = q.locator(f'#proposals tr[data-change="{change}"]')
    figures = row.locator("dl.figures")
    await expect(figures).to_contain_text("Value now")
    await expect(figures).to_contain_text("From the house")
    # The id reads whole: "change-1", never "change-" over "1".
    box = await row.locator("th code.id").bounding_box()
    assert box is not None and box["height"] < 30
    await row.get_by_role("button", name=f"Approve {change}").click()
    dialog = q.locator("#approve-dialog")
    await expect(dialog).to_be_visible()
    numbers = q.locator("#approve-numbers")
    seed_line = (
        await figures.locator("dt", has_text="Seed")
        .locator("xpath=following-sibling::dd[1]")
        .text_content()
    )
    await expect(numbers).to_contain_text(seed_line or "?")
    for label in ("Value now", "Value after", "From the reserve", "From the house", "Reserve"):
        await expect(numbers).to_contain_text(label)
    await sue.shot("approve-dialog")
    await q.click("#approve-confirm")
    await expect(q.locator("#approve-result")).to_contain_text(f"{change} approved")
    await expect(row).to_have_count(0)
    assert sam.errors == [] and sue.errors == []


NOTES = """
window.__notes = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push([title, options.body, options.tag]); }
};
"""


@pytest.mark.parametrize("size", ["narrow", "laptop", "hd"])
async def test_an_alarm_is_seen_from_every_tab_and_a_supervisor_acknowledges_it(
    sign_in: SignIn, server: Server, size: str
) -> None:
    sam = await sign_in(SAM, size)
    p = sam.page
    await p.add_init_script(NOTES)
    await p.reload()
    await expect(p.locator("#connection")).to_have_text("Live", timeout=15_000)
    await sam.view("audit")
    held = f"AL{size}"
    bets = {"closed_at": stamp(), "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]}
    await asyncio.to_thread(post, server, "T01", f"rounds/{held}/bets", bets)
    await asyncio.sleep(0.5)
    await asyncio.to_thread(
        post, server, "T02", f"rounds/R{held}/bets", bets | {"closed_at": stamp()}
    )
    royal = {"boxes": [{"box": 1, "dealt_at": stamp(), "cards": ["AH", "KH", "QH", "JH", "TH"]}]}
    await asyncio.to_thread(post, server, "T02", f"rounds/R{held}/outcome", royal)
    # On the audit tab: the strip, the title, the browser's notification.
    strip = p.locator("#alarms")
    pending = strip.locator("li.alarm-pending", has_text="table T02 box 1 · royal flush")
    holding = strip.locator(f'li[data-alarm="holding:T01/{held}"]')
    if not await holding.is_visible():
        await p.click("#alarm-more")
    await expect(holding).to_contain_text(f"Round {held} at table T01 holds")
    await expect(pending.first).to_be_visible()
    await expect(p).to_have_title(re.compile(r"^\(\d+\) Jackpot console$"))
    notes = await p.evaluate("window.__notes")
    assert any(tag == f"holding:T01/{held}" for _, _, tag in notes), notes
    await sam.shot("alarm-on-audit")
    for view in ("awards", "reconciliation", "journal", "changes"):
        await sam.view(view)
        await expect(holding).to_be_visible()
    # Acknowledged by a supervisor: recorded, shown to every console.
    await holding.get_by_role("button", name="Acknowledge").click()
    await expect(holding).to_contain_text("Recorded in the audit log")
    await expect(holding).to_contain_text("acknowledged by sam")
    await sam.shot("alarm-acknowledged")
    await sam.view("audit")
    await p.select_option("#audit-kind", "acknowledge")
    await p.click("#audit-apply")
    await expect(p.locator("#audit tbody tr", has_text=f"holding:T01/{held}")).to_contain_text(
        "sam"
    )
    void = {"reason": "test over"}
    await asyncio.to_thread(post, server, "T01", f"rounds/{held}/void", void)
    await expect(holding).to_have_count(0, timeout=10_000)
    assert sam.errors == []


NEXT_SEED = {"narrow": "5100.00", "laptop": "5200.00", "hd": "5300.00"}


@pytest.mark.parametrize("size", ["narrow", "laptop", "hd"])
async def test_the_header_stays_and_details_are_live_beside_their_row_with_the_next_seed(
    sign_in: SignIn, server: Server, size: str
) -> None:
    sam = await sign_in(SAM, size)
    p = sam.page
    # Signed in: the header is on screen, the page not scrolled past it.
    await expect(p.locator("header.top")).to_be_in_viewport()
    assert await p.evaluate("window.scrollY") == 0
    await sam.shot("signed-in")
    # A seed change approved: the floor shows the seed the next reset returns to.
    with httpx.Client(base_url=server.base, timeout=30) as client:
        body = {"seed": NEXT_SEED[size], "reason": f"next seed ({size})"}
        r = client.put(
            "/v1/links/tcp/meters/major/seed",
            json=body,
            headers={"Authorization": f"Bearer {SAM}"},
        )
        assert r.status_code == 202, r.text
        r = client.post(
            f"/v1/changes/{r.json()['id']}/approve", headers={"Authorization": f"Bearer {SUE}"}
        )
        assert r.status_code == 200, r.text
    shown = f"{int(NEXT_SEED[size][:4]):,}.00"
    row = p.locator('tr[data-link="tcp"][data-meter="major"]')
    # (An A K Q of spades may reset the meter meanwhile: the new seed is then the seed.)
    await expect(row.locator("td.seed")).to_contain_text(shown)
    # Details open under their own row and follow the floor.
    await row.get_by_role("button", name="Details of").click()
    detail = p.locator('tr[data-link="tcp"][data-meter="major"] + tr.detail-row')
    await expect(detail).to_be_visible()
    await expect(detail).to_contain_text(shown)
    stud = p.locator('tr[data-link="stud"][data-meter="major"]')
    await stud.get_by_role("button", name="Details of").click()
    stud_detail = p.locator('tr[data-link="stud"][data-meter="major"] + tr.detail-row')
    before = await stud_detail.locator("dd").first.text_content()
    await asyncio.to_thread(play_straights, server, f"D{size}-", 1)  # T03: tcp moves
    value = row.locator("td.value")
    tcp_detail_value = detail.locator("dd").first
    await expect(tcp_detail_value).not_to_have_text(before or "")
    for _ in range(20):  # the row and its details show the same value, both live
        if await value.text_content() == await tcp_detail_value.text_content():
            break
        await asyncio.sleep(0.25)
    assert await value.text_content() == await tcp_detail_value.text_content()
    await sam.shot("meter-details-live")
    assert sam.errors == []


def gaming_day_start(now: datetime) -> datetime:
    """The demo floor's gaming day (Asia/Singapore, from 06:00) that `now` is in."""
    local = now.astimezone(SINGAPORE)
    start = local.replace(hour=6, minute=0, second=0, microsecond=0)
    return start if local >= start else start - timedelta(days=1)


@pytest.mark.parametrize("size", ["narrow", "laptop", "hd"])
async def test_shift_reports_use_the_floors_gaming_day_zone_and_a_zooming_chart(
    sign_in: SignIn, server: Server, size: str
) -> None:
    with httpx.Client(base_url=server.base, timeout=30) as client:
        r = client.post(
            "/v1/links/tcp/meters/major/reset",
            json={"reason": f"chart marks ({size})", "reason_code": "malfunction"},
            headers={"Authorization": f"Bearer {SAM}"},
        )
        assert r.status_code == 202, r.text
        r = client.post(
            f"/v1/changes/{r.json()['id']}/approve", headers={"Authorization": f"Bearer {SUE}"}
        )
        assert r.status_code == 200, r.text
    await asyncio.sleep(3)  # the reset is final after the hold
    sam = await sign_in(SAM, size)
    p = sam.page
    # One format, with the floor's zone, everywhere.
    zoned = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} GMT\+8")
    await expect(p.locator("#floor-summary time")).to_have_text(zoned)
    await sam.view("reconciliation")
    start = gaming_day_start(datetime.now(UTC))
    day = start.strftime("%Y-%m-%d 06:00")
    await expect(p.locator("#rec-from")).to_have_value(day)  # today's gaming day by default
    await expect(p.locator('label[for="rec-from"]')).to_contain_text("Asia/Singapore")
    await p.click("#rec-preset-yesterday")
    await expect(p.locator("#rec-from")).to_have_value(
        (start - timedelta(days=1)).strftime("%Y-%m-%d 06:00")
    )
    await expect(p.locator("#rec-to")).to_have_value(day)
    await p.click("#rec-preset-shift")
    local = datetime.now(SINGAPORE)
    shift = max(h for h in (6, 14, 22) if local.hour >= h) if local.hour >= 6 else 22
    await expect(p.locator("#rec-from")).to_have_value(re.compile(rf" {shift:02d}:00$"))
    await p.click("#rec-preset-today")
    await expect(p.locator('#rec tr[data-link="tcp"]')).to_contain_text("balanced")
    await p.get_by_role("button", name="Chart of tcp major").click()
    chart = p.locator("#chart svg.chart")
    await expect(chart.locator('g.mark[data-kind="reset"]').first).to_be_attached()
    # A tooltip per mark, on hover and on keyboard focus: this size's reset, named by its
    # reason (the other sizes' resets, in whatever order they ran, are on the chart too).
    mark = chart.locator(f'g.mark[data-kind="reset"][aria-label*="chart marks ({size})"]')
    tip = p.locator("#chart-tip")
    await p.mouse.move(1, 1)  # the pointer off the chart: no other mark's tooltip meanwhile
    await mark.focus()
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text(f"chart marks ({size})")
    await mark.blur()
    await expect(tip).to_be_hidden()
    line = await mark.locator("line").bounding_box()  # the pointer on the reset's line
    assert line is not None
    # The first point down the reset's line where no other mark (an award's circle, another
    # reset at the same instant) lies over it.
    x = line["x"] + line["width"] / 2
    y = await mark.evaluate(
        """(mark, [x, top, height]) => {
             for (let y = top + 1; y < top + height; y += 3)
               if (document.elementFromPoint(x, y)?.closest("g.mark") === mark) return y;
             return null;
           }""",
        [x, line["y"], line["height"]],
    )
    assert y is not None, "the reset's line is covered by other marks"
    await p.mouse.move(x, y)
    await expect(tip).to_be_visible()
    await expect(tip).to_contain_text(f"chart marks ({size})")
    await expect(tip).to_have_text(re.compile(r"GMT\+8"))
    await sam.shot("chart-tooltip")
    # Drag across the plot: the chart zooms into that stretch.
    whole_from = await chart.get_attribute("data-from") or "0"
    before = int(await chart.get_attribute("data-to") or 0) - int(whole_from)
    box = await chart.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    # A drag starts on the plot, not on a mark (a reset's line spans the plot's height):
    # the first of these points that is the chart's and not a mark's. The pointer leaves
    # the chart first: a tooltip still shown would stand over the point while it is chosen.
    await p.mouse.move(1, 1)
    await expect(tip).to_be_hidden()
    x = await p.evaluate(
        """([left, width, y]) => [0.3, 0.27, 0.33, 0.24, 0.36].map((f) => left + width * f)
             .find((x) => {
               const at = document.elementFromPoint(x, y);
               return at?.closest("svg.chart") && !at.closest("g.mark");
             })""",
        [box["x"], box["width"], y],
    )
    assert x is not None, "every point across the middle of the plot is on a mark"
    await p.mouse.move(x, y)
    await p.mouse.down()
    await p.mouse.move(x + box["width"] * 0.2, y, steps=5)
    await p.mouse.up()
    await expect(p.locator("#chart-zoom-note")).to_contain_text("Showing")
    chart = p.locator("#chart svg.chart")
    # The zoomed chart is drawn once its points are read: wait for it, then measure.
    await expect(chart).not_to_have_attribute("data-from", whole_from)
    after = int(await chart.get_attribute("data-to") or 0) - int(
        await chart.get_attribute("data-from") or 0
    )
    assert after < before / 3, (before, after)
    await sam.shot("chart-zoomed")
    await p.click("#chart-zoom-reset")
    await expect(p.locator("#chart-zoom-note")).to_contain_text("Drag across the chart")
    assert sam.errors == []


DISPLAYS: dict[str, ViewportSize] = {
    "landscape": {"width": 1920, "height": 1080},
    "portrait": {"width": 1080, "height": 1920},
}


def straight_flushes(server: Server, prefix: str, rounds: int) -> None:
    """`rounds` straight flushes at T02: each a final 10 % win of the stud major."""
    for n in range(rounds):
        bets = {"closed_at": stamp(), "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]}
        post(server, "T02", f"rounds/{prefix}{n}/bets", bets)
        hand = {"box": 1, "dealt_at": stamp(), "cards": ["9S", "TS", "JS", "QS", "KS"]}
        post(server, "T02", f"rounds/{prefix}{n}/outcome", {"boxes": [hand]})


@pytest.mark.parametrize("shape", ["landscape", "portrait"])
async def test_the_display_shows_the_links_name_scrolls_its_wins_and_logs_no_error(
    browser: Browser, server: Server, shape: str
) -> None:
    await asyncio.to_thread(straight_flushes, server, f"W{shape}-", 6)
    context = await browser.new_context(viewport=DISPLAYS[shape])
    try:
        page = await context.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on(
            "response",
            lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )
        await page.goto(f"{server.base}/display/stud")
        await expect(page.locator("#link-name")).to_have_text("Stud Poker Progressive")
        await expect(page).to_have_title("Stud Poker Progressive — Progressive Jackpot")
        recent = page.locator("#recent-list")
        try:
            await expect(recent.locator("li").first).to_be_visible(timeout=30_000)
        except AssertionError:
            with httpx.Client(base_url=server.base, timeout=30) as client:
                floor = client.get("/v1/floor", headers={"Authorization": f"Bearer {SAM}"})
            holding = [link["holding_rounds"] for link in floor.json()["links"]]
            raise AssertionError(f"no win made final; holding rounds: {holding}") from None
        # More wins than fit: the strip scrolls (it moves by itself).
        await expect(recent).to_have_class(re.compile("scrolling"), timeout=15_000)
        offset = "e => new DOMMatrix(getComputedStyle(e).transform).m41"
        first = await recent.evaluate(offset)
        await asyncio.sleep(1.0)
        assert await recent.evaluate(offset) < first  # it moves left, and a new win keeps it going
        # Legible from across a room, nothing cut at the sides.
        sizes = await page.evaluate(
            """() => {
              const size = (e) => parseFloat(getComputedStyle(e).fontSize);
              return {
              amount: size(document.querySelector('.meter-value, .amount')),
              name: size(document.getElementById('link-name')),
              wins: size(document.getElementById('recent')),
              overflow: document.documentElement.scrollWidth - innerWidth,
            }; }"""
        )
        assert sizes["amount"] >= 80 and sizes["name"] >= 30 and sizes["wins"] >= 28, sizes
        # The brand and the name each on one line (a long name goes under the brand).
        for part in ("#header .brand", "#link-name"):
            box = await page.locator(part).bounding_box()
            line = await page.locator(part).evaluate(
                "e => parseFloat(getComputedStyle(e).fontSize) * 1.3"
            )
            assert box is not None and box["height"] < 1.6 * line, (part, box, line)
        assert sizes["overflow"] <= 0, sizes
        await page.screenshot(path=str(ARTIFACTS / f"console-shift-display-{shape}.png"))
        assert problems == []
    finally:
        await context.close()
