"""The accounts' routes (docs/api.md "Accounts"): supervisors list, create, disable,
re-enable accounts, reset their passwords and change their roles; every change is a
journal entry (app/api/account_changes.py)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from app.api.account_changes import AccountChanges
from app.api.account_schemas import (
    NAME_PATTERN,
    AccountRequest,
    PasswordRequest,
    ReasonRequest,
    RoleRequest,
)
from app.api.auth import Principal
from app.api.reading import Auth, read_body, request_body
from app.api.schemas import problem_responses
from app.state.account_kinds import account_view

Name = Annotated[str, Path(pattern=NAME_PATTERN)]
PENDING: dict[int | str, dict[str, Any]] = {
    202: {"description": "with dual control: the supervisor role waits for another"}
}
# The bodies these routes read themselves: the app describes them in OpenAPI.
ACCOUNT_BODIES = (AccountRequest, ReasonRequest, PasswordRequest, RoleRequest)


def account_routes(changes: AccountChanges) -> APIRouter:
    api = APIRouter(tags=["accounts"], responses=problem_responses(401, 403, 404, 409, 422, 503))
    tokens, writer = changes.tokens, changes.writer

    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    # The caller is checked before the path and the body (docs/api.md, Auth).
    by_supervisor = Depends(supervisor)

    @api.get("/v1/accounts")
    async def list_accounts(who: Principal = by_supervisor) -> JSONResponse:
        accounts = writer.service.accounts.by_name.values()
        return JSONResponse({"accounts": [account_view(a) for a in accounts]})

    @api.post(
        "/v1/accounts",
        status_code=201,
        openapi_extra={"requestBody": request_body(AccountRequest)},
        responses=PENDING,
    )
    async def create_account(request: Request, who: Principal = by_supervisor) -> JSONResponse:
        """201; with dual control, a supervisor is created an operator with the role
        `pending_role` until another supervisor approves it (202)."""
        body = await read_body(request, AccountRequest)
        answer = await changes.create(
            who.name, body.name, body.display_name, body.role, body.password
        )
        return JSONResponse(answer, status_code=202 if answer["pending_role"] else 201)

    @api.get("/v1/accounts/{name}")
    async def get_account(name: Name, who: Principal = by_supervisor) -> JSONResponse:
        return JSONResponse(account_view(writer.service.accounts.account(name)))

    @api.post(
        "/v1/accounts/{name}/disable", openapi_extra={"requestBody": request_body(ReasonRequest)}
    )
    async def disable(name: Name, request: Request, who: Principal = by_supervisor) -> JSONResponse:
        """Its sessions end at once; its tokens stop working. The last active supervisor
        cannot be disabled (409)."""
        body = await read_body(request, ReasonRequest)
        return JSONResponse(await changes.disable(who.name, name, body.reason))

    @api.post(
        "/v1/accounts/{name}/enable", openapi_extra={"requestBody": request_body(ReasonRequest)}
    )
    async def enable(name: Name, request: Request, who: Principal = by_supervisor) -> JSONResponse:
        body = await read_body(request, ReasonRequest)
        return JSONResponse(await changes.enable(who.name, name, body.reason))

    @api.post(
        "/v1/accounts/{name}/password", openapi_extra={"requestBody": request_body(PasswordRequest)}
    )
    async def reset_password(
        name: Name, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        """Every session of the account ends."""
        body = await read_body(request, PasswordRequest)
        return JSONResponse(await changes.set_password(who.name, name, body.password))

    @api.post(
        "/v1/accounts/{name}/role",
        openapi_extra={"requestBody": request_body(RoleRequest)},
        responses=PENDING,
    )
    async def change_role(
        name: Name, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        """200; with dual control, granting `supervisor` waits for a second supervisor (202)."""
        body = await read_body(request, RoleRequest)
        status, answer = await changes.set_role(who.name, name, body.role)
        return JSONResponse(answer, status_code=status)

    @api.post("/v1/accounts/{name}/role/approve")
    async def approve_role(name: Name, who: Principal = by_supervisor) -> JSONResponse:
        return JSONResponse(await changes.decide(who.name, name, approve=True))

    @api.post("/v1/accounts/{name}/role/reject")
    async def reject_role(name: Name, who: Principal = by_supervisor) -> JSONResponse:
        return JSONResponse(await changes.decide(who.name, name, approve=False))

    return api
