"""What is in play: supervisors suspend and resume a link, a table or boxes (rules 5.17,
5.18.2); a table asks whether its progressive is in play (its heartbeat)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import Field, StrictInt

from app.api.auth import Principal, Tokens
from app.api.reading import Auth, TableId, read_body, request_body
from app.api.schemas import Reason, Strict
from app.state.commands import InPlayCommand, ProposeCommand, ResumeCommand, SuspendCommand
from app.state.in_play_state import table_status
from app.writer.writer import Writer

Box = Annotated[StrictInt, Field(ge=1, le=52)]


class LinkInPlayRequest(Strict):
    reason: Reason


class TableInPlayRequest(Strict):
    """`boxes` absent: the whole table."""

    reason: Reason
    boxes: Annotated[list[Box], Field(min_length=1, max_length=52)] | None = None


IN_PLAY_BODIES = (LinkInPlayRequest, TableInPlayRequest)


def in_play_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    by_supervisor = Depends(supervisor)

    async def change(command: InPlayCommand, by: str) -> JSONResponse:
        """At once, or with dual control a proposal (202), as a meter's changes."""
        if writer.service.config.dual_control:
            proposal = ProposeCommand(command)
            _, answer = await writer.submit("propose", None, None, proposal, by=by)
            return JSONResponse(answer, status_code=202)
        _, answer = await writer.submit(command.kind, None, None, command, by=by)
        return JSONResponse(answer)

    def routes(action: str, command: type[InPlayCommand]) -> None:
        @api.post(
            f"/v1/links/{{link}}/{action}",
            tags=["operators"],
            openapi_extra={"requestBody": request_body(LinkInPlayRequest)},
            name=f"{action}_link",
        )
        async def link_action(
            link: TableId, request: Request, who: Principal = by_supervisor
        ) -> JSONResponse:
            body = await read_body(request, LinkInPlayRequest)
            writer.service.floor.link(link)  # 404 before anything is submitted
            named = command(link=link, table=None, boxes=None, reason=body.reason)
            return await change(named, who.name)

        @api.post(
            f"/v1/tables/{{table}}/{action}",
            tags=["operators"],
            openapi_extra={"requestBody": request_body(TableInPlayRequest)},
            name=f"{action}_table",
        )
        async def table_action(
            table: TableId, request: Request, who: Principal = by_supervisor
        ) -> JSONResponse:
            body = await read_body(request, TableInPlayRequest)
            writer.service.table(table)  # 404 before anything is submitted
            named = command(link=None, table=table, boxes=body.boxes, reason=body.reason)
            return await change(named, who.name)

    routes("suspend", SuspendCommand)
    routes("resume", ResumeCommand)

    @api.get("/v1/tables/{table}/status", tags=["tables"])
    async def get_status(table: TableId, authorization: Auth = None) -> JSONResponse:
        """Whether the progressive is in play at the table, its boxes out of play, since
        when and why, the link's status and the server's time. The table's own poll is
        its heartbeat (docs/api.md, "Is the progressive in play?")."""
        principal = tokens.reader(authorization, table)
        service = writer.service
        service.table(table)  # 404
        now = writer.clock()
        if principal.kind == "table":
            writer.heard(table, now)
        link_status = "degraded" if writer.degraded else "ok"
        return JSONResponse(table_status(service, table, now, link_status))
