"""Tokens managed at run time (docs/api.md "Tokens"): personal tokens an operator makes
for scripts, and a table's token replaced without a restart. A token is answered once,
when it is made; only its sha256 is journaled."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from app.api.account_changes import AccountChanges
from app.api.account_schemas import TokenRequest
from app.api.auth import Principal
from app.api.problems import AuthError
from app.api.reading import Auth, TableId, read_body, request_body
from app.api.schemas import problem_responses
from app.state.account_kinds import token_view
from app.state.accounts import AccountRole

TOKEN_BODIES = (TokenRequest,)


def token_routes(changes: AccountChanges) -> APIRouter:
    api = APIRouter(tags=["tokens"], responses=problem_responses(401, 403, 404, 409, 422, 503))
    tokens, writer = changes.tokens, changes.writer

    def account(authorization: Auth = None) -> Principal:
        principal = tokens.principal(authorization)
        if principal.kind == "table":
            raise AuthError(403, "a table's token makes no tokens")
        return principal

    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    by_account, by_supervisor = Depends(account), Depends(supervisor)

    @api.post(
        "/v1/tokens", status_code=201, openapi_extra={"requestBody": request_body(TokenRequest)}
    )
    async def create_token(request: Request, who: Principal = by_account) -> JSONResponse:
        """A personal token of the caller's account: `token` is in this answer only."""
        body = await read_body(request, TokenRequest)
        made = await changes.create_token(who.name, who.name, body.name, body.days)
        return JSONResponse({**made.answer, "token": made.token}, status_code=201)

    @api.get("/v1/tokens")
    async def list_tokens(who: Principal = by_account) -> JSONResponse:
        """The caller's tokens; a supervisor's answer has every account's."""
        every = writer.service.accounts.tokens.values()
        mine = [t for t in every if who.kind == AccountRole.supervisor or t.account == who.name]
        return JSONResponse({"tokens": [token_view(t) for t in mine]})

    @api.post("/v1/tokens/{token_id}/revoke")
    async def revoke_token(token_id: TableId, who: Principal = by_account) -> JSONResponse:
        """The token stops at once: its owner or a supervisor revokes it."""
        token = writer.service.accounts.tokens.get(token_id)
        if token is not None and token.account != who.name and who.kind != "supervisor":
            raise AuthError(403, "only its owner or a supervisor may revoke a token")
        return JSONResponse(await changes.revoke_token(who.name, token_id))

    @api.post("/v1/tables/{table}/token", status_code=201, tags=["tables"])
    async def new_table_token(table: TableId, who: Principal = by_supervisor) -> JSONResponse:
        """The table's new token, in this answer only; the one it replaces works until
        `grace_until` (the floor's `table_token_grace_ms`), then answers 401."""
        made = await changes.new_table_token(who.name, table)
        return JSONResponse({**made.answer, "token": made.token}, status_code=201)

    return api
