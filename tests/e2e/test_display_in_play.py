"""The display page says when the progressive is not in play (rules 5.17, 5.18.2 c), in
a real headless Chromium; screenshots kept with the run's artifacts."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.e2e.test_display_page import (  # the page's fixtures and markers
    AMOUNT,
    ARTIFACTS,
    Floor,
    floor,  # noqa: F401
    page,  # noqa: F401
    pytestmark,  # noqa: F401
    shows,
)

NOT_IN_PLAY = "#not-in-play"


async def test_the_page_names_the_tables_then_says_the_link_is_not_in_play_rule_5_18_2(
    floor: Floor,  # noqa: F811
    page: Page,  # noqa: F811
) -> None:
    p = page
    banner = p.locator(NOT_IN_PLAY)
    await p.goto(floor.base + "/display/stud")
    await shows(p, AMOUNT, "10,000.00")
    await expect(banner).to_be_hidden()

    since = "2027-01-15T08:00:00.000Z"
    floor.broadcaster.in_play(
        "stud",
        {"in_play": True, "reason": "sensor fault", "since": since,
         "tables": [{"table": "T01", "boxes": [3]}, {"table": "T02", "boxes": None}]},
    )  # fmt: skip
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("PROGRESSIVE NOT IN PLAY: table T01 box 3; table T02")
    await expect(banner).to_contain_text("sensor fault")
    ARTIFACTS.mkdir(exist_ok=True)
    await p.screenshot(path=str(ARTIFACTS / "display-tables-not-in-play.png"))

    floor.broadcaster.in_play(
        "stud", {"in_play": False, "reason": "controller fault", "since": since, "tables": []}
    )
    await shows(p, f"{NOT_IN_PLAY} .not-in-play-title", "PROGRESSIVE NOT IN PLAY")
    await expect(banner).to_contain_text("controller fault")
    await p.screenshot(path=str(ARTIFACTS / "display-not-in-play.png"))

    # A screen that connects now is told by its snapshot.
    fresh = await p.context.new_page()
    await fresh.goto(floor.base + "/display/stud")
    await shows(fresh, f"{NOT_IN_PLAY} .not-in-play-title", "PROGRESSIVE NOT IN PLAY")
    await fresh.close()

    floor.broadcaster.in_play(
        "stud", {"in_play": True, "reason": None, "since": None, "tables": []}
    )
    await expect(banner).to_be_hidden()
    await expect(p.locator("#banner-down")).to_be_hidden()
