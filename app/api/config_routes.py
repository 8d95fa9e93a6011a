"""The parameters in force, their history, and a parameters proposal decided by a second
supervisor under dual control (docs/api.md "Parameters")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from app.api.auth import Principal, Tokens
from app.api.problems import AuthError
from app.api.reading import Auth, read_body, request_body
from app.api.responses import JSONResponse
from app.api.schemas import ResetRequest
from app.ops.software import authenticate
from app.state.commands import ConfigDecisionCommand
from app.state.parameter_kinds import waiting_proposal
from app.writer.writer import Writer


def config_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    by_supervisor = Depends(supervisor)

    @api.get("/v1/config", tags=["operators"])
    async def get_config(authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        recorded = writer.service.parameters
        proposal = recorded.proposal
        return JSONResponse({
            "seq": recorded.seq, "at": recorded.at, "sha256": recorded.sha256,
            "params": recorded.params,
            "proposal": None if proposal is None else _without_params(proposal),
            "retired": writer.service.retired,
        })  # fmt: skip

    @api.get("/v1/config/history", tags=["operators"])
    async def get_config_history(authorization: Auth = None) -> JSONResponse:
        tokens.role(authorization, "operator")
        return JSONResponse({"changes": writer.service.parameters.history})

    @api.get("/v1/about", tags=["operators"])
    async def get_about(authorization: Auth = None) -> JSONResponse:
        """The software authenticated at start and the parameters in force."""
        tokens.role(authorization, "operator")
        if writer.identity is None:  # built without one (tests): what runs now
            writer.identity = authenticate().record()
        recorded = writer.service.parameters
        return JSONResponse({
            **writer.identity, "params_sha256": recorded.sha256, "params_seq": recorded.seq,
        })  # fmt: skip

    def decided_by_another(proposal_id: str, who: Principal) -> None:
        """404 when nothing waits under that id; 403 for the proposal's own author."""
        proposal = waiting_proposal(writer.service, proposal_id)
        if proposal.get("by") == who.name:
            raise AuthError(
                403, f"dual control: {who.name} made this change; another supervisor decides it"
            )

    @api.post("/v1/config/proposals/{proposal}/approve", tags=["operators"])
    async def approve_config(proposal: str, who: Principal = by_supervisor) -> JSONResponse:
        decided_by_another(proposal, who)
        command = ConfigDecisionCommand(proposal)
        _, answer = await writer.submit("config_approve", None, None, command, by=who.name)
        return JSONResponse(answer)

    @api.post(
        "/v1/config/proposals/{proposal}/reject",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(ResetRequest)},
    )
    async def reject_config(
        proposal: str, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        body = await read_body(request, ResetRequest)
        decided_by_another(proposal, who)
        command = ConfigDecisionCommand(proposal, body.reason)
        _, answer = await writer.submit("config_reject", None, None, command, by=who.name)
        return JSONResponse(answer)


def _without_params(proposal: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in proposal.items() if k != "params"}
