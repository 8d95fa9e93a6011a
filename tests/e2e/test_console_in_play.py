"""The console's In play section (rules 5.17, 5.18.2): a supervisor suspends a box, a
second one approves it (dual control), the floor lists it and the simulated table
deals on without that box's jackpot wager; resumed the same way. Screenshots kept."""

from __future__ import annotations

import asyncio

from playwright.async_api import Dialog, expect

from tests.e2e.conftest import Server
from tests.e2e.test_console import (  # the console's fixtures and tokens
    SAM,
    SUE,
    SignIn,
    api,
    open_console,  # noqa: F401
    pytestmark,  # noqa: F401
)


async def test_a_box_suspended_and_resumed_from_the_console_under_dual_control(
    open_console: SignIn,  # noqa: F811
    server: Server,
) -> None:
    sam = await open_console(SAM)
    p = sam.page
    await expect(p.locator("#in-play-summary")).to_have_text("Everything is in play.")
    await p.select_option("#suspend-target", "table:T01")
    await p.fill("#suspend-boxes", "3")
    await p.fill("#suspend-reason", "box 3 sensor fault")
    await p.click("#suspend-submit")
    await expect(p.locator("#in-play-result")).to_contain_text("Proposed as change-")
    change = (await p.locator("#in-play-result").text_content() or "").split()[2].rstrip(":")

    sue = await open_console(SUE)
    q = sue.page
    await sue.view("changes")
    row = q.locator(f'#proposals tr[data-change="{change}"]')
    await expect(row).to_contain_text("suspend table T01 boxes 3")
    await expect(row).to_contain_text("it moves no meter")
    await row.get_by_role("button", name=f"Approve {change}").click()
    # Every approval is confirmed in a dialog that repeats what the change does.
    await expect(q.locator("#approve-what")).to_contain_text("suspend table T01 boxes 3")
    await q.click("#approve-confirm")
    await expect(q.locator("#approve-result")).to_contain_text(f"{change} approved")
    await q.click("#approve-cancel")
    await sue.view("floor")
    suspended = q.locator('#suspensions tr[data-where="table T01 box 3"]')
    await expect(suspended).to_contain_text("box 3 sensor fault")
    await expect(suspended).to_contain_text("sam")
    await expect(suspended.locator("time")).to_have_count(1)  # since: a time, as elsewhere
    await expect(q.locator("#in-play-summary")).to_have_text(
        "Progressive not in play: table T01 box 3."
    )
    await q.locator("#in-play").scroll_into_view_if_needed()
    await sue.shot("in-play")
    with api(server, SAM) as client:
        status = client.get("/v1/tables/T01/status").json()
    assert (status["in_play"], status["suspended_boxes"]) == (True, [3])

    def answer(dialog: Dialog) -> None:
        asyncio.ensure_future(dialog.accept("sensor replaced"))

    q.once("dialog", answer)
    await suspended.get_by_role("button", name="Resume").click()
    await expect(q.locator("#in-play-result")).to_contain_text("Proposed as change-")
    resume = (await q.locator("#in-play-result").text_content() or "").split()[2].rstrip(":")
    with api(server, SAM) as client:
        assert client.post(f"/v1/changes/{resume}/approve").status_code == 200
    await expect(p.locator("#in-play-summary")).to_have_text("Everything is in play.")
    await expect(q.locator("#suspensions tbody tr")).to_have_count(0)
    assert sam.errors == [] and sue.errors == []
