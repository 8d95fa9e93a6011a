"""The operators' routes: meters and their changes, proposals, audit, awards, reports."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from msgspec import UNSET
from pydantic import BaseModel

from app.api.answers import (
    Changes,
    CorrectionAnswer,
    JournalHead,
    MeterView,
    Proposal,
    ResetAnswer,
    SeedAnswer,
)
from app.api.auth import Principal, Tokens
from app.api.award_listing import award_page, past_for_export
from app.api.exports import JSON_OR_EXPORT, export_response
from app.api.reading import Auth, TableId, read_body, request_body, time_range
from app.api.responses import JSON_OR_CSV, JSONResponse
from app.api.schemas import CorrectionRequest, ResetRequest, SeedRequest
from app.audit.reconciliation import COLUMNS, Reports, to_csv
from app.audit.record_export import Page, export_audit, export_awards
from app.audit.table_report import COLUMNS as TABLE_COLUMNS
from app.audit.table_report import table_report_aside
from app.state.commands import (
    ApproveCommand,
    MeterCommand,
    ProposeCommand,
    RejectCommand,
    ResetCommand,
    SeedCommand,
)
from app.state.consequence_views import with_consequence
from app.state.floor_state import FloorState
from app.state.hold_views import with_holds
from app.state.operator_views import audit_view, proposal_view
from app.state.record_listings import AuditFilter, AwardFilter, matching_audit
from app.state.regulator_meters import meters_view
from app.state.views import level_fields
from app.store.past_award_book import AwardFilter as PastFilter
from app.writer.writer import Writer
from jackpot.commands import SEMANTICS
from jackpot.money import format_money, format_rate, parse_money
from tables.settle import KINDS

PAGE = 100  # a listing's default `limit`; an export's is every match
FORMAT = "^(json|csv|jsonl)$"  # csv and jsonl: exports, streamed (app/api/exports.py)
AWARD_KINDS = f"^({'|'.join(KINDS)})$"
Change = Callable[..., Awaitable[JSONResponse]]  # a meter change's endpoint


def operator_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:  # noqa: C901, PLR0915 - a router factory: each nested route adds its own branches
    def service() -> FloorState:
        return writer.service

    reports = Reports(writer.service.config)

    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    # A dependency runs before FastAPI validates the path; the changes read their body
    # themselves (`read_body`), after it: 401/403 come before any 422 (docs/api.md, Auth).
    # (A default, not an Annotated alias: this module's annotations are strings, looked
    # up in its globals, where `supervisor` is not.)
    by_supervisor = Depends(supervisor)

    @api.get("/v1/links/{link}/meters/{meter}", tags=["operators"], response_model=MeterView)
    async def get_meter(link: TableId, meter: TableId, authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        return JSONResponse(meter_view(service(), link, meter))

    async def operator_change(command: MeterCommand, by: str) -> JSONResponse:
        """A supervisor's change of a meter: at once, or with dual control a proposal
        (202); 404 for an unknown link or meter before anything is submitted."""
        meter_view(service(), command.link, command.meter)
        if writer.service.config.dual_control:
            proposal = ProposeCommand(command)
            _, answer = await writer.submit("propose", None, None, proposal, by=by)
            return JSONResponse(answer, status_code=202)
        _, answer = await writer.submit(command.kind, None, None, command, by=by)
        return JSONResponse(answer)

    def meter_change(
        method: str, change: str, model: type[BaseModel], answer: type[BaseModel]
    ) -> Callable[[Change], Change]:
        """The route of a change of one meter (`change`: seed, reset, corrections): its
        answer, or with dual control (202) the proposal."""
        route = api.put if method == "PUT" else api.post
        return route(
            f"/v1/links/{{link}}/meters/{{meter}}/{change}",
            tags=["operators"],
            openapi_extra={"requestBody": request_body(model)},
            response_model=answer,
            responses={202: {"model": Proposal, "description": "with dual control"}},
        )

    @meter_change("PUT", "seed", SeedRequest, SeedAnswer)
    async def put_seed(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, SeedRequest)
        change = SeedCommand(
            link=link,
            meter=meter,
            seed=parse_money(body.seed),
            reason=body.reason,
            version=SEMANTICS,  # the ceiling bounds it (docs/journal.md, versions)
        )
        return await operator_change(change, who.name)

    @meter_change("POST", "reset", ResetRequest, ResetAnswer)
    async def post_reset(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, ResetRequest)
        code = UNSET if body.reason_code is None else body.reason_code
        change = ResetCommand(link=link, meter=meter, reason=body.reason, reason_code=code)
        return await operator_change(change, who.name)

    @meter_change("POST", "corrections", CorrectionRequest, CorrectionAnswer)
    async def post_correction(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        """An audited correction (5.24): adjust, hand_paid (5.18.1) or void_round."""
        body = await read_body(request, CorrectionRequest)
        return await operator_change(body.command(link, meter), who.name)

    @api.get("/v1/changes", tags=["operators"], response_model=Changes)
    async def get_changes(authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        proposals = service().proposals.values()
        views = [with_consequence(service(), p, proposal_view(p)) for p in proposals]
        return JSONResponse({"changes": views})

    @api.post(
        "/v1/changes/{change}/approve",
        tags=["operators"],
        response_model=SeedAnswer | ResetAnswer | CorrectionAnswer,
    )
    async def approve(change: TableId, who: Principal = by_supervisor) -> JSONResponse:
        _, answer = await writer.submit("approve", None, None, ApproveCommand(change), by=who.name)
        return JSONResponse(answer)

    @api.post(
        "/v1/changes/{change}/reject",
        tags=["operators"],
        response_model=Proposal,
        openapi_extra={"requestBody": request_body(ResetRequest)},
    )
    async def reject(
        change: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, ResetRequest)
        command = RejectCommand(change, body.reason)
        _, answer = await writer.submit("reject", None, None, command, by=who.name)
        return JSONResponse(answer)

    @api.get("/v1/audit", tags=["operators"], responses=JSON_OR_EXPORT)
    async def get_audit(
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        link: str | None = None,
        table: str | None = None,
        action: str | None = None,
        limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        format: Annotated[str, Query(pattern=FORMAT)] = "json",
    ) -> Response:
        """Oldest first; `action` is an action (`correct:adjust`) or its first part
        (`correct`, `propose`), `table` the table of the round a correction names.
        `format=csv|jsonl` exports every match (or `limit` of them), streamed."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        wanted = AuditFilter(start, end, link, table, action)
        if format != "json":
            stream = await export_audit(service(), wanted, Page(offset, limit), format)
            return await export_response(stream, "audit", format)
        rows = matching_audit(service().audit, wanted)
        page = rows[offset : offset + (limit or PAGE)]
        return JSONResponse({"audit": [audit_view(a) for a in page], "total": len(rows)})

    @api.get("/v1/awards", tags=["operators"], responses=JSON_OR_EXPORT)
    async def get_awards(
        authorization: Auth = None,
        kind: Annotated[str | None, Query(pattern=AWARD_KINDS)] = None,
        link: str | None = None,
        meter: str | None = None,
        table: str | None = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        format: Annotated[str, Query(pattern=FORMAT)] = "json",
        state: Annotated[str | None, Query(pattern="^(pending|final|void|paid)$")] = None,
    ) -> Response:
        """Every award the server decided (every `kind`), newest first; `from`/`to` filter
        on the time the hand was dealt. `?link=L&meter=M&limit=25`: a level's last 25 hits.
        `?state=final`: the unpaid liability (final, not yet paid).
        `format=csv|jsonl` exports every match (or `limit` of them), streamed."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        # Past awards are in the journal's database (app/store/past_award_book.py), the
        # ones a decision or a payment may still need in memory: both are listed.
        past = PastFilter(kind, link, meter, table, state, start, end)
        if format != "json":
            page = Page(offset, limit)
            gone = await past_for_export(writer.journal, writer.committer.leaving, past, page.end)
            wanted = AwardFilter(start, end, kind, link, meter, table, state)
            stream = await export_awards(service(), wanted, page, format, writer.clock(), gone)
            return await export_response(stream, "awards", format)
        rows, total = await award_page(
            service, writer.journal, writer.committer.leaving, past, limit or PAGE, offset
        )
        now = writer.clock()
        return JSONResponse(
            {"awards": [with_holds(service(), r, now) for r in rows], "total": total}
        )

    @api.get("/v1/journal/head", tags=["operators"], response_model=JournalHead)
    async def get_journal_head(authorization: Auth = None) -> Response:
        """The last committed entry: `seq` (= entries, numbered from 1) and its chained
        `hash`, sha256(previous hash || canonical entry) as docs/journal.md specifies."""
        tokens.role(authorization, "operator")
        seq, head = writer.durable_head()
        return JSONResponse({"seq": seq, "entries": seq, "head": head})

    @api.get("/v1/reports/tables", tags=["operators"], responses=JSON_OR_CSV)
    async def get_table_report(
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        link: TableId | None = None,
        format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
    ) -> Response:
        """Per table and per property: rounds, wagers, contributions, reversals, awards,
        expired rounds; its sums are the reconciliation's (docs/api.md)."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        head, _ = writer.durable_head()
        report = await table_report_aside(reports, writer.journal, start, end, head, link)
        if format == "csv":
            return Response(to_csv(report["tables"], TABLE_COLUMNS), media_type="text/csv")
        return JSONResponse(report)

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


def meter_view(service: FloorState, link_id: str, meter_id: str) -> dict[str, Any]:
    link = service.floor.link(link_id)
    index = service.floor.meter_index(link, meter_id)
    meter, config = link.meters[index], link.config.meters[index]
    # docs/api.md: `value` and `reserve` at one instant, pending events counted in both;
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
            f"{t}/{r}" for (t, r) in service.floor.watch().stale_holding_rounds(link_id)
        ),
        **level_fields(link, index),
        "meters": meters_view(meter),
    }
