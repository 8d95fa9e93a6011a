"""How a route reads its request: the token first, then the path, the body and the query
filters, each bad one a 422 naming it (docs/api.md, Auth); and their OpenAPI description.
The table events read theirs in app/api/table_events/."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from fastapi import Header, Path, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.api.schemas import ID_PATTERN
from app.state.timefmt import parse_time
from jackpot.errors import InvalidCommandError

Auth = Annotated[str | None, Header(alias="Authorization")]
TableId = Annotated[str, Path(pattern=ID_PATTERN)]
RoundId = TableId


Body = TypeVar("Body", bound=BaseModel)


def request_body(body: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI requestBody of a route that reads its body itself (`read_body`)."""
    schema = {"$ref": f"#/components/schemas/{body.__name__}"}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


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
        for e in errors:
            # A validator's exception: its traceback's frames lead back to this one, which
            # holds it: a cycle that a freeze of the writer's state would keep for ever.
            ctx = e.get("ctx")
            cause = ctx.get("error") if isinstance(ctx, dict) else None
            if isinstance(cause, BaseException):
                cause.__traceback__ = None
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
