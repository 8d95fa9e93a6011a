"""The table controllers' routes: bets, outcome and void of a round, and a round's view."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from app.api.auth import Tokens
from app.api.requests import (
    Auth,
    RoundId,
    TableEvent,
    TableId,
    event_command,
    table_event,
    table_event_of,
)
from app.api.responses import JSONResponse
from app.api.schemas import BetsRequest, OutcomeRequest, VoidRequest
from app.state.floor_state import Service, idempotency_key
from app.state.views import as_committed, meter_award, outcome_answer, round_view
from app.writer.writer import Writer
from jackpot.errors import UnknownError
from jackpot.snapshot import loads_exact

EventHandler = Callable[[TableEvent], Awaitable[Response]]


def table_event_handlers(writer: Writer, tokens: Tokens) -> dict[str, EventHandler]:
    """The handler of each table event, by kind: what the routes below, FastPathApp's
    direct route and the server's table lane all call (app/api/table_fastpath.py,
    app/api/table_lane.py). The body is decoded and validated in one pass
    (app/api/event_bodies.py); the answer is the journaled text, sent as it is."""

    async def bets(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, BetsRequest, tokens)
        _, answer = await writer.submit_json("bets", table, round_id, command)
        return Response(answer, media_type="application/json")

    async def outcome(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, OutcomeRequest, tokens)
        await writer.submit("outcome", table, round_id, command)
        # Meter awards are pending until the watermark passes them: wait a while for
        # their final amounts; the waiting holds up nothing else (the writer goes on).
        await writer.wait_final(table, round_id, writer.outcome_wait_s)
        return JSONResponse(outcome_answer(writer.service, table, round_id))

    async def void(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, VoidRequest, tokens)
        _, answer = await writer.submit_json("void", table, round_id, command)
        return Response(answer, media_type="application/json")

    return {"bets": bets, "outcome": outcome, "void": void}


def table_routes(
    api: APIRouter, writer: Writer, tokens: Tokens, events: Mapping[str, EventHandler]
) -> None:
    def service() -> Service:
        return writer.service

    # The table events' routes: their OpenAPI description (`table_event`), and the way
    # in for whatever the direct route and the lane leave to FastAPI.

    @api.post("/v1/tables/{table}/rounds/{round}/bets", **table_event(BetsRequest))
    async def post_bets(request: Request) -> Response:
        return await events["bets"](table_event_of(request))

    @api.post("/v1/tables/{table}/rounds/{round}/outcome", **table_event(OutcomeRequest))
    async def post_outcome(request: Request) -> Response:
        return await events["outcome"](table_event_of(request))

    @api.post("/v1/tables/{table}/rounds/{round}/void", **table_event(VoidRequest))
    async def post_void(request: Request) -> Response:
        return await events["void"](table_event_of(request))

    @api.get("/v1/tables/{table}/rounds/{round}", tags=["tables"])
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
        return JSONResponse(round_view(service(), table, round))


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
    view["awards"] = [
        meter_award(as_committed(writer.service, a)) for a in sorted(awards, key=lambda a: a.box)
    ]
    return view
