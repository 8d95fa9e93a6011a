"""How a route reads its request: the token first, then the path, the body and the query
filters, each bad one a 422 naming it (API.md, Auth); and their OpenAPI description."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Header, Path, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.api.auth import Tokens
from app.api.event_bodies import fast_command
from app.api.schemas import (
    ID_PATTERN,
    BetsRequest,
    CorrectionRequest,
    OutcomeRequest,
    ResetRequest,
    SeedRequest,
    VoidRequest,
)
from app.state.timefmt import parse_time
from jackpot.errors import InvalidCommandError

Auth = Annotated[str | None, Header(alias="Authorization")]
TableId = Annotated[str, Path(pattern=ID_PATTERN)]
RoundId = TableId


Body = TypeVar("Body", bound=BaseModel)
Event = BetsRequest | OutcomeRequest | VoidRequest
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


@dataclass(frozen=True, slots=True)
class TableEvent:
    """A table event as its handler reads it: the Authorization header, the path's table
    and round, and the body, read only after the token is checked. From a Starlette
    request (`table_event_of`) or straight from the server's protocol (app/api/table_lane.py)."""

    authorization: str | None
    table: str
    round: str
    body: Callable[[], Awaitable[bytes]]


def table_event_of(request: Request) -> TableEvent:
    params = request.path_params
    return TableEvent(
        request.headers.get("authorization"), params["table"], params["round"], request.body
    )


async def event_command(
    event: TableEvent, model: type[Event], tokens: Tokens
) -> tuple[str, str, dict[str, Any]]:
    """The table, round and command (the body's `domain()`) of a table event. The token
    first (API.md, Auth: 401, then 403 for another table's round), before anything is said
    about the body; then a 422 naming every bad field (as FastAPI words it: `loc` starts
    with "path" or "body")."""
    principal = tokens.principal(event.authorization)
    errors: list[dict[str, Any]] = []
    for name, value in (("table", event.table), ("round", event.round)):
        if ID_RE.fullmatch(value) is None:  # `$` alone would let a final newline in
            errors.append({
                "type": "string_pattern_mismatch", "loc": ("path", name),
                "msg": f"String should match pattern '{ID_PATTERN}'", "input": value,
                "ctx": {"pattern": ID_PATTERN},
            })  # fmt: skip
    if errors:  # no table has such an id: its token cannot be anyone's
        raise RequestValidationError(errors)
    tokens.allow_table(principal, event.table)
    raw = await event.body()
    # msgspec takes a good body; any other is the model's to refuse (app/api/event_bodies.py).
    command = fast_command(model, raw)
    if command is None:
        command = validate(model, raw).domain()
    return event.table, event.round, command


async def read_body(request: Request, model: type[Body]) -> Body:
    """The request's body as `model`, or a 422 naming every bad field. Routes read their
    body themselves, after the token: FastAPI reads a declared body (and answers 422 for
    bad JSON) before any dependency runs."""
    return validate(model, await request.body())


def validate(model: type[Body], raw: bytes) -> Body:
    try:
        return model.model_validate_json(raw)
    except ValidationError as error:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        raise RequestValidationError(errors) from None


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
