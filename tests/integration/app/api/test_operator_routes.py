"""Operators: the role matrix, seeds, resets, corrections, dual control, the audit log."""

from __future__ import annotations

import hashlib
from decimal import Decimal

import httpx
import pytest

from app.store.journal import MemoryJournal
from tests.integration.app.support import (
    final_royal_flush,
    make_client,
    royal_flush_then_correction,
)
from tests.support import Clock, bets_body

TABLE = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}

# Every operator endpoint: (method, path, body)
ENDPOINTS = [
    ("GET", "/v1/links/stud/meters/major", None, "operator"),
    (
        "PUT",
        "/v1/links/stud/meters/major/seed",
        {"seed": "12000.00", "reason": "promo"},
        "supervisor",
    ),
    (
        "POST",
        "/v1/links/stud/meters/major/reset",
        {"reason": "hand pay", "reason_code": "jackpot_paid"},
        "supervisor",
    ),
    (
        "POST",
        "/v1/links/stud/meters/major/corrections",
        {"kind": "adjust", "amount": "1.00", "reason": "x"},
        "supervisor",
    ),
    ("GET", "/v1/awards", None, "operator"),
    ("GET", "/v1/audit", None, "operator"),
    ("GET", "/v1/changes", None, "operator"),
    ("GET", "/v1/journal/head", None, "operator"),
]


@pytest.mark.parametrize(("method", "path", "body", "role"), ENDPOINTS)
async def test_role_matrix(
    client: httpx.AsyncClient, method: str, path: str, body: object, role: str
) -> None:
    expected = {
        None: 401,
        "table": 403,
        "operator": 200 if role == "operator" else 403,
        "supervisor": 200,
    }
    for who, headers in ((None, {}), ("table", TABLE), ("operator", OPERATOR), ("supervisor", SAM)):
        r = await client.request(method, path, json=body, headers=headers)
        assert r.status_code == expected[who], (who, r.text)


async def test_seed_change_then_win_then_new_seed_in_place(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.put(
        "/v1/links/stud/meters/major/seed",
        json={"seed": "15000.00", "reason": "promo"},
        headers=SAM,
    )
    assert r.json()["effective"] == "at the next reset"
    view = await final_royal_flush(client, clock)
    assert view["awards"][0]["amount"] == "10000.25"
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["seed"], meter["next_seed"]) == ("15000.00", "15000.00", None)
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert [a["action"] for a in audit] == ["seed"]  # exactly once
    assert audit[0]["before"]["seed"] == "10000.00" and audit[0]["after"]["seed"] == "15000.00"
    assert audit[0]["who"] == "sam" and audit[0]["reason"] == "promo"


async def test_reason_is_required(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/links/stud/meters/major/reset", json={}, headers=SAM)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][-1] == "reason"


async def test_hand_paid_jackpot_is_recorded_and_the_meter_follows(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    body = {
        "kind": "hand_paid",
        "amount": "10000.00",
        "reason": "paid by hand while down (5.18.1)",
        "reason_code": "jackpot_paid",
    }
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=SAM)
    assert r.status_code == 200, r.text
    assert (r.json()["value_before"], r.json()["value_after"]) == ("10000.00", "10000.00")
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert audit[-1]["action"] == "correct:hand_paid" and audit[-1]["amount"] == "10000.00"


async def test_correction_cannot_take_the_meter_below_zero(client: httpx.AsyncClient) -> None:
    body = {"kind": "adjust", "amount": "-20000.00", "reason": "typo", "reason_code": "malfunction"}
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=SAM)
    assert r.status_code == 422
    assert (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []


async def test_void_of_a_round_with_a_final_award_is_a_correction(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await final_royal_flush(client, clock)
    r = await client.post("/v1/tables/T02/rounds/R1/void", json={"reason": "5.8.1"}, headers=T02)
    assert r.status_code == 409
    body = {
        "kind": "void_round",
        "table": "T02",
        "round": "R1",
        "reason": "foreign card found later",
        "reason_code": "error_correction",
    }
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=SAM)
    assert r.status_code == 200, r.text
    rnd = (await client.get("/v1/tables/T02/rounds/R1", headers=OPERATOR)).json()
    assert rnd["state"] == "void" and rnd["awards"][0]["amount"] == "10000.25"  # paid stands


async def test_dual_control_needs_a_different_supervisor(dual: httpx.AsyncClient) -> None:
    r = await dual.put(
        "/v1/links/stud/meters/major/seed",
        json={"seed": "20000.00", "reason": "promo"},
        headers=SAM,
    )
    assert r.status_code == 202
    change = r.json()["id"]
    meter = (await dual.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["next_seed"] is None  # only a proposal
    assert (await dual.post(f"/v1/changes/{change}/approve", headers=SAM)).status_code == 409
    assert (await dual.post(f"/v1/changes/{change}/approve", headers=OPERATOR)).status_code == 403
    r = await dual.post(f"/v1/changes/{change}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    meter = (await dual.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["next_seed"] == "20000.00"
    audit = (await dual.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert [a["action"] for a in audit] == ["propose:seed", "seed"]
    assert audit[1]["who"] == "sam" and audit[1]["approved_by"] == "sue"
    assert (await dual.post(f"/v1/changes/{change}/approve", headers=SUE)).status_code == 409


async def test_dual_control_reject(dual: httpx.AsyncClient) -> None:
    body = {"reason": "test", "reason_code": "malfunction"}
    r = await dual.post("/v1/links/stud/meters/major/reset", json=body, headers=SUE)
    change = r.json()["id"]
    r = await dual.post(f"/v1/changes/{change}/reject", json={"reason": "no"}, headers=SAM)
    assert r.status_code == 200 and r.json()["state"] == "rejected"
    meter = (await dual.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert Decimal(meter["value"]) == Decimal("10000.00")


async def test_audit_time_filter_bad_time_is_422(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/audit?from=yesterday", headers=OPERATOR)
    assert r.status_code == 422


async def test_reconciliation_report_balances_and_downloads_as_csv(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.at()
    await royal_flush_then_correction(client, clock, SAM)
    clock.now += 1
    report = (
        await client.get(
            f"/v1/reports/reconciliation?from={start}&to={clock.at(1)}", headers=OPERATOR
        )
    ).json()
    stud = next(r for r in report["meters"] if r["link"] == "stud")
    assert stud["balanced"] is True
    assert stud["awards"] == "10000.25" and stud["corrections"] == "-0.07"
    assert stud["exact"]["awards"] == "10000.250000" and stud["exact"]["corrections"] == "-0.070000"
    assert stud["opening_value"] == "10000.00"
    # 10000 + 0.25 - 10000.25 + 0.05 (reserve funds the seed first) + 9999.95 (house) - 0.07
    assert (stud["seed_from_reserve"], stud["seed_from_house"]) == ("0.05", "9999.95")
    assert stud["closing_value"] == "9999.93"
    assert report["journal"]["seq"] > 0
    csv = await client.get("/v1/reports/reconciliation?format=csv", headers=OPERATOR)
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.text.splitlines()[0].startswith("link,meter,opening_value")
    awards = await client.get("/v1/awards?format=csv", headers=OPERATOR)
    assert len(awards.text.splitlines()) == 2


async def test_journal_head_is_the_chain_recomputed_from_the_stored_entries(
    clock: Clock,
) -> None:
    """The head hash and entry count, as anyone recomputes them from the entries
    (docs/journal.md: hash = sha256(previous hash || canonical entry), genesis 64 zeros)."""
    journal = MemoryJournal()
    async for c in make_client(clock, dual=False, journal=journal):
        first = (await c.get("/v1/journal/head", headers=OPERATOR)).json()
        # The parameters recorded at start are entry 1 (docs/journal.md `config`), the
        # first draw of the demo floor's must-hit-by level entry 2 (`arm`).
        assert (first["seq"], first["entries"]) == (2, 2)
        for n in range(3):
            body = bets_body(clock, (1, "10.00", "1.00"))
            r = await c.post(f"/v1/tables/T01/rounds/R{n}/bets", json=body, headers=TABLE)
            assert r.status_code == 200
        seed = {"seed": "12000.00", "reason": "promo"}
        assert (await c.put("/v1/links/stud/meters/major/seed", json=seed, headers=SAM)).is_success
        head = (await c.get("/v1/journal/head", headers=OPERATOR)).json()
        rows = [row async for row in journal.read(0)]
        chain = "0" * 64
        for row in rows:
            chain = hashlib.sha256((chain + row.entry).encode()).hexdigest()
        assert head == {"seq": len(rows), "entries": len(rows), "head": chain}
        assert len(rows) >= 4
        report = (await c.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
        assert report["journal"] == head


CHANGES = [
    ("PUT", "/v1/links/stud/meters/major/seed"),
    ("POST", "/v1/links/stud/meters/major/reset"),
    ("POST", "/v1/links/stud/meters/major/corrections"),
    ("POST", "/v1/changes/C1/reject"),
    ("POST", "/v1/changes/C1/approve"),
]


@pytest.mark.parametrize(("method", "path"), CHANGES)
@pytest.mark.parametrize("body", [b"{}", b"not json"])
async def test_an_operator_change_asks_for_the_token_before_the_body(
    client: httpx.AsyncClient, method: str, path: str, body: bytes
) -> None:
    """docs/api.md "Conventions", Auth: 401 without a valid token, 403 without the supervisor
    role, before the body is read (422 naming the missing fields only for a supervisor)."""
    json_type = {"Content-Type": "application/json"}
    for headers, status in (({}, 401), (TABLE, 403), (OPERATOR, 403)):
        r = await client.request(method, path, content=body, headers={**json_type, **headers})
        assert r.status_code == status, (headers, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert "errors" not in r.json()
    r = await client.request(method, path, content=body, headers={**json_type, **SAM})
    assert r.status_code in (404, 422), r.text  # approve reads no body: C1 is unknown
    if method != "POST" or not path.endswith("approve"):
        assert r.status_code == 422 and r.json()["errors"][0]["loc"][0] == "body"


# The floor file's bound on a seed (app/floor.py: a ceiling below the seed is refused):
# 0 <= seed <= ceiling. The operator API applies the same one (docs/design.md "Vocabulary",
# "ceiling": beyond it contributions go to the reserve; a reset never goes beyond it).
async def test_a_seed_above_the_ceiling_is_refused_and_records_nothing(
    client: httpx.AsyncClient,
) -> None:
    r = await client.put(
        "/v1/links/stud/meters/major/seed",
        json={"seed": "2000000.01", "reason": "above the ceiling"},
        headers=SAM,
    )
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"][0]["loc"] == ["body", "seed"]
    assert "2000000.00" in r.json()["detail"] and "ceiling" in r.json()["detail"]
    assert (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["next_seed"] is None
    for seed in ("2000000.00", "0"):  # the bounds themselves, as in the floor file
        r = await client.put(
            "/v1/links/stud/meters/major/seed", json={"seed": seed, "reason": "edge"}, headers=SAM
        )
        assert r.status_code == 200, r.text
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert [a["after"]["seed"] for a in audit] == ["2000000.00", "0.00"]
    body = {"reason": "r", "reason_code": "regulator_order"}
    await client.post("/v1/links/stud/meters/major/reset", json=body, headers=SAM)
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["next_seed"]) == ("0.00", "0.00")  # reset pending


async def test_dual_control_refuses_a_seed_above_the_ceiling_at_proposal(
    dual: httpx.AsyncClient,
) -> None:
    r = await dual.put(
        "/v1/links/stud/meters/major/seed",
        json={"seed": "2500000.00", "reason": "above the ceiling"},
        headers=SAM,
    )
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == ["body", "seed"]
    assert (await dual.get("/v1/changes", headers=OPERATOR)).json()["changes"] == []
    assert (await dual.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []


async def test_an_adjustment_cannot_take_the_meter_above_its_ceiling(
    client: httpx.AsyncClient,
) -> None:
    body = {"kind": "adjust", "amount": "1990000.01", "reason": "typo"}
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=SAM)
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == ["body", "amount"]
    assert "2000000.00" in r.json()["detail"] and "ceiling" in r.json()["detail"]
    assert (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []
    body["amount"] = "1990000.00"  # up to the ceiling itself
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=SAM)
    assert r.status_code == 200 and r.json()["value_after"] == "2000000.00", r.text


async def test_dual_control_checks_an_adjustment_at_proposal_and_again_at_approval(
    dual: httpx.AsyncClient,
) -> None:
    too_much = {"kind": "adjust", "amount": "1990000.01", "reason": "typo"}
    r = await dual.post("/v1/links/stud/meters/major/corrections", json=too_much, headers=SAM)
    assert r.status_code == 422, r.text
    assert (await dual.get("/v1/changes", headers=OPERATOR)).json()["changes"] == []
    # Each fits alone; once the first is approved, the second would pass the ceiling.
    half = {"kind": "adjust", "amount": "1000000.00", "reason": "two halves"}
    ids = []
    for _ in range(2):
        r = await dual.post("/v1/links/stud/meters/major/corrections", json=half, headers=SAM)
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    assert (await dual.post(f"/v1/changes/{ids[0]}/approve", headers=SUE)).status_code == 200
    r = await dual.post(f"/v1/changes/{ids[1]}/approve", headers=SUE)
    assert r.status_code == 422 and "ceiling" in r.json()["detail"], r.text
    meter = (await dual.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert meter["value"] == "1010000.00"
    changes = (await dual.get("/v1/changes", headers=OPERATOR)).json()["changes"]
    assert [c["state"] for c in changes] == ["approved", "proposed"]
