"""Sign-in, sign-out and sessions (docs/api.md "Sign-in and sessions"), the sign-in log
and its lockouts (app/api/sessions.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from app.api.account_schemas import SignInRequest
from app.api.auth import Principal, Tokens
from app.api.problems import AuthError, problem
from app.api.reading import Auth, read_body, request_body, time_range
from app.api.schemas import Strict, problem_responses
from app.api.sessions import (
    COOKIE,
    CURRENT,
    SignInRefused,
    SignIns,
    client_address,
    origin_problem,
)
from app.state.timefmt import format_time
from app.store.sessions import Session, SignInEvent, SignInQuery
from app.writer.writer import Writer


class UnlockRequest(Strict):
    """One of the two: the name (as typed at the sign-in) or the address locked out."""

    name: str | None = None
    address: str | None = None


SIGNIN_BODIES = (SignInRequest, UnlockRequest)


def session_view(session: Session) -> dict[str, Any]:
    return {
        "id": session.id_sha256[:16],  # enough to name it, never the cookie
        "account": session.account,
        "address": session.address,
        "created_at": format_time(session.created_at),
        "last_seen_at": format_time(session.last_seen_at),
        "expires_at": format_time(session.expires_at),
    }


def event_view(event: SignInEvent) -> dict[str, Any]:
    view: dict[str, Any] = {
        "seq": event.seq,
        "at": format_time(event.at),
        "event": event.event,
        "name": event.name,
        "address": event.address,
        "detail": event.detail,
    }
    if event.until is not None:
        view["until"] = format_time(event.until)
    if event.scope:
        view["scope"] = event.scope
    return view


def signin_routes(signins: SignIns, tokens: Tokens, writer: Writer) -> APIRouter:  # noqa: C901, PLR0915 - only registers seven short routes over the same parts; ruff counts each route's branches into it
    api = APIRouter(tags=["sign-in"], responses=problem_responses(401, 403, 404, 422, 503))
    policy = signins.policy

    def supervisor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "supervisor")

    def auditor(authorization: Auth = None) -> Principal:
        return tokens.role(authorization, "auditor")

    by_supervisor, by_auditor = Depends(supervisor), Depends(auditor)

    def you(session: Session) -> dict[str, Any]:
        account = writer.service.accounts.account(session.account)
        return {
            "name": account.name,
            "display_name": account.display_name,
            "role": account.role,
            "via": "session",
            "csrf_token": session.csrf,
            "expires_at": format_time(session.expires_at),
            "idle_timeout_s": policy.idle_ms // 1000,
        }

    @api.post(
        "/v1/signin",
        openapi_extra={"requestBody": request_body(SignInRequest)},
        responses={429: {"description": "locked out: too many failed sign-ins"}},
    )
    async def sign_in(request: Request) -> JSONResponse:
        """A name and a password: the session cookie (HttpOnly, SameSite=Strict, Secure
        over https) and who signed in, with the CSRF token its state changes carry. 401
        whichever of the two was wrong; 429 while the name or the address is locked out."""
        refused = origin_problem(request.scope, request.headers, required=False)
        if refused is not None:
            return problem(403, "Forbidden", refused)
        body = await read_body(request, SignInRequest)
        try:
            opened = await signins.sign_in(body.name, body.password, client_address(request.scope))
        except SignInRefused as error:
            headers = (
                None if error.retry_after_s is None else {"Retry-After": str(error.retry_after_s)}
            )
            title = "Unauthorized" if error.status == 401 else "Too many failed sign-ins"
            return problem(error.status, title, error.detail, headers=headers)
        answer = JSONResponse(you(opened.session))
        answer.set_cookie(
            COOKIE,
            opened.session_id,
            max_age=policy.lifetime_ms // 1000,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return answer

    @api.post("/v1/signout")
    async def sign_out(request: Request) -> JSONResponse:
        """Ends the session (server-side: its cookie no longer works) and clears the cookie."""
        session = CURRENT.get()
        if session is None:
            raise AuthError(401, "no session to end")
        await signins.sign_out(session, client_address(request.scope))
        answer = JSONResponse({"signed_out": True})
        answer.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return answer

    @api.get("/v1/session")
    async def who(authorization: Auth = None) -> JSONResponse:
        """Who is calling: the session's account (with its CSRF token), or a token's."""
        principal = tokens.principal(authorization)
        session = CURRENT.get()
        if session is not None and authorization is None:
            return JSONResponse(you(session))
        return JSONResponse({"name": principal.name, "role": principal.kind, "via": "token"})

    @api.get("/v1/sessions")
    async def live_sessions(who: Principal = by_supervisor) -> JSONResponse:
        """The sessions open now (their accounts active, in the generation they began in)."""
        accounts = writer.service.accounts.by_name
        now = signins.clock()
        found = [
            s
            for s in await signins.sessions.live(now)
            if (a := accounts.get(s.account)) is not None
            and a.active
            and a.generation == s.generation
            and now - s.last_seen_at < policy.idle_ms
        ]
        return JSONResponse({"sessions": [session_view(s) for s in found]})

    @api.post("/v1/sessions/{session_id}/end")
    async def end_session(
        session_id: str, request: Request, who: Principal = by_supervisor
    ) -> JSONResponse:
        now = signins.clock()
        for session in await signins.sessions.live(now):
            if session.id_sha256[:16] == session_id:
                await signins.end(
                    session, "ended by a supervisor", who.name, client_address(request.scope)
                )
                return JSONResponse({"ended": session_view(session)})
        return problem(404, "Not found", f"no open session {session_id!r}")

    @api.post("/v1/signins/unlock", openapi_extra={"requestBody": request_body(UnlockRequest)})
    async def unlock(request: Request, who: Principal = by_supervisor) -> JSONResponse:
        """Lifts the lockout of a name or an address before its time."""
        body = await read_body(request, UnlockRequest)
        if (body.name is None) == (body.address is None):
            return problem(
                422, "Invalid request", "give the name or the address",
                [{"loc": ["body", "name"], "msg": "give the name or the address, one of them"}],
            )  # fmt: skip
        scope, key = ("name", body.name) if body.name is not None else ("address", body.address)
        assert key is not None
        await signins.unlock(scope, key, who.name, client_address(request.scope))
        return JSONResponse({"unlocked": {scope: key}})

    @api.get("/v1/signins")
    async def signin_log(
        who: Principal = by_auditor,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
        name: str | None = None,
        event: Literal[
            "signin", "failure", "lockout", "signout", "session_end", "unlock", "token_refused"
        ]
        | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0)] = 0,
    ) -> JSONResponse:
        """Every sign-in, failure, lockout, sign-out, session end and unlock, oldest first:
        who (or the name typed), when, from which address, and why."""
        start, end = time_range(from_, to)
        query = SignInQuery(start, end, name, event, limit, offset)
        events, total = await signins.sessions.events(query)
        return JSONResponse({"signins": [event_view(e) for e in events], "total": total})

    return api
