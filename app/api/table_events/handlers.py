"""The handler of each table event, whichever way it came in: the token, the path's ids,
the body decoded into its command, the writer's answer."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError

from app.api.auth import Tokens
from app.api.responses import JSONResponse
from app.api.schemas import ID_PATTERN
from app.api.table_events.decoding import decode
from app.state.commands import Command
from app.state.views import outcome_answer
from app.writer.writer import Writer

ID_RE = re.compile(ID_PATTERN)


@dataclass(frozen=True, slots=True)
class TableEvent:
    """A table event as its handler reads it: the Authorization header, the path's table
    and round, and the body, read only after the token is checked."""

    authorization: str | None
    table: str
    round: str
    body: Callable[[], Awaitable[bytes]]


def table_event_of(request: Request) -> TableEvent:
    params = request.path_params
    return TableEvent(
        request.headers.get("authorization"), params["table"], params["round"], request.body
    )


EventHandler = Callable[[TableEvent], Awaitable[Response]]


class JournaledAnswer(Response):
    """The journaled text of a first answer (or a retry's), sent as it is: the headers
    Starlette's `Response(text, media_type="application/json")` makes, made at once."""

    media_type = "application/json"

    def __init__(self, text: bytes) -> None:
        self.status_code = 200
        self.background = None
        self.body = text
        self.raw_headers = [
            (b"content-length", str(len(text)).encode("latin-1")),
            (b"content-type", b"application/json"),
        ]


async def event_command(event: TableEvent, kind: str, tokens: Tokens) -> tuple[str, str, Command]:
    """The table, round and command of a table event. The token first (docs/api.md,
    Auth: 401, then 403 for another table's round), before anything is said about the
    body; then a 422 naming every bad field (as FastAPI words it: `loc` starts with
    "path" or "body")."""
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
    return event.table, event.round, decode(kind, await event.body())


def table_event_handlers(writer: Writer, tokens: Tokens) -> dict[str, EventHandler]:
    """The handler of each table event, by kind: what the FastAPI routes and the direct
    route call. The answer is the journaled text, sent as it is."""

    async def bets(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, "bets", tokens)
        _, answer = await writer.submit_json("bets", table, round_id, command)
        return JournaledAnswer(answer)

    async def outcome(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, "outcome", tokens)
        await writer.submit("outcome", table, round_id, command)
        # Meter awards are pending until the watermark passes them: wait a while for
        # their final amounts; the waiting holds up nothing else (the writer goes on).
        await writer.wait_final(table, round_id, writer.outcome_wait_s)
        return JSONResponse(outcome_answer(writer.service, table, round_id))

    async def void(event: TableEvent) -> Response:
        table, round_id, command = await event_command(event, "void", tokens)
        _, answer = await writer.submit_json("void", table, round_id, command)
        return JournaledAnswer(answer)

    return {"bets": bets, "outcome": outcome, "void": void}
