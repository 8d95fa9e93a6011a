"""The console's API: `GET /v1/floor`, `WS /v1/floor/ws`, a meter's history, the audit's
filters and CSV. Auth first (401, 403), bad input a 422 naming the field."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.integration.app.support import (
    build_server,
    royal_flush_then_correction,
)
from tests.support import Clock, bets_body

T02 = {"Authorization": "Bearer demo-table-T02"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SAM = {"Authorization": "Bearer demo-supervisor"}
HISTORY = "/v1/links/stud/meters/major/history"
READS = ["/v1/floor", HISTORY, "/v1/audit?format=csv"]


@pytest.mark.parametrize("path", READS)
async def test_reads_need_an_operator_token(client: httpx.AsyncClient, path: str) -> None:
    assert (await client.get(path)).status_code == 401
    bad = await client.get(path, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    assert bad.headers["content-type"] == "application/problem+json"
    assert (await client.get(path, headers=T02)).status_code == 403


async def test_history_names_a_bad_time_after_the_token(client: httpx.AsyncClient) -> None:
    assert (await client.get(f"{HISTORY}?from=yesterday")).status_code == 401
    r = await client.get(f"{HISTORY}?from=yesterday", headers=OPERATOR)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "from"]
    r = await client.get("/v1/links/stud/meters/mega/history", headers=OPERATOR)
    assert r.status_code == 404 and "mega" in r.json()["detail"]


async def test_floor_shows_who_the_meters_and_a_pending_award(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T02
    )
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=T02)
    floor = (await client.get("/v1/floor", headers=SAM)).json()
    assert floor["you"] == {"name": "sam", "role": "supervisor"}
    assert floor["dual_control"] is False and floor["currency"] == "SGD"
    stud = next(link for link in floor["links"] if link["link"] == "stud")
    assert stud["status"] == "ok" and stud["name"] == "Stud Poker Progressive"
    major = stud["meters"][0]
    # Pending counted: 10000.00 + 0.25, all of it to the royal flush, back to the seed;
    # the reserve's 0.05 funds the seed first; final: nothing of it yet. As the meter read.
    assert (major["value"], major["final_value"], major["reserve"]) == (
        "10000.00",
        "10000.00",
        "0.00",
    )
    meter = (await client.get("/v1/links/stud/meters/major", headers=OPERATOR)).json()
    assert (meter["value"], meter["final_value"], meter["reserve"]) == (
        major["value"],
        major["final_value"],
        major["reserve"],
    )
    assert [(p["table"], p["box"], p["hand"]) for p in stud["pending"]] == [
        ("T02", 1, "royal_flush")
    ]
    assert major["hits"][0]["state"] == "pending" and major["hits"][0]["table"] == "T02"
    t02 = next(t for t in floor["tables"] if t["table"] == "T02")
    assert (t02["last_event"], t02["last_event_at"], t02["silent"]) == (
        "outcome",
        clock.at(),
        False,
    )
    t01 = next(t for t in floor["tables"] if t["table"] == "T01")
    assert (t01["last_event"], t01["silent"]) == (None, True)


async def test_history_points_and_marks_match_the_reconciliation(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    start = clock.at()
    await royal_flush_then_correction(client, clock, SAM)
    clock.now += 1
    period = {"from": start, "to": clock.at(1)}
    history = (await client.get(HISTORY, params=period, headers=OPERATOR)).json()
    # 10000 + 0.25 - 10000.25 (the royal flush) -> reset to the seed 10000.00 - 0.07
    assert (history["opening"], history["closing"]) == ("10000.00", "9999.93")
    assert history["points"][-1]["value"] == "9999.93"
    assert history["points_total"] == len(history["points"])
    award = next(m for m in history["marks"] if m["kind"] == "award")
    assert (award["amount"], award["table"], award["box"]) == ("10000.25", "T02", 1)
    correction = next(m for m in history["marks"] if m["kind"] == "correction")
    assert (correction["value_before"], correction["value_after"]) == ("10000.00", "9999.93")
    assert correction["reason"] == "rounding dispute"
    report = (
        await client.get("/v1/reports/reconciliation", params=period, headers=OPERATOR)
    ).json()
    stud = next(r for r in report["meters"] if r["link"] == "stud")
    assert (stud["opening_value"], stud["closing_value"]) == (
        history["opening"],
        history["closing"],
    )
    empty = (await client.get(HISTORY, params={"to": start}, headers=OPERATOR)).json()
    assert (empty["points"], empty["marks"], empty["closing"]) == ([], [], "10000.00")


async def test_audit_filters_and_its_csv(client: httpx.AsyncClient, clock: Clock) -> None:
    adjust = {"kind": "adjust", "amount": "1.50", "reason": "fix"}
    changes = [
        ("/v1/links/stud/meters/major/seed", {"seed": "12000.00", "reason": 'promo, "big"'}),
        ("/v1/links/tcp/meters/major/corrections", adjust),
    ]
    for path, body in changes:
        method = client.put if path.endswith("seed") else client.post
        assert (await method(path, json=body, headers=SAM)).status_code == 200
    audit = (await client.get("/v1/audit?link=tcp", headers=OPERATOR)).json()
    assert [a["action"] for a in audit["audit"]] == ["correct:adjust"] and audit["total"] == 1
    assert (await client.get("/v1/audit?action=correct", headers=OPERATOR)).json()["total"] == 1
    assert (await client.get("/v1/audit?action=seed", headers=OPERATOR)).json()["total"] == 1
    assert (await client.get("/v1/audit?table=T01", headers=OPERATOR)).json()["total"] == 0
    csv = await client.get("/v1/audit?format=csv", headers=OPERATOR)
    assert csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.splitlines()
    assert lines[0] == (
        "id,at,who,action,link,meter,value_before,value_after,seed_before,seed_after,"
        "amount,round,change,approved_by,reason,reason_code"
    )
    assert lines[1] == (
        f"1,{clock.at()},sam,seed,stud,major,10000.00,10000.00,10000.00,12000.00,,,,,"
        '"promo, ""big""",'
    )
    assert lines[2].split(",")[3:8] == ["correct:adjust", "tcp", "major", "5000.00", "5001.50"]
    bad = await client.get("/v1/audit?format=xml", headers=OPERATOR)
    assert bad.status_code == 422


def token_protocol(token: str) -> str:
    return "jackpot.token." + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


async def test_a_writer_that_stands_down_closes_its_consoles_with_1012() -> None:
    """The live floor is the leader's state: once this writer is a standby its consoles are
    closed as "restarting" (1012) and reconnect through the proxy to the new leader."""
    server = build_server()
    async with served(server) as address:
        protocols = ["jackpot", token_protocol("demo-operator")]
        async with connect(f"ws://{address}/v1/floor/ws", subprotocols=protocols) as ws:  # type: ignore[arg-type]
            assert json.loads(await ws.recv())["type"] == "hello"
            assert json.loads(await ws.recv())["type"] == "floor"
            server.writer.stand_by()
            with pytest.raises(ConnectionClosed):
                async with asyncio.timeout(10):
                    while True:
                        await ws.recv()
            assert ws.close_code == 1012


@contextlib.asynccontextmanager
async def served(server: Any = None) -> AsyncIterator[str]:
    """The writer app on a real uvicorn (websockets need a real server), its address."""
    app = (server or build_server()).app
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


async def test_floor_websocket_takes_the_token_as_a_subprotocol() -> None:
    async with served() as address:
        protocols = ["jackpot", token_protocol("demo-operator")]
        async with connect(f"ws://{address}/v1/floor/ws", subprotocols=protocols) as ws:  # type: ignore[arg-type]
            assert ws.subprotocol == "jackpot"
            hello = json.loads(await ws.recv())
            assert hello == {"type": "hello", "you": {"name": "olivia", "role": "operator"}}
            floor = json.loads(await ws.recv())
            assert floor["type"] == "floor"
            assert [link["link"] for link in floor["links"]] == ["stud", "tcp", "tiers"]
            assert floor["links"][0]["meters"][0]["value"] == "10000.00"
        for offered in (["jackpot"], ["jackpot", token_protocol("nope")],
                        ["jackpot", token_protocol("demo-table-T01")]):  # fmt: skip
            async with connect(f"ws://{address}/v1/floor/ws", subprotocols=offered) as ws:  # type: ignore[arg-type]
                with pytest.raises(ConnectionClosed):
                    await ws.recv()
                assert ws.close_code == 4401


async def test_console_page_and_files_are_served_with_a_strict_policy(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/console")
    assert page.status_code == 200 and "Jackpot console" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    script = await client.get("/console/static/main.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert (await client.get("/console/static/console.html")).status_code == 404
    assert (await client.get("/console/static/..%2Fpage_routes.py")).status_code == 404
    static = Path(__file__).resolve().parents[4] / "app" / "console" / "static"
    for source in static.glob("*.js"):
        assert "innerHTML" not in source.read_text(), f"{source.name}: server strings as HTML"
