"""The table controllers' routes: bets, outcome and void of a round, and a round's view."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from app.api.auth import Tokens
from app.api.requests import Auth, RoundId, TableId, table_event, table_request
from app.api.responses import JSONResponse
from app.api.schemas import BetsRequest, OutcomeRequest, VoidRequest
from app.state.floor_state import Service, idempotency_key
from app.state.views import as_committed, meter_award, outcome_answer, round_view
from app.writer.writer import Writer
from jackpot.errors import UnknownError
from jackpot.snapshot import loads_exact


def table_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    def service() -> Service:
        return writer.service

    # The table events are the hot path: their path, header and body are read here, the
    # body parsed and validated in one pass by pydantic-core (model_validate_json), rather
    # than by FastAPI's per-parameter machinery (docs/performance.md).
    # Same checks, same 422 answers; the OpenAPI description is given by `table_event`.

    @api.post("/v1/tables/{table}/rounds/{round}/bets", **table_event(BetsRequest))
    async def post_bets(request: Request) -> Response:
        table, round_id, command = await table_request(request, BetsRequest, tokens)
        _, answer = await writer.submit_json("bets", table, round_id, command)
        return Response(answer, media_type="application/json")

    @api.post("/v1/tables/{table}/rounds/{round}/outcome", **table_event(OutcomeRequest))
    async def post_outcome(request: Request) -> JSONResponse:
        table, round_id, command = await table_request(request, OutcomeRequest, tokens)
        await writer.submit("outcome", table, round_id, command)
        # Meter awards are pending until the watermark passes them: wait a while for
        # their final amounts; the waiting holds up nothing else (the writer goes on).
        await writer.wait_final(table, round_id, writer.outcome_wait_s)
        return JSONResponse(outcome_answer(service(), table, round_id))

    @api.post("/v1/tables/{table}/rounds/{round}/void", **table_event(VoidRequest))
    async def post_void(request: Request) -> Response:
        table, round_id, command = await table_request(request, VoidRequest, tokens)
        _, answer = await writer.submit_json("void", table, round_id, command)
        return Response(answer, media_type="application/json")

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
