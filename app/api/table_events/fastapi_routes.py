"""The table controllers' FastAPI routes: the table events' OpenAPI operations (and their
way in for whatever the direct route leaves to FastAPI), and a round's view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from app.api.answers import BetsAnswer, OutcomeAnswer, RoundView, VoidAnswer
from app.api.auth import Tokens
from app.api.award_listing import left_meter_awards
from app.api.reading import Auth, RoundId, TableId, request_body
from app.api.responses import JSONResponse
from app.api.schemas import ID_PATTERN
from app.api.table_events.handlers import EventHandler, table_event_of
from app.api.table_events.request_models import BetsRequest, OutcomeRequest, VoidRequest
from app.state.floor_state import FloorState, idempotency_key
from app.state.hold_views import round_with_holds
from app.state.views import as_committed, meter_award
from app.writer.writer import Writer
from jackpot.canonical import loads_exact
from jackpot.errors import UnknownError

# The bodies the table events read themselves, after the token (app/api/router.py).
TABLE_EVENT_BODIES: tuple[type[BaseModel], ...] = (BetsRequest, OutcomeRequest, VoidRequest)


def table_event(body: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI description of a table event: what FastAPI would derive from
    `table: TableId, round: RoundId, body: <body>, authorization: Auth`."""

    def path(name: str) -> dict[str, Any]:
        schema = {"type": "string", "pattern": ID_PATTERN, "title": name.title()}
        return {"name": name, "in": "path", "required": True, "schema": schema}

    authorization = {"type": "string", "title": "Authorization"}
    return {
        "tags": ["tables"],
        "openapi_extra": {
            "parameters": [
                path("table"),
                path("round"),
                {
                    "name": "Authorization",
                    "in": "header",
                    "required": False,
                    "schema": {"anyOf": [authorization, {"type": "null"}]},
                },
            ],
            "requestBody": request_body(body),
        },
    }


def table_routes(
    api: APIRouter, writer: Writer, tokens: Tokens, events: Mapping[str, EventHandler]
) -> None:
    def service() -> FloorState:
        return writer.service

    @api.post(
        "/v1/tables/{table}/rounds/{round}/bets",
        response_model=BetsAnswer,
        **table_event(BetsRequest),
    )
    async def post_bets(request: Request) -> Response:
        return await events["bets"](table_event_of(request))

    @api.post(
        "/v1/tables/{table}/rounds/{round}/outcome",
        response_model=OutcomeAnswer,
        **table_event(OutcomeRequest),
    )
    async def post_outcome(request: Request) -> Response:
        return await events["outcome"](table_event_of(request))

    @api.post(
        "/v1/tables/{table}/rounds/{round}/void",
        response_model=VoidAnswer,
        **table_event(VoidRequest),
    )
    async def post_void(request: Request) -> Response:
        return await events["void"](table_event_of(request))

    @api.get("/v1/tables/{table}/rounds/{round}", tags=["tables"], response_model=RoundView)
    async def get_round(
        table: TableId,
        round: RoundId,
        authorization: Auth = None,
        wait: Annotated[int, Query(ge=0, le=60)] = 0,
    ) -> JSONResponse:
        tokens.reader(authorization, table)
        if (table, round) not in service().floor.rounds:
            return JSONResponse(await archived_round(writer, table, round))
        if wait:
            await writer.wait_final(table, round, float(wait))
        return JSONResponse(round_with_holds(service(), table, round, writer.clock()))


async def archived_round(writer: Writer, table: str, round_id: str) -> dict[str, Any]:
    """A round no longer kept in memory: its events' first answers, from the journal."""
    view: dict[str, Any] = {"table": table, "round": round_id, "archived": True}
    for kind in ("bets", "outcome", "void"):
        row = await writer.lookup(idempotency_key(table, round_id, kind))
        if row is not None and row.answer is not None:
            view[kind] = loads_exact(row.answer, f"the answer of journal entry {row.seq}")
    if "bets" not in view:
        raise UnknownError(f"no bets were recorded for round {round_id!r} at table {table!r}")
    # An open round is never pruned: one with neither outcome nor void was expired.
    view["state"] = "void" if "void" in view else "settled" if "outcome" in view else "expired"
    awards = [
        a for a in writer.service.floor.awards.values() if (a.table, a.round) == (table, round_id)
    ]
    shown = [(a.box, meter_award(as_committed(writer.service, a))) for a in awards]
    shown += await left_meter_awards(writer.journal, writer.committer.leaving, table, round_id)
    view["awards"] = [award for _, award in sorted(shown, key=lambda item: item[0])]
    return view
