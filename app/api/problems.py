"""One table from errors to HTTP statuses, and one error shape: problem+json (RFC 9457)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.store.errors import JournalUnavailable
from app.writer.refusals import AnswerFailed, Conflict, Unavailable, Unrecorded
from jackpot.errors import InvalidCommandError, JackpotError, StateConflictError, UnknownError
from tables.errors import TablesError

MEDIA_TYPE = "application/problem+json"

# Most specific first: the first matching class decides.
STATUS: list[tuple[type[Exception], int, str]] = [
    (UnknownError, 404, "Not found"),
    (StateConflictError, 409, "Conflict with the recorded state"),
    (Conflict, 409, "Conflict with an earlier event"),
    (InvalidCommandError, 422, "Invalid request"),
    (TablesError, 422, "Invalid request"),
    (JackpotError, 422, "Invalid request"),
    (Unavailable, 503, "Events cannot be recorded"),
    # A read of the journal (an archived round, the reconciliation, the first answer of a
    # late retry) while the database is away: as unavailable as a write, not a 500.
    (JournalUnavailable, 503, "The journal cannot be reached"),
    (Unrecorded, 500, "Internal error: nothing was recorded"),
    (AnswerFailed, 500, "Internal error: the event is recorded; retry it for its answer"),
]


class AuthError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def problem(
    status: int,
    title: str,
    detail: str,
    errors: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
    kind: str = "about:blank",
    extensions: dict[str, Any] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": kind,
        "title": title,
        "status": status,
        "detail": detail,
    }
    if errors is not None:
        body["errors"] = errors
    body.update(extensions or {})
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def domain_problem(error: BaseException) -> JSONResponse:
    for cls, status, title in STATUS:
        if isinstance(error, cls):
            detail = getattr(error, "message", None) or str(error)
            loc: tuple[str | int, ...] = getattr(error, "loc", ()) or ()
            where = [] if loc and loc[0] in ("query", "path") else ["body"]
            errors = [{"loc": [*where, *loc], "msg": detail}] if status == 422 else None
            headers = {"Retry-After": "1"} if status == 503 else None
            # A refusal with a type of its own (RFC 9457 3.1.1) and its members.
            kind = getattr(error, "problem_type", "about:blank")
            extensions = getattr(error, "extensions", None)
            return problem(status, title, detail, errors, headers, kind, extensions)
    raise error


def install(app: FastAPI) -> None:
    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [{"loc": list(e.get("loc", ())), "msg": _message(e)} for e in exc.errors()]
        detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
        return problem(422, "Invalid request", detail, errors)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return problem(
            exc.status_code, str(exc.detail), str(exc.detail), headers=getattr(exc, "headers", None)
        )

    async def on_auth(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AuthError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        title = "Unauthorized" if exc.status == 401 else "Forbidden"
        return problem(exc.status, title, exc.detail, headers=headers)

    async def on_domain(request: Request, exc: Exception) -> JSONResponse:
        return domain_problem(exc)

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(AuthError, on_auth)
    for cls, _, _ in STATUS:
        assert issubclass(cls, Exception)
        app.add_exception_handler(cls, on_domain)


def _message(error: Any) -> str:
    msg = str(error.get("msg", "invalid"))
    if (
        error.get("type") == "string_type"
        and error.get("loc")
        and error["loc"][-1] in ("ante", "jackpot", "jackpot_dealer", "seed")
    ):
        return 'money must be a decimal string such as "1.00", not a JSON number'
    if error.get("type") == "string_pattern_mismatch" and "0-9]{0,14}" in str(error.get("ctx", {})):
        return 'must be an amount: a decimal string with at most two places, such as "1.00"'
    return msg.removeprefix("Value error, ")
