"""The payments' routes: a supervisor pays an award, another operator witnesses it, a
table records what its dealer paid; the payout slip (docs/api.md "Payments")."""

from __future__ import annotations

import contextlib
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from app.api.auth import Tokens
from app.api.reading import Auth, read_body, request_body
from app.api.responses import JSONResponse
from app.api.schemas import ID_PATTERN, Box, Money
from app.api.table_events.handlers import ID_RE
from app.state.commands import PaidCommand, PaidConfirmCommand, TablePaidCommand
from app.state.payments import find_award, payment_view
from app.state.timefmt import format_time
from app.store.past_award_book import PastAwardBook
from app.writer.writer import Writer
from jackpot.errors import StateConflictError, UnknownError
from jackpot.money import format_money, parse_money

Method = Literal["cash", "chips", "cheque", "transfer", "table"]  # app/state/payments.py


class PaidRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    amount: Money
    method: Method
    reference: Annotated[StrictStr, Field(max_length=200)] = ""
    note: Annotated[StrictStr, Field(max_length=500)] = ""


class TablePaidRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    boxes: Annotated[list[Box], Field(min_length=1, max_length=52)]


PAYMENT_BODIES: tuple[type[BaseModel], ...] = (PaidRequest, TablePaidRequest)


def payment_routes(api: APIRouter, writer: Writer, tokens: Tokens) -> None:
    @api.post(
        "/v1/awards/{award:path}/paid/confirm",
        tags=["operators"],
    )
    async def confirm_paid(award: str, authorization: Auth = None) -> JSONResponse:
        """A second operator witnesses a payment above `witness_above` (not its payer)."""
        who = tokens.role(authorization, "operator")
        command = PaidConfirmCommand(award)
        _, answer = await writer.submit("paid_confirm", None, None, command, by=who.name)
        return JSONResponse(answer)

    @api.post(
        "/v1/awards/{award:path}/paid",
        tags=["operators"],
        openapi_extra={"requestBody": request_body(PaidRequest)},
    )
    async def post_paid(award: str, request: Request, authorization: Auth = None) -> JSONResponse:
        """A supervisor pays a final award: its amount exactly, once."""
        who = tokens.role(authorization, "supervisor")
        body = await read_body(request, PaidRequest)
        command = PaidCommand(
            award, parse_money(body.amount), body.method, body.reference, body.note
        )
        try:
            _, answer = await writer.submit("paid", None, None, command, by=who.name)
        except UnknownError:
            await settled_before(writer, award)  # it left memory: paid or void
            raise
        return JSONResponse(answer)

    @api.get("/v1/awards/{award:path}/slip", tags=["operators"])
    async def get_slip(award: str, authorization: Auth = None) -> JSONResponse:
        """The payout slip: the award, its payment, and the journal entries that record it."""
        tokens.role(authorization, "operator")
        return JSONResponse(await slip(writer, award))

    @api.post(
        "/v1/tables/{table}/rounds/{round}/paid",
        tags=["tables"],
        openapi_extra={"requestBody": request_body(TablePaidRequest)},
    )
    async def post_table_paid(table: str, round: str, request: Request) -> JSONResponse:
        """What the table's dealer paid from the rack: the fixed awards of these boxes."""
        principal = tokens.principal(request.headers.get("authorization"))
        bad = [(n, v) for n, v in (("table", table), ("round", round)) if not ID_RE.fullmatch(v)]
        if bad:
            raise RequestValidationError(
                [{"type": "string_pattern_mismatch", "loc": ("path", n),
                  "msg": f"String should match pattern '{ID_PATTERN}'", "input": v}
                 for n, v in bad]
            )  # fmt: skip
        tokens.allow_table(principal, table)
        body = await read_body(request, TablePaidRequest)
        command = TablePaidCommand(list(body.boxes))
        status, answer = await writer.submit("table_paid", table, round, command)
        return JSONResponse(answer, status_code=status)


async def slip(writer: Writer, award_id: str) -> dict[str, Any]:
    """What a payout slip prints, checkable against the journal later: each entry's seq
    and chain hash (null until it is committed)."""
    service = writer.service
    record = service.payments.get(award_id)
    if record is None:
        record = await _past_payment(writer, award_id)
    if record is None:
        find_award(service, award_id)  # 404 for no such award
        raise UnknownError(f"award {award_id} has no payment", ("path", "award"))
    entries = []
    for seq in (record["seq"], record["confirm_seq"]):
        if seq is not None:
            entries.append({"seq": seq, "hash": await _hash_of(writer, seq)})
    return {
        "award": {
            "id": award_id, "kind": record["kind"], "hand": record["hand"],
            "amount": format_money(record["amount"]), "link": record["link"],
            "meter": record["meter"], "table": record["table"], "round": record["round"],
            "box": record["box"], "dealt_at": format_time(record["dealt_at"]),
        },
        "payment": payment_view(record),
        "journal": entries,
    }  # fmt: skip


async def _past_payment(writer: Writer, award_id: str) -> dict[str, Any] | None:
    """The payment of an award that left memory paid, as the state held it (its
    `past_awards` row keeps it), read off the writer's loop."""
    book = writer.journal
    if not isinstance(book, PastAwardBook):
        return None
    past = (await book.past_awards_by_id([award_id])).get(award_id)
    if past is None:
        return None
    if past.payment is None:
        paid = json.loads(past.row).get("payment")
        detail = (
            f"award {award_id} has no payment"
            if paid is None
            else f"award {award_id} was paid ({paid}) before its row kept its payment: "
            "its entries are in the journal"
        )
        raise UnknownError(detail, ("path", "award"))
    record: dict[str, Any] = json.loads(past.payment)
    return record


async def _hash_of(writer: Writer, seq: int) -> str | None:
    if seq > writer.durable_head()[0]:
        return None
    async with writer.lookups:
        rows = writer.journal.read(seq - 1, batch=1)
        async with contextlib.aclosing(rows):  # type: ignore[type-var]
            async for row in rows:
                return row.hash if row.seq == seq else None
    return None


async def settled_before(writer: Writer, award: str) -> None:
    """An award that left memory (app/state/past_awards.py) was void or paid: 409 as for
    one in memory (docs/api.md "Payments"), read from the book, off the writer's loop."""
    book = writer.journal
    if not isinstance(book, PastAwardBook):
        return
    past = (await book.past_awards_by_id([award])).get(award)
    if past is None:
        return
    row = json.loads(past.row)
    if "payment" not in row:
        raise StateConflictError(f"award {award} is {row['state']}: it cannot be paid")
    raise StateConflictError(
        f"award {award} is already paid: {row['payment']} by {row['paid_by']} at "
        f"{row['paid_at']}, {row['amount']} ({row['method']})"
    )
