"""The floor view's `gaming_day` (docs/api.md "The console's routes"): the floor's time
zone, its gaming day's start and shifts, and the report presets at the server's `now`
(the demo floor: Asia/Singapore, 06:00, shifts at 06:00, 14:00 and 22:00)."""

from __future__ import annotations

from app.state.timefmt import format_time
from tests.integration.app.support import build_server, running
from tests.support import OPERATOR, Clock


async def test_the_floor_view_gives_todays_yesterdays_and_the_shifts_periods() -> None:
    clock = Clock()  # 2027-01-15T08:00:00Z: 16:00 in Singapore
    assert format_time(clock.now) == "2027-01-15T08:00:00.000Z"
    async with running(build_server(clock=clock).app) as client:
        r = await client.get("/v1/floor", headers=OPERATOR)
    assert r.status_code == 200, r.text
    day = r.json()["gaming_day"]
    assert (day["time_zone"], day["start"], day["shifts"]) == (
        "Asia/Singapore",
        "06:00",
        ["06:00", "14:00", "22:00"],
    )
    assert {p["name"]: (p["from"], p["to"]) for p in day["presets"]} == {
        "today": ("2027-01-14T22:00:00.000Z", "2027-01-15T22:00:00.000Z"),
        "yesterday": ("2027-01-13T22:00:00.000Z", "2027-01-14T22:00:00.000Z"),
        "shift": ("2027-01-15T06:00:00.000Z", "2027-01-15T14:00:00.000Z"),
    }
