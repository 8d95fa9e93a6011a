"""The report per table and per property: independent counts, and sums that are the
reconciliation's to the micro-unit."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from app.config.floor_file import parse_floor
from tests.integration.app.support import build_server, final_royal_flush, running
from tests.support import DEMO, OPERATOR, Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T03 = {"Authorization": "Bearer demo-table-T03"}


def floor_with_properties() -> Any:
    text = Path(DEMO).read_text()
    for table, place in (("T01", "north"), ("T02", "north"), ("T03", "south")):
        text = text.replace(f'id = "{table}"\n', f'id = "{table}"\nproperty = "{place}"\n')
    return parse_floor(text)


async def test_per_table_sums_tie_to_the_reconciliation() -> None:
    clock = Clock()
    server = build_server(floor_with_properties(), clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as c:
        boxes = ((1, "10.00", "1.00"), (2, "10.00", "1.00"), (3, "0", "1.00"))
        await c.post("/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, *boxes), headers=T01)
        await c.post(
            "/v1/tables/T01/rounds/R1/void", json={"reason": "misdeal", "boxes": [2]}, headers=T01
        )
        four = {"box": 1, "dealt_at": clock.at(5), "cards": ["2H", "2D", "2S", "2C", "9H"]}
        r = await c.post("/v1/tables/T01/rounds/R1/outcome", json={"boxes": [four]}, headers=T01)
        assert r.status_code == 200, r.text
        tcp = bets_body(clock, (1, "5.00", "1.00"))
        await c.post("/v1/tables/T03/rounds/R1/bets", json=tcp, headers=T03)
        await final_royal_flush(c, clock)  # T02/R1, box 1
        report = (await c.get("/v1/reports/tables", headers=OPERATOR)).json()
        reconciliation = (await c.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
        csv = (await c.get("/v1/reports/tables?format=csv&link=tcp", headers=OPERATOR)).text
    rows = {t["table"]: t for t in report["tables"]}
    t01, t02, t03 = rows["T01"], rows["T02"], rows["T03"]
    # Counted independently: T01 one round, two wagers of 1.00 accepted, one returned
    # (no ante, 5.4), a four of a kind fixed award (casino_stud: 500 to 1 of 1.00).
    assert (t01["rounds"], t01["wagers"], t01["wagered"], t01["wagers_returned"]) == (
        1, 2, "2.00", 1
    )  # fmt: skip
    assert (t01["fixed_awards"], t01["fixed_amount"]) == (1, "500.00")
    assert (t01["reversed_meter"], t01["reversed_reserve"]) == ("0.25", "0.05")
    # 10000.00 + 0.50 from T01, less its voided box's 0.25, + T02's own 0.25 (4.5.1)
    assert (t02["meter_awards"], t02["meter_awarded"]) == (1, "10000.50")
    assert (t01["property"], t03["property"]) == ("north", "south")
    # The tables' sums are the reconciliation's, per link, to the micro-unit.
    for link in ("stud", "tcp"):
        (row,) = [m for m in reconciliation["meters"] if m["link"] == link]
        ours = [t for t in report["tables"] if t["link"] == link]
        for table_flow, meter_flow in (
            ("contributions_meter", "contributions_meter"),
            ("contributions_reserve", "contributions_reserve"),
            ("reversed_meter", "reversed_meter"),
            ("reversed_reserve", "reversed_reserve"),
            ("meter_awarded", "awards"),
        ):
            total = sum(Decimal(t["exact"][table_flow]) for t in ours)
            assert total == Decimal(row["exact"][meter_flow]), (link, table_flow)
        assert sum(t["meter_awards"] for t in ours) == row["hits"]
        assert sum(t["wagers"] for t in ours) == row["wagers"]
    # Rolled up per property.
    north = next(p for p in report["properties"] if p["property"] == "north")
    assert north["tables"] == 2 and north["wagers"] == t01["wagers"] + t02["wagers"]
    assert Decimal(north["exact"]["contributions_meter"]) == Decimal(
        t01["exact"]["contributions_meter"]
    ) + Decimal(t02["exact"]["contributions_meter"])
    lines = csv.splitlines()
    assert lines[0].startswith("table,property,link,rounds,wagers,wagered")
    assert [line.split(",")[0] for line in lines[1:]] == ["T03"]  # ?link=tcp
