"""Each route's answers as its OpenAPI `response_model` describes them (app/api/answers.py):
every answer of a busy scenario validates against the model, and has no field the model
does not name. The models describe; the bytes sent are the views' (checked elsewhere)."""

from __future__ import annotations

from typing import Any, get_args

import httpx
from pydantic import BaseModel

from app.api.answers import (
    BetsAnswer,
    Changes,
    CorrectionAnswer,
    JournalHead,
    MeterView,
    OutcomeAnswer,
    Proposal,
    ResetAnswer,
    RoundView,
    SeedAnswer,
    VoidAnswer,
)
from tests.integration.app.support import final_royal_flush
from tests.support import Clock, bets_body

T01 = {"Authorization": "Bearer demo-table-T01"}
T04 = {"Authorization": "Bearer demo-table-T04"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
METER = "/v1/links/stud/meters/major"


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def unknown_fields(model: type[BaseModel], data: Any, where: str = "") -> list[str]:
    """The fields of `data` its model (or a nested model) does not name."""
    if not isinstance(data, dict):
        return []
    unknown = [f"{where}.{k}" for k in data if k not in model.model_fields]
    for name, field in model.model_fields.items():
        nested = _model_in(field.annotation)
        value = data.get(name)
        if nested is None or value is None:
            continue
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            unknown += unknown_fields(nested, item, f"{where}.{name}[{i}]")
    return unknown


def conforms(model: type[BaseModel], r: httpx.Response, status: int = 200) -> None:
    assert r.status_code == status, r.text
    model.model_validate(r.json())
    assert unknown_fields(model, r.json()) == []


async def test_table_answers_match_their_models(client: httpx.AsyncClient, clock: Clock) -> None:
    view = await final_royal_flush(client, clock)  # a final meter award, a fixed one
    assert any(a.get("state") == "final" for a in view["awards"]), view
    conforms(RoundView, await client.get("/v1/tables/T02/rounds/R1", headers=OPERATOR))
    body = bets_body(clock, (1, "25.00", "1.00"), (2, "0", "1.00"))
    body["boxes"][0]["player"] = "p-1"
    conforms(BetsAnswer, await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=T01))
    # Singapore Stud: draws, a dealer-hand wager.
    sing = bets_body(clock, (1, "10.00", "1.00"))
    sing["boxes"][0]["jackpot_dealer"] = "1.00"
    r = await client.post("/v1/tables/T04/rounds/R1/bets", json=sing, headers=T04)
    conforms(BetsAnswer, r)
    conforms(RoundView, await client.get("/v1/tables/T04/rounds/R1", headers=T04))
    void = {"reason": "misdeal (5.8)", "boxes": [1]}
    r = await client.post("/v1/tables/T01/rounds/R1/void", json=void, headers=T01)
    conforms(VoidAnswer, r)
    conforms(RoundView, await client.get("/v1/tables/T01/rounds/R1", headers=T01))
    t02 = {"Authorization": "Bearer demo-table-T02"}
    await client.post(
        "/v1/tables/T02/rounds/R2/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=t02
    )
    hands = {"boxes": [{"box": 1, "dealt_at": clock.at(), "cards": ["2C", "7D", "9H", "JS", "4C"]}]}
    r = await client.post("/v1/tables/T02/rounds/R2/outcome", json=hands, headers=t02)
    conforms(OutcomeAnswer, r, 200)


async def test_operator_answers_match_their_models(client: httpx.AsyncClient, clock: Clock) -> None:
    await final_royal_flush(client, clock)
    conforms(MeterView, await client.get(METER, headers=OPERATOR))
    seed = {"seed": "12000.00", "reason": "promo"}
    conforms(SeedAnswer, await client.put(f"{METER}/seed", json=seed, headers=SAM))
    body = {"reason": "hand pay", "reason_code": "jackpot_paid"}
    reset = await client.post(f"{METER}/reset", json=body, headers=SAM)
    conforms(ResetAnswer, reset)
    for correction in (
        {"kind": "adjust", "amount": "-1.00", "reason": "dispute", "reason_code": "malfunction"},
        {
            "kind": "void_round",
            "table": "T02",
            "round": "R1",
            "reason": "5.24",
            "reason_code": "error_correction",
        },  # fmt: skip
    ):
        r = await client.post(f"{METER}/corrections", json=correction, headers=SAM)
        conforms(CorrectionAnswer, r)
    conforms(JournalHead, await client.get("/v1/journal/head", headers=OPERATOR))


async def test_dual_control_answers_match_their_models(dual: httpx.AsyncClient) -> None:
    proposed = []
    for method, path, body in (
        ("PUT", f"{METER}/seed", {"seed": "20000.00", "reason": "promo"}),
        ("POST", f"{METER}/reset", {"reason": "hand pay", "reason_code": "jackpot_paid"}),
        ("POST", f"{METER}/corrections", {"kind": "adjust", "amount": "1.00", "reason": "x"}),
    ):
        r = await dual.request(method, path, json=body, headers=SAM)
        conforms(Proposal, r, 202)
        proposed.append(r.json()["id"])
    answers: list[type[BaseModel]] = [SeedAnswer, CorrectionAnswer]
    for change, answer in zip(proposed[::2], answers, strict=True):
        conforms(answer, await dual.post(f"/v1/changes/{change}/approve", headers=SUE))
    r = await dual.post(f"/v1/changes/{proposed[1]}/reject", json={"reason": "no"}, headers=SUE)
    conforms(Proposal, r)
    conforms(Changes, await dual.get("/v1/changes", headers=OPERATOR))
