"""Thin HTTP entry points: authenticate, validate, hand a command to the writer, answer."""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from app.api.auth import Principal, Tokens
from app.api.schemas import (
    ID_PATTERN,
    BetsRequest,
    CorrectionRequest,
    OutcomeRequest,
    ResetRequest,
    SeedRequest,
    VoidRequest,
    problem_responses,
)
from app.audit.reports import COLUMNS, Reports, to_csv
from app.state.floor_state import Service
from app.state.operator_views import audit_view, proposal_view
from app.state.timefmt import parse_time
from app.state.views import (
    Listed,
    as_committed,
    every_award,
    meter_award,
    outcome_answer,
    round_view,
)
from app.writer.writer import Writer
from jackpot.errors import InvalidCommandError, UnknownError
from jackpot.money import format_money, format_rate, parse_money
from jackpot.snapshot import loads_exact
from tables.settle import KINDS


class JSONResponse(Response):
    """JSON rendered by orjson: the answers are plain dicts of str, int, bool, None."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


Auth = Annotated[str | None, Header(alias="Authorization")]
TableId = Annotated[str, Path(pattern=ID_PATTERN)]
RoundId = TableId


Body = TypeVar("Body", bound=BaseModel)
ID_RE = re.compile(ID_PATTERN)
# The request bodies the routes read themselves (after the token): main.py puts their
# schemas in the OpenAPI components (FastAPI adds only those of the parameters it reads).
TABLE_BODIES: tuple[type[BaseModel], ...] = (
    BetsRequest, OutcomeRequest, VoidRequest, SeedRequest, ResetRequest, CorrectionRequest,
)  # fmt: skip


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


def request_body(body: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI requestBody of a route that reads its body itself (`read_body`)."""
    schema = {"$ref": f"#/components/schemas/{body.__name__}"}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


async def table_request(
    request: Request, model: type[Body], tokens: Tokens
) -> tuple[str, str, Body]:
    """The table, round and body of a table event. The token first (API.md, Auth: 401,
    then 403 for another table's round), before anything is said about the body; then a
    422 naming every bad field (as FastAPI words it: `loc` starts with "path" or "body")."""
    authorization = request.headers.get("authorization")
    principal = tokens.principal(authorization)
    errors: list[dict[str, Any]] = []
    ids = []
    for name in ("table", "round"):
        value = request.path_params[name]
        if ID_RE.fullmatch(value) is None:  # `$` alone would let a final newline in
            errors.append({
                "type": "string_pattern_mismatch", "loc": ("path", name),
                "msg": f"String should match pattern '{ID_PATTERN}'", "input": value,
                "ctx": {"pattern": ID_PATTERN},
            })  # fmt: skip
        ids.append(value)
    if errors:  # no table has such an id: its token cannot be anyone's
        raise RequestValidationError(errors)
    tokens.allow_table(principal, ids[0])
    return ids[0], ids[1], await read_body(request, model)


async def read_body(request: Request, model: type[Body]) -> Body:
    """The request's body as `model`, or a 422 naming every bad field. Routes read their
    body themselves, after the token: FastAPI reads a declared body (and answers 422 for
    bad JSON) before any dependency runs."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as error:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        raise RequestValidationError(errors) from None


def router(writer: Writer, tokens: Tokens) -> APIRouter:
    api = APIRouter(responses=problem_responses(401, 403, 404, 409, 422, 503))

    def service() -> Service:
        return writer.service

    reports = Reports(writer.service.config)

    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    # A dependency runs before FastAPI validates the path; the changes read their body
    # themselves (`read_body`), after it: 401/403 come before any 422 (API.md, Auth).
    # (A default, not an Annotated alias: this module's annotations are strings, looked
    # up in its globals, where `supervisor` is not.)
    by_supervisor = Depends(supervisor)

    # The table events are the hot path: their path, header and body are read here, the
    # body parsed and validated in one pass by pydantic-core (model_validate_json), rather
    # than by FastAPI's per-parameter machinery (~15 % of the server's time per event).
    # Same checks, same 422 answers; the OpenAPI description is given by `table_event`.

    @api.post("/v1/tables/{table}/rounds/{round}/bets", **table_event(BetsRequest))
    async def post_bets(request: Request) -> JSONResponse:
        table, round_id, body = await table_request(request, BetsRequest, tokens)
        _, answer = await writer.submit("bets", table, round_id, body.domain())
        return JSONResponse(answer)

    @api.post("/v1/tables/{table}/rounds/{round}/outcome", **table_event(OutcomeRequest))
    async def post_outcome(request: Request) -> JSONResponse:
        table, round_id, body = await table_request(request, OutcomeRequest, tokens)
        await writer.submit("outcome", table, round_id, body.domain())
        # Meter awards are pending until the watermark passes them: wait a while for
        # their final amounts; the waiting holds up nothing else (the writer goes on).
        await writer.wait_final(table, round_id, writer.outcome_wait_s)
        return JSONResponse(outcome_answer(service(), table, round_id))

    @api.post("/v1/tables/{table}/rounds/{round}/void", **table_event(VoidRequest))
    async def post_void(request: Request) -> JSONResponse:
        table, round_id, body = await table_request(request, VoidRequest, tokens)
        _, answer = await writer.submit("void", table, round_id, body.domain())
        return JSONResponse(answer)

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

    # -- operators -------------------------------------------------------------------

    @api.get("/v1/links/{link}/meters/{meter}", tags=["operators"])
    async def get_meter(link: TableId, meter: TableId, authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        return JSONResponse(meter_view(service(), link, meter))

    async def operator_change(kind: str, body: dict[str, Any], by: str) -> JSONResponse:
        """A supervisor's change: at once, or with dual control a proposal (202)."""
        if writer.service.config.dual_control:
            change = {"kind": kind, **body}
            _, answer = await writer.submit("propose", None, None, {"change": change}, by=by)
            return JSONResponse(answer, status_code=202)
        _, answer = await writer.submit(kind, None, None, body, by=by)
        return JSONResponse(answer)

    @api.put(
        "/v1/links/{link}/meters/{meter}/seed",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(SeedRequest)},
    )
    async def put_seed(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, SeedRequest)
        meter_view(service(), link, meter)  # 404 for an unknown link or meter
        change = {
            "link": link,
            "meter": meter,
            "seed": parse_money(body.seed),
            "reason": body.reason,
        }
        return await operator_change("seed", change, who.name)

    @api.post(
        "/v1/links/{link}/meters/{meter}/reset",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(ResetRequest)},
    )
    async def post_reset(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, ResetRequest)
        meter_view(service(), link, meter)
        return await operator_change(
            "reset", {"link": link, "meter": meter, "reason": body.reason}, who.name
        )

    @api.post(
        "/v1/links/{link}/meters/{meter}/corrections",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(CorrectionRequest)},
    )
    async def post_correction(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        """An audited correction (5.24): adjust, hand_paid (5.18.1) or void_round."""
        body = await read_body(request, CorrectionRequest)
        meter_view(service(), link, meter)
        return await operator_change("correct", body.domain(link, meter), who.name)

    @api.get("/v1/changes", tags=["operators"])
    async def get_changes(authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        return JSONResponse({"changes": [proposal_view(p) for p in service().proposals.values()]})

    @api.post("/v1/changes/{change}/approve", tags=["operators"])
    async def approve(change: TableId, who: Principal = by_supervisor) -> JSONResponse:
        _, answer = await writer.submit("approve", None, None, {"id": change}, by=who.name)
        return JSONResponse(answer)

    @api.post(
        "/v1/changes/{change}/reject",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(ResetRequest)},
    )
    async def reject(
        change: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, ResetRequest)
        change_request = {"id": change, "reason": body.reason}
        _, answer = await writer.submit("reject", None, None, change_request, by=who.name)
        return JSONResponse(answer)

    @api.get("/v1/audit", tags=["operators"])
    async def get_audit(
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0)] = 0,
    ) -> JSONResponse:
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        rows = [a for a in service().audit if start <= a["at"] < end]
        page = rows[offset : offset + limit]
        return JSONResponse({"audit": [audit_view(a) for a in page], "total": len(rows)})

    @api.get("/v1/awards", tags=["operators"], responses=JSON_OR_CSV)
    async def get_awards(
        authorization: Auth = None,
        kind: Annotated[str | None, Query(pattern=AWARD_KINDS)] = None,
        link: str | None = None,
        meter: str | None = None,
        table: str | None = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0)] = 0,
        format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
    ) -> Response:
        """Every award the server decided (every `kind`), newest first; `from`/`to` filter
        on the time the hand was dealt. `?link=L&meter=M&limit=25`: a level's last 25 hits."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        wanted = {"kind": kind, "link": link, "meter": meter, "table": table}
        awards = [
            a
            for a in every_award(service())
            if all(v is None or getattr(a, k) == v for k, v in wanted.items())
            and start <= a.dealt_at < end
        ]
        awards.sort(key=Listed.order, reverse=True)
        rows = [a.row() for a in awards[offset : offset + limit]]
        if format == "csv":
            return Response(to_csv(rows, AWARD_COLUMNS), media_type="text/csv")
        return JSONResponse({"awards": rows, "total": len(awards)})

    @api.get("/v1/journal/head", tags=["operators"])
    async def get_journal_head(authorization: Auth = None) -> Response:
        """The last committed entry: `seq` (= entries, numbered from 1) and its chained
        `hash`, sha256(previous hash || canonical entry) as docs/journal.md specifies."""
        tokens.role(authorization, "operator")
        seq, head = writer.durable_head()
        return JSONResponse({"seq": seq, "entries": seq, "head": head})

    @api.get("/v1/reports/reconciliation", tags=["operators"], responses=JSON_OR_CSV)
    async def get_reconciliation(
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
    ) -> Response:
        """Per link and meter: opening, contributions, awards, seed funding, corrections,
        closing; it balances to the micro-unit (`balanced`)."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        head, _ = writer.durable_head()
        report = await reports.reconciliation(writer.journal, start, end, head)
        if format == "csv":
            return Response(to_csv(report["meters"], COLUMNS), media_type="text/csv")
        return JSONResponse(report)

    return api


async def archived_round(writer: Writer, table: str, round_id: str) -> dict[str, Any]:
    """A round no longer kept in memory: its events' first answers, from the journal."""
    view: dict[str, Any] = {"table": table, "round": round_id, "archived": True}
    for kind in ("bets", "outcome", "void"):
        row = await writer.lookup(f"{table}|{round_id}|{kind}")
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


def meter_view(service: Service, link_id: str, meter_id: str) -> dict[str, Any]:
    link = service.floor.link(link_id)
    try:
        index = link.meter_index(meter_id)
    except KeyError:
        raise UnknownError(f"link {link_id!r} has no meter {meter_id!r}") from None
    meter, config = link.meters[index], link.config.meters[index]
    # API.md: `value` and `reserve` at one instant, pending events counted in both;
    # `final_*` only what the watermark has passed.
    value, reserve = link.provisional()[index]
    return {
        "link": link_id,
        "meter": meter_id,
        "value": format_money(value),
        "final_value": format_money(meter.value),
        "seed": format_money(meter.seed),
        "next_seed": None if meter.next_seed is None else format_money(meter.next_seed),
        "rate": format_rate(config.rate),
        "reserve_rate": format_rate(config.reserve_rate),
        "reserve": format_money(reserve),
        "final_reserve": format_money(meter.reserve),
        "ceiling": None if config.ceiling is None else format_money(config.ceiling),
        "pending_awards": [a.id for a in service.floor.pending_awards(link_id)],
        "stale_rounds": sorted(
            f"{t}/{r}" for (t, r) in link.open_rounds if service.floor.rounds[(t, r)].stale
        ),
    }


JSON_OR_CSV: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON, or CSV with format=csv",
        "content": {"application/json": {}, "text/csv": {}},
    }
}
# The columns of before, then those of every kind (appended: a reader by position works on).
AWARD_COLUMNS = (
    "id", "link", "table", "round", "box", "hand", "meter", "share", "state", "amount",
    "order", "sequence", "late", "dealt_at", "finalized_at", "kind", "for_box", "target",
)  # fmt: skip
AWARD_KINDS = f"^({'|'.join(KINDS)})$"


def time_range(start: str | None, end: str | None) -> tuple[int, int]:
    """`from` / `to` query filters (RFC 3339); a bad one is a 422 naming it."""
    bounds = []
    for name, text, default in (("from", start, -(2**62)), ("to", end, 2**62)):
        if text is None:
            bounds.append(default)
            continue
        try:
            bounds.append(parse_time(text))
        except ValueError as error:
            raise InvalidCommandError(f"{name} {error}", ("query", name)) from None
    return bounds[0], bounds[1]
