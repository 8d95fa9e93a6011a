"""The regulator's meters after scripted play: the meter read, the reconciliation, /metrics."""

from __future__ import annotations

import asyncio
import hashlib

import httpx
import pytest

from app.config.floor_file import parse_floor
from app.store.packing import pack
from app.store.snapshots import dump_service
from jackpot.canonical import canonical_json
from jackpot.meter import COUNTERS
from tests.integration.app.support import (
    KeptJournal,
    build_server,
    final_royal_flush,
    running,
    scrape,
    value,
)
from tests.support import OPERATOR, Clock, bets_body, replayed

T01 = {"Authorization": "Bearer demo-table-T01"}


async def play(client: httpx.AsyncClient, clock: Clock) -> None:
    """T01/R1: boxes 1, 2 and 4 wager 1.00, box 3 has no ante (returned, 5.4), box 2 is
    voided, no win. T02/R1: box 1 wagers 1.00 and makes a royal flush, final."""
    boxes = ((1, "10.00", "1.00"), (2, "10.00", "1.00"), (3, "0", "1.00"), (4, "5.00", "1.00"))
    r = await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, *boxes), headers=T01
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        "/v1/tables/T01/rounds/R1/void", json={"reason": "misdeal", "boxes": [2]}, headers=T01
    )
    assert r.status_code == 200, r.text
    hands = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(5), "cards": ["2H", "3D", "5S", "7C", "9H"]},
            {"box": 4, "dealt_at": clock.at(6), "cards": ["4H", "6D", "8S", "TC", "QD"]},
        ]
    }
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=hands, headers=T01)
    assert r.status_code == 200, r.text
    view = await final_royal_flush(client, clock)
    assert view["awards"][0]["state"] == "final"


async def test_the_meter_read_has_the_regulators_meters(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    r = await client.get("/v1/links/stud/meters/major", headers=OPERATOR)
    assert r.status_code == 200, r.text
    meters = r.json()["meters"]
    # Four wagers of 1.00 accepted (box 3's was returned), one voided; at 0.25 and 0.05
    # each: 1.00 to the meter, 0.20 to the reserve, gross of the void.
    assert meters["wagers"] == 4
    assert meters["wagered"] == "4.00"
    assert meters["wagers_voided"] == 1
    assert meters["wagered_voided"] == "1.00"
    assert meters["hits"] == 1
    assert meters["contributions_meter"] == "1.00"
    assert meters["contributions_reserve"] == "0.20"
    assert meters["overflow"] == "0.00"
    # The royal flush took the meter at its instant: 10000.00, four 0.25 before it, less
    # the voided box's 0.25 (4.5.1).
    assert meters["wins"] == "10000.75"
    assert meters["exact"]["contributions_meter"] == "1.000000"


async def test_the_reconciliation_has_them_for_the_period(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    r = await client.get("/v1/reports/reconciliation", headers=OPERATOR)
    assert r.status_code == 200, r.text
    (row,) = [m for m in r.json()["meters"] if m["link"] == "stud"]
    assert (row["wagers"], row["wagered"]) == (4, "4.00")
    assert (row["wagers_voided"], row["wagered_voided"]) == (1, "1.00")
    assert (row["hits"], row["overflow"]) == (1, "0.00")
    assert row["exact"]["wagered"] == "4.000000"
    csv = await client.get("/v1/reports/reconciliation?format=csv", headers=OPERATOR)
    header = csv.text.splitlines()[0].split(",")
    # New columns at the end: the ones before keep their places.
    assert header[18:28] == [
        "balanced", "overflow", "wagers", "wagered", "wagers_voided", "wagered_voided", "hits",
        "overflow_to_house", "overflow_to_meter", "overflow_from_meter",
    ]  # fmt: skip
    (stud,) = [line for line in csv.text.splitlines()[1:] if line.startswith("stud,")]
    assert stud.split(",")[19:28] == ["0.00", "4", "4.00", "1", "1.00", "1", "0.00", "0.00", "0.00"]


async def test_metrics_show_them(client: httpx.AsyncClient, clock: Clock) -> None:
    await play(client, clock)
    samples = await scrape(client)
    labels = {"link": "stud", "meter": "major"}
    assert value(samples, "jackpot_meter_wagers_total", **labels) == 4
    assert value(samples, "jackpot_meter_wagered_total", **labels) == 4.0
    assert value(samples, "jackpot_meter_wagers_voided_total", **labels) == 1
    assert value(samples, "jackpot_meter_hits_total", **labels) == 1
    assert value(samples, "jackpot_meter_overflow_total", **labels) == 0
    assert value(samples, "jackpot_meter_wins_total", **labels) == 10000.75


async def test_a_snapshot_from_before_the_meters_is_not_started_from(clock: Clock) -> None:
    journal = KeptJournal()
    async with running(build_server(journal=journal, clock=clock, outcome_wait_s=0.2).app) as c:
        await play(c, clock)
        before = (await c.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    rows = [row async for row in journal.read(0)]
    # The state at the last entry, as a server stored it before the meters were kept.
    state = dump_service(replayed(rows), rows[-1].seq, rows[-1].hash)
    for link in state["floor"]["links"].values():
        for meter in link["meters"]:
            for name in COUNTERS:
                del meter[name]
    await journal.save_snapshot(rows[-1].seq, 0, pack(canonical_json(state)))
    async with running(build_server(journal=journal, clock=clock).app) as c:
        after = (await c.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
        report = (await c.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
    assert after["meters"] == before["meters"] and after["meters"]["wagers"] == 4
    (row,) = [m for m in report["meters"] if m["link"] == "stud"]
    assert (row["wagers"], row["hits"]) == (4, 1)


OVERFLOW_FLOOR = """
currency = "SGD"
[[links]]
id = "stud"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.25"
  reserve_rate = "0.05"
  ceiling = "10000.30"
  overflow_to = "{to}"
  [[links.meters]]
  id = "minor"
  seed = "100.00"
  rate = "0.10"
  reserve_rate = "0"
[[tables]]
id = "T01"
game = "casino_stud"
link = "stud"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "0a994574b45ee7b0da9cb57305f9dc9268a900c800d693b64fadd5c230c5940f"
pay_table = {{ straight_flush = "minor:1.00" }}
[[operators]]
name = "olivia"
role = "operator"
token_sha256 = "{operator}"
"""


@pytest.mark.parametrize("to", ["reserve", "house", "minor"])
async def test_overflow_goes_where_the_floor_says_and_money_is_conserved(
    clock: Clock, to: str
) -> None:
    operator = hashlib.sha256(b"demo-operator").hexdigest()
    floor = parse_floor(OVERFLOW_FLOOR.format(to=to, operator=operator))
    async with running(build_server(floor, clock=clock).app) as c:
        for n in range(3):  # 0.25 to the major each: 0.25 kept, then 0.05, then none
            body = bets_body(clock, (1, "10.00", "1.00"))
            r = await c.post(f"/v1/tables/T01/rounds/R{n}/bets", json=body, headers=T01)
            assert r.status_code == 200, r.text
            hand = {"box": 1, "dealt_at": clock.at(5), "cards": ["2H", "3D", "5S", "7C", "9H"]}
            r = await c.post(
                f"/v1/tables/T01/rounds/R{n}/outcome", json={"boxes": [hand]}, headers=T01
            )
            assert r.status_code == 200, r.text
            clock.now += 10
        clock.now += 10_000
        for _ in range(100):  # the writer's periodic finalize makes them final
            major = (await c.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
            if major["final_value"] == "10000.30":
                break
            await asyncio.sleep(0.1)
        minor = (await c.get("/v1/links/stud/meters/minor", headers=OPERATOR)).json()
        report = (await c.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
    assert major["value"] == "10000.30"
    assert major["meters"]["overflow"] == "0.45"
    # 3 wagers of 1.00: 0.75 + 0.15 to the major and its reserve, 0.30 to the minor.
    reserve = {"reserve": "0.60", "house": "0.15", "minor": "0.15"}[to]
    assert major["reserve"] == reserve
    assert major["meters"]["overflow_to_house"] == ("0.45" if to == "house" else "0.00")
    assert major["meters"]["overflow_to_meter"] == ("0.45" if to == "minor" else "0.00")
    assert minor["value"] == ("100.75" if to == "minor" else "100.30")
    assert minor["meters"]["overflow_from_meter"] == ("0.45" if to == "minor" else "0.00")
    assert all(row["balanced"] for row in report["meters"])
