"""The table events' direct route (app/api/table_events/direct_route.py), taken before FastAPI's own
stack: a failure nobody foresaw is answered as FastAPI answers it (Starlette's 500), and
the request context still sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from app.api.table_events.direct_route import FastPathApp
from app.state.timefmt import format_time
from app.writer.writer import Writer
from tests.integration.app.support import build_server

DEMO = Path(__file__).resolve().parents[4] / "app" / "demo" / "floor.toml"
START = 1_800_000_000_000


async def answer(direct: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str, str]:
    app = cast(FastPathApp, build_server(clock=lambda: START).app)
    if not direct:
        app.table_events = None  # through FastAPI's stack and router

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("nobody foresaw this")

    monkeypatch.setattr(Writer, "submit_json", broken)  # what the bets route calls
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    client = httpx.AsyncClient(transport=transport, base_url="http://test")
    async with app.router.lifespan_context(app), client:
        body = {"closed_at": format_time(START), "boxes": [{"box": 1, "ante": "1.00"}]}
        headers = {"Authorization": "Bearer demo-table-T01"}
        r = await client.post("/v1/tables/T01/rounds/R1/bets", json=body, headers=headers)
        metrics = (await client.get("/metrics")).text
    counted = [line for line in metrics.splitlines() if 'responses_total{code="500"}' in line]
    return r.status_code, r.headers["content-type"], r.text, "".join(counted)


async def test_an_unforeseen_failure_is_answered_as_fastapi_answers_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    direct = await answer(True, monkeypatch)
    assert direct == await answer(False, monkeypatch)
    assert direct[:3] == (500, "text/plain; charset=utf-8", "Internal Server Error")
    assert direct[3].endswith(" 1.0")  # the request context counted it
