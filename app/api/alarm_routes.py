"""The console's alarms acknowledged: `POST /v1/alarms/acknowledge` (supervisor), an
`acknowledge` journal entry and its audit record (docs/api.md "Alarms")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from pydantic import Field, StrictStr

from app.api.auth import Tokens
from app.api.reading import Auth, read_body, request_body
from app.api.responses import JSONResponse
from app.api.schemas import Strict
from app.state.commands import AcknowledgeCommand
from app.writer.writer import Writer

# `<source>:<what>`: a source's name, then what it is about (an award, a round, a table
# and since when), as the console builds it.
ALARM_PATTERN = r"^[a-z_]{1,32}:[A-Za-z0-9_.:/@+|-]{1,200}$"
Note = Annotated[StrictStr, Field(max_length=500)]


class AcknowledgeRequest(Strict):
    alarm: Annotated[StrictStr, Field(pattern=ALARM_PATTERN, examples=["pending:stud/3"])]
    note: Note = ""


def alarm_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    @api.post(
        "/v1/alarms/acknowledge",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(AcknowledgeRequest)},
    )
    async def acknowledge(request: Request, authorization: Auth = None) -> JSONResponse:
        """A supervisor has seen an alarm: who and when go into the journal and the audit."""
        who = tokens.role(authorization, "supervisor")
        body = await read_body(request, AcknowledgeRequest)
        command = AcknowledgeCommand(body.alarm, body.note)
        _, answer = await writer.submit("acknowledge", None, None, command, by=who.name)
        return JSONResponse(answer)
