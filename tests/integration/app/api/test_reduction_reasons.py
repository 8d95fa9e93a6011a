"""Resets and lowering corrections need a listed reason_code, in the audit and the report."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.state.entries import entry_from_dict, entry_text
from tests.support import OPERATOR

SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
METER = "/v1/links/stud/meters/major"


async def head(client: httpx.AsyncClient) -> Any:
    return (await client.get("/v1/journal/head", headers=OPERATOR)).json()["seq"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("reset", {"reason": "end of promotion"}),
        ("corrections", {"kind": "adjust", "amount": "-1.00", "reason": "typo"}),
        ("corrections", {"kind": "hand_paid", "amount": "10.00", "reason": "5.18.1"}),
        ("corrections", {"kind": "void_round", "table": "T01", "round": "R1", "reason": "5.24"}),
    ],
)
async def test_a_reduction_without_a_code_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    before = await head(client)
    r = await client.post(f"{METER}/{path}", json=body, headers=SAM)
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["errors"][0]["loc"] == ["body", "reason_code"]
    assert "jackpot_paid" in problem["errors"][0]["msg"]
    assert "regulator_order" in problem["detail"]
    assert await head(client) == before


async def test_an_unlisted_code_is_refused(client: httpx.AsyncClient) -> None:
    r = await client.post(
        f"{METER}/reset", json={"reason": "x", "reason_code": "because"}, headers=SAM
    )
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == ["body", "reason_code"]


async def test_a_raise_needs_no_code(client: httpx.AsyncClient) -> None:
    r = await client.post(
        f"{METER}/corrections",
        json={"kind": "adjust", "amount": "1.00", "reason": "x"},
        headers=SAM,
    )
    assert r.status_code == 200, r.text


async def test_the_code_is_in_the_audit_log_its_csv_and_the_reconciliation(
    client: httpx.AsyncClient,
) -> None:
    body = {"reason": "display fault", "reason_code": "malfunction"}
    r = await client.post(f"{METER}/reset", json=body, headers=SAM)
    assert r.status_code == 200, r.text
    (record,) = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert (record["reason_code"], record["reason"]) == ("malfunction", "display fault")
    csv = (await client.get("/v1/audit?format=csv", headers=OPERATOR)).text.splitlines()
    assert csv[0].endswith(",reason,reason_code")
    assert csv[1].endswith(",display fault,malfunction")
    report = (await client.get("/v1/reports/reconciliation", headers=OPERATOR)).json()
    (reduction,) = report["reductions"]
    assert reduction["action"] == "reset" and reduction["reason_code"] == "malfunction"
    assert (reduction["link"], reduction["meter"], reduction["who"]) == ("stud", "major", "sam")


async def test_under_dual_control_the_proposal_needs_the_code(dual: httpx.AsyncClient) -> None:
    r = await dual.post(f"{METER}/reset", json={"reason": "x"}, headers=SAM)
    assert r.status_code == 422, r.text
    body = {"reason": "closing the link", "reason_code": "closure"}
    r = await dual.post(f"{METER}/reset", json=body, headers=SAM)
    assert r.status_code == 202, r.text
    assert r.json()["change"]["reason_code"] == "closure"
    r = await dual.post(f"/v1/changes/{r.json()['id']}/approve", headers=SUE)
    assert r.status_code == 200, r.text
    audit = (await dual.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert [(a["action"], a.get("reason_code")) for a in audit] == [
        ("propose:reset", "closure"),
        ("reset", "closure"),
    ]


def test_an_entry_without_a_code_still_replays_byte_for_byte() -> None:
    text = '{"by":"sam","kind":"reset","link":"stud","meter":"major","now":1,"reason":"x"}'
    assert entry_text(entry_from_dict(__import__("json").loads(text))) == text
