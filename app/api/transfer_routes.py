"""Money moved from one meter to another (always under dual control), and a link taken
off the floor (docs/api.md "Transfers and retirement")."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import Field, StrictBool

from app.api.auth import Principal, Tokens
from app.api.reading import Auth, TableId, read_body, request_body
from app.api.schemas import Id, Money, Reason, Strict
from app.state.commands import ProposeCommand, RetireCommand, TransferCommand
from app.writer.writer import Writer
from jackpot.money import parse_money


class TransferRequest(Strict):
    """`amount`: money, or "above_seed" (what the source's value holds above its seed, to
    the micro-unit) or "all" (its whole value), reckoned when the transfer is approved.
    `include_reserve`: the source's whole reserve goes to the target's reserve too."""

    to_link: Id
    to_meter: Id
    amount: Annotated[Money | Literal["above_seed", "all"], Field(examples=["100.00"])]
    include_reserve: StrictBool = False
    reason: Reason


class RetireRequest(Strict):
    reason: Reason


TRANSFER_BODIES = (TransferRequest, RetireRequest)


def transfer_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    by_supervisor = Depends(supervisor)

    @api.post(
        "/v1/links/{link}/meters/{meter}/transfers",
        tags=["operators"],
        status_code=202,
        openapi_extra={"requestBody": request_body(TransferRequest)},
    )
    async def post_transfer(
        link: TableId, meter: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        """Always a proposal (202), whatever the floor's dual_control: a second
        supervisor's approval (`POST /v1/changes/{id}/approve`) applies it."""
        body = await read_body(request, TransferRequest)
        floor = writer.service.floor
        for name, meter_id in ((link, meter), (body.to_link, body.to_meter)):
            floor.meter_index(floor.link(name), meter_id)  # 404 before anything is submitted
        amount: int | Literal["above_seed", "all"] = (
            "above_seed" if body.amount == "above_seed" else "all" if body.amount == "all"
            else parse_money(body.amount)
        )  # fmt: skip
        change = TransferCommand(
            link=link, meter=meter, to_link=body.to_link, to_meter=body.to_meter,
            amount=amount, include_reserve=body.include_reserve, reason=body.reason,
        )  # fmt: skip
        _, answer = await writer.submit("propose", None, None, ProposeCommand(change), by=who.name)
        return JSONResponse(answer, status_code=202)

    @api.post(
        "/v1/links/{link}/retire",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(RetireRequest)},
        responses={202: {"description": "with dual control: the proposal"}},
    )
    async def post_retire(
        link: TableId, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, RetireRequest)
        writer.service.floor.link(link)  # 404 before anything is submitted
        command = RetireCommand(link=link, reason=body.reason)
        if writer.service.config.dual_control:
            proposal = ProposeCommand(command)
            _, answer = await writer.submit("propose", None, None, proposal, by=who.name)
            return JSONResponse(answer, status_code=202)
        _, answer = await writer.submit("retire", None, None, command, by=who.name)
        return JSONResponse(answer)
