"""Payments: a supervisor pays a final award (its amount, once), a second operator
witnesses one above `witness_above`, a table records what its dealer paid from the rack.

Amounts are the rules' pay tables for a 1.00 wager at Three Card Poker: straight flush
175 and three of a kind 150 (4.4), envy bonus 250 for A K Q of spades (4.7); the meter
award is 100 % of the tcp meter (4.5).
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from app.audit.payment_report import PAYMENT_COLUMNS
from app.compose import WriterProcess
from app.config.floor_file import parse_floor
from app.store.journal import MemoryJournal
from tests.integration.app.support import build_server, running
from tests.support import DEMO, OPERATOR, SUPERVISOR, Clock, bets_body, replayed

T01 = {"Authorization": "Bearer demo-table-T01"}
T03 = {"Authorization": "Bearer demo-table-T03"}
T05 = {"Authorization": "Bearer demo-table-T05"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
METER = "T03/R1/1/player"
STRAIGHT_FLUSH = "T03/R1/2/player/fixed"
TRIPS = "T03/R1/3/player/fixed"
ENVY_2, ENVY_3 = "T03/R1/2/player/envy/1", "T03/R1/3/player/envy/1"


@pytest.fixture
def journal() -> MemoryJournal:
    return MemoryJournal()


@pytest.fixture
def server(clock: Clock, journal: MemoryJournal) -> WriterProcess:
    settings = 'dual_control = false\nwitness_above = "1000.00"\npay_within_ms = 60000'
    text = Path(DEMO).read_text().replace("dual_control = false", settings)
    return build_server(parse_floor(text), journal=journal, clock=clock, outcome_wait_s=0.2)


@pytest.fixture
async def client(server: WriterProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with running(server.app) as c:
        yield c


async def play(client: httpx.AsyncClient, clock: Clock, *, final: bool = True) -> None:
    """A Three Card Poker round: A K Q of spades at box 1 (the meter, and an envy bonus
    to boxes 2 and 3), a straight flush at box 2, three of a kind at box 3."""
    bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"), (3, "10.00", "1.00"))
    r = await client.post("/v1/tables/T03/rounds/R1/bets", json=bets, headers=T03)
    assert r.status_code in (200, 201), r.text
    outcome = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(10), "cards": ["AS", "KS", "QS"]},
            {"box": 2, "dealt_at": clock.at(20), "cards": ["2H", "3H", "4H"]},
            {"box": 3, "dealt_at": clock.at(30), "cards": ["5D", "5C", "5H"]},
        ]
    }
    r = await client.post("/v1/tables/T03/rounds/R1/outcome", json=outcome, headers=T03)
    assert r.status_code in (200, 201), r.text
    if final:
        clock.now += 5_000
        r = await client.get("/v1/tables/T03/rounds/R1?wait=10", headers=T03)
        assert not r.json()["pending"]


async def pay(
    client: httpx.AsyncClient,
    award: str,
    amount: str,
    headers: dict[str, str] = SUPERVISOR,
    method: str = "cash",
) -> httpx.Response:
    body = {"amount": amount, "method": method, "reference": "R-77", "note": "at the cage"}
    return await client.post(f"/v1/awards/{award}/paid", json=body, headers=headers)


async def listed(client: httpx.AsyncClient, **query: str) -> dict[str, dict[str, Any]]:
    r = await client.get("/v1/awards", params=query, headers=OPERATOR)
    assert r.status_code == 200, r.text
    return {a["id"]: a for a in r.json()["awards"]}


async def test_a_supervisor_pays_a_final_award_once(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    r = await pay(client, TRIPS, "150.00")
    assert r.status_code == 200, r.text
    payment = r.json()
    assert payment["id"] == f"payment-{payment['seq']}"  # named by its journal entry
    assert (payment["state"], payment["amount"], payment["method"]) == ("paid", "150.00", "cash")
    assert (payment["paid_by"], payment["witness"], payment["needs_witness"]) == (
        "sam",
        None,
        False,
    )
    assert payment["paid_at"] == clock.at()
    row = (await listed(client))[TRIPS]
    assert (row["state"], row["paid_at"], row["method"], row["paid_by"], row["witness"]) == (
        "paid", clock.at(), "cash", "sam", None,
    )  # fmt: skip
    # Paid once: the second payment is refused, naming the first.
    again = await pay(client, TRIPS, "150.00", headers=SUE)
    assert again.status_code == 409, again.text
    assert payment["id"] in again.json()["detail"] and "sam" in again.json()["detail"]
    audit = (await client.get("/v1/audit?action=paid", headers=OPERATOR)).json()["audit"]
    assert [(a["who"], a["action"]) for a in audit] == [("sam", "paid")]


async def test_the_unpaid_liability_is_the_final_awards_not_paid(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    assert set(await listed(client, state="final")) == {
        METER,
        STRAIGHT_FLUSH,
        TRIPS,
        ENVY_2,
        ENVY_3,
    }
    assert (await pay(client, TRIPS, "150.00")).status_code == 200
    assert set(await listed(client, state="final")) == {METER, STRAIGHT_FLUSH, ENVY_2, ENVY_3}
    assert set(await listed(client, state="paid")) == {TRIPS}
    text = (await client.get("/metrics")).text
    assert "jackpot_awards_unpaid 4.0" in text
    # 5000.60 + 175 + 250 + 250
    assert "jackpot_awards_unpaid_amount 5675.6" in text
    assert "jackpot_awards_unpaid_overdue 0.0" in text
    # pay_within_ms after the deal, the four are overdue (the alert JackpotAwardUnpaid).
    clock.now += 60_000
    text = (await client.get("/metrics")).text
    assert "jackpot_awards_unpaid_overdue 4.0" in text


async def test_a_wrong_amount_is_refused_naming_both(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    r = await pay(client, TRIPS, "1500.00")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert "1500.00" in detail and "150.00" in detail
    assert r.json()["errors"][0]["loc"] == ["body", "amount"]
    assert (await listed(client))[TRIPS]["state"] == "final"


async def test_pending_and_void_awards_cannot_be_paid(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock, final=False)
    r = await pay(client, METER, "5000.60")
    assert r.status_code == 409 and "pending" in r.json()["detail"], r.text
    void = {"reason": "5.8.1", "boxes": [2]}
    assert (await client.post("/v1/tables/T03/rounds/R1/void", json=void, headers=T03)).is_success
    r = await pay(client, STRAIGHT_FLUSH, "175.00")
    assert r.status_code == 409 and "void" in r.json()["detail"], r.text
    r = await pay(client, "T03/R9/1/player/fixed", "175.00")
    assert r.status_code == 404, r.text


async def test_only_a_supervisor_pays_and_bad_bodies_are_422(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    assert (await pay(client, TRIPS, "150.00", headers=OPERATOR)).status_code == 403
    assert (await pay(client, TRIPS, "150.00", headers=T03)).status_code == 403
    r = await client.post(f"/v1/awards/{TRIPS}/paid", json={"amount": "150.00"})
    assert r.status_code == 401
    for body, field in (
        ({"amount": "150.00", "method": "bitcoin"}, "method"),
        ({"amount": 150, "method": "cash"}, "amount"),
        ({"amount": "150.00", "method": "cash", "tip": "1"}, "tip"),
    ):
        r = await client.post(f"/v1/awards/{TRIPS}/paid", json=body, headers=SUPERVISOR)
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["loc"] == ["body", field]
    assert (await listed(client))[TRIPS]["state"] == "final"


async def test_above_witness_above_a_second_operator_witnesses(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    r = await pay(client, METER, "5000.60", method="cheque")
    assert r.status_code == 200, r.text
    assert (r.json()["state"], r.json()["needs_witness"], r.json()["paid_at"]) == (
        "awaiting_witness", True, None,
    )  # fmt: skip
    # Not yet paid: still the casino's liability.
    assert (await listed(client))[METER]["state"] == "final"
    own = await client.post(f"/v1/awards/{METER}/paid/confirm", headers=SUPERVISOR)
    assert own.status_code == 403, own.text
    clock.now += 1_000
    r = await client.post(f"/v1/awards/{METER}/paid/confirm", headers=OPERATOR)
    assert r.status_code == 200, r.text
    assert (r.json()["state"], r.json()["witness"], r.json()["paid_at"]) == (
        "paid", "olivia", clock.at(),
    )  # fmt: skip
    row = (await listed(client))[METER]
    assert (row["state"], row["paid_by"], row["witness"]) == ("paid", "sam", "olivia")
    again = await client.post(f"/v1/awards/{METER}/paid/confirm", headers=SUE)
    assert again.status_code == 409, again.text
    # Below witness_above the payer alone suffices: nothing to witness.
    assert (await pay(client, TRIPS, "150.00")).json()["state"] == "paid"
    r = await client.post(f"/v1/awards/{TRIPS}/paid/confirm", headers=OPERATOR)
    assert r.status_code == 409, r.text


async def test_a_table_pays_the_fixed_awards_of_its_own_round(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    path = "/v1/tables/T03/rounds/R1/paid"
    other = await client.post(path, json={"boxes": [2]}, headers=T01)
    assert other.status_code == 403, other.text
    meter = await client.post(path, json={"boxes": [1]}, headers=T03)
    assert meter.status_code == 409 and METER in meter.json()["detail"], meter.text
    r = await client.post(path, json={"boxes": [2, 3]}, headers=T03)
    assert r.status_code == 200, r.text
    paid = {p["award"]: (p["method"], p["paid_by"], p["amount"]) for p in r.json()["paid"]}
    assert paid == {
        STRAIGHT_FLUSH: ("table", "T03", "175.00"),
        ENVY_2: ("table", "T03", "250.00"),
        TRIPS: ("table", "T03", "150.00"),
        ENVY_3: ("table", "T03", "250.00"),
    }
    # A retry gets the first answer; another body for the round is a conflict.
    retry = await client.post(path, json={"boxes": [2, 3]}, headers=T03)
    assert (retry.status_code, retry.json()) == (200, r.json())
    assert (await client.post(path, json={"boxes": [2]}, headers=T03)).status_code == 409
    assert set(await listed(client, state="final")) == {METER}
    # A supervisor cannot pay them again.
    assert (await pay(client, ENVY_2, "250.00")).status_code == 409
    bad = await client.post(path, json={"boxes": [0]}, headers=T03)
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"][:2] == ["body", "boxes"]


async def test_the_slip_names_the_journal_entries(
    client: httpx.AsyncClient, clock: Clock, journal: MemoryJournal, server: WriterProcess
) -> None:
    await play(client, clock)
    await pay(client, METER, "5000.60")
    await client.post(f"/v1/awards/{METER}/paid/confirm", headers=OPERATOR)
    r = await client.get(f"/v1/awards/{METER}/slip", headers=OPERATOR)
    assert r.status_code == 200, r.text
    slip = r.json()
    rows = {row.seq: row async for row in journal.read(0)}
    assert [(e["seq"], rows[e["seq"]].kind, e["hash"]) for e in slip["journal"]] == [
        (slip["payment"]["seq"], "paid", rows[slip["payment"]["seq"]].hash),
        (slip["payment"]["confirm_seq"], "paid_confirm", rows[slip["payment"]["confirm_seq"]].hash),
    ]
    award = slip["award"]
    assert (award["table"], award["box"], award["hand"], award["amount"]) == (
        "T03", 1, "akq_spades", "5000.60",
    )  # fmt: skip
    missing = await client.get(f"/v1/awards/{TRIPS}/slip", headers=OPERATOR)
    assert missing.status_code == 404
    # The journal alone gives the same payments, each naming its entry's seq.
    assert replayed(list(rows.values())).payments == server.writer.service.payments


async def test_the_reconciliation_ties_payments_to_the_awards(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.at()
    # A River bet at T05, a table with no link: flush, 2 to 1 of 5.00 (western-stud).
    bets = bets_body(clock, (1, "10.00", "5.00"))
    assert (await client.post("/v1/tables/T05/rounds/W1/bets", json=bets, headers=T05)).is_success
    river = {
        "boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": ["2D", "7D", "9D", "JD", "KD"]}]
    }
    r = await client.post("/v1/tables/T05/rounds/W1/outcome", json=river, headers=T05)
    assert r.is_success, r.text
    await play(client, clock)
    # At the table: box 2's straight flush 175 and envy 250; by an attendant: the meter
    # award 5000.60 (witnessed); unpaid at the end: box 3's three of a kind 150, envy 250.
    r = await client.post("/v1/tables/T03/rounds/R1/paid", json={"boxes": [2]}, headers=T03)
    assert r.status_code == 200, r.text
    assert (await pay(client, METER, "5000.60")).status_code == 200
    assert (await client.post(f"/v1/awards/{METER}/paid/confirm", headers=OPERATOR)).is_success
    period = {"from": start, "to": clock.at(1)}
    r = await client.get("/v1/reports/reconciliation", params=period, headers=OPERATOR)
    assert r.status_code == 200, r.text
    report = r.json()
    assert {k: v for k, v in report["payments"].items() if k != "links"} == {
        "awards_paid_at_table": "425.00",
        "awards_paid_by_attendant": "5000.60",
        "awards_unpaid": "410.00",
    }
    assert report["payments"]["links"] == [
        {"link": None, "awards_paid_at_table": "0.00", "awards_paid_by_attendant": "0.00",
         "awards_unpaid": "10.00"},
        {"link": "tcp", "awards_paid_at_table": "425.00", "awards_paid_by_attendant": "5000.60",
         "awards_unpaid": "400.00"},
    ]  # fmt: skip
    tcp = next(m for m in report["meters"] if m["link"] == "tcp")
    assert (tcp["awards_paid_at_table"], tcp["awards_paid_by_attendant"], tcp["awards_unpaid"]) == (
        "0.00", "5000.60", "0.00",
    )  # fmt: skip
    assert tcp["balanced"] is True
    # Before the payments (and the meter award's finalize): the fixed awards are unpaid.
    early = {"from": start, "to": clock.at(-1)}
    r = await client.get("/v1/reports/reconciliation", params=early, headers=OPERATOR)
    assert r.json()["payments"]["awards_unpaid"] == "835.00"
    csv = await client.get(
        "/v1/reports/reconciliation", params={**period, "format": "csv"}, headers=OPERATOR
    )
    header = csv.text.splitlines()[0].split(",")
    # then the four transfers' columns, added after them
    assert header[-len(PAYMENT_COLUMNS) - 4 : -4] == list(PAYMENT_COLUMNS)


async def test_the_awards_exports_keep_the_state_filter_and_the_payment_columns(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await play(client, clock)
    assert (await pay(client, TRIPS, "150.00")).status_code == 200
    query = {"state": "paid", "format": "csv"}
    r = await client.get("/v1/awards", params=query, headers=OPERATOR)
    assert r.status_code == 200, r.text
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [(a["id"], a["state"], a["amount"], a["method"], a["paid_by"]) for a in rows] == [
        (TRIPS, "paid", "150.00", "cash", "sam")
    ]
    assert r.headers["x-total-count"] == "1"
    r = await client.get(
        "/v1/awards", params={"state": "final", "format": "jsonl"}, headers=OPERATOR
    )
    assert r.status_code == 200, r.text
    lines = [orjson.loads(line) for line in r.text.splitlines()]
    assert {a["id"] for a in lines} == {METER, STRAIGHT_FLUSH, ENVY_2, ENVY_3}
    assert r.headers["x-total-count"] == "4"
