"""The request bodies' shared fields and the operators' bodies (pydantic: their OpenAPI
schemas and 422 wording), each made its command (app/state/commands.py); the problems'
schema. The table events' bodies are app/api/table_events/request_models.py."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from msgspec import UNSET
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)
from pydantic_core import PydanticCustomError

from app.state.commands import CorrectCommand
from app.state.timefmt import parse_time
from jackpot.commands import SEMANTICS
from jackpot.money import MAX_MONEY_TEXT, parse_money

# Money is a decimal string with at most two places; a JSON number is refused (docs/api.md).
MONEY_PATTERN = r"^(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$"


def _bounded(text: str) -> str:
    parse_money(text.removeprefix("-"))  # at most MAX_MONEY (jackpot.money): 422 naming it
    return text


_AT_MOST = f"at most {MAX_MONEY_TEXT}"
Money = Annotated[
    StrictStr,
    Field(pattern=MONEY_PATTERN, examples=["1.00"], description=_AT_MOST),
    AfterValidator(_bounded),
]


def _time(text: str) -> str:
    parse_time(text)  # raises ValueError with the reason: pydantic reports it with its loc
    return text


Time = Annotated[StrictStr, AfterValidator(_time), Field(examples=["2026-11-22T18:00:00.123Z"])]
Box = Annotated[StrictInt, Field(ge=1, le=52)]


def _visible(text: str) -> str:
    # Spaces, control and format characters (a zero-width space) say nothing in an audit.
    if all(unicodedata.category(c)[0] in "CZ" for c in text):
        raise PydanticCustomError("reason_blank", "a reason must have visible text")
    return text


Reason = Annotated[StrictStr, Field(min_length=1, max_length=500), AfterValidator(_visible)]
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
Id = Annotated[str, Field(pattern=ID_PATTERN)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeedRequest(Strict):
    seed: Money
    reason: Reason


# One of the listed reasons (jackpot/reduction_reasons.py): the writer names the list.
ReasonCode = Annotated[StrictStr, Field(min_length=1, max_length=64)]


class ResetRequest(Strict):
    reason: Reason
    reason_code: ReasonCode | None = None


SignedMoney = Annotated[
    StrictStr,
    Field(pattern=r"^-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$", description=_AT_MOST),
    AfterValidator(_bounded),
]


class CorrectionRequest(Strict):
    """kind adjust: `amount` signed; hand_paid: `amount` paid by hand (5.18.1), `reset`
    to return the meter to its seed; void_round: `table` and `round` (5.24)."""

    kind: Literal["adjust", "hand_paid", "void_round"]
    reason: Reason
    reason_code: ReasonCode | None = None
    amount: SignedMoney = "0"
    reset: StrictBool = True
    table: Id | None = None
    round: Id | None = None

    def command(self, link: str, meter: str) -> CorrectCommand:
        negative = self.amount.startswith("-")
        amount = parse_money(self.amount.lstrip("-"))
        # The rules it is applied by (docs/journal.md, versions): void_round reverses at
        # the current position since 2, the ceiling bounds an adjust since 3.
        return CorrectCommand(
            version=SEMANTICS,
            correction=self.kind,
            link=link,
            meter=meter,
            amount=-amount if negative else amount,
            reset=self.reset,
            table=self.table,
            round=self.round,
            reason=self.reason,
            reason_code=UNSET if self.reason_code is None else self.reason_code,
        )


class ProblemError(BaseModel):
    loc: list[str | int]
    msg: str


class Problem(BaseModel):
    """Every error answer: application/problem+json (RFC 9457)."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[ProblemError] | None = None


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI documentation of the error answers a route can give."""
    what = {
        401: "no valid bearer token",
        403: "the token may not do this",
        404: "unknown table, round, link or meter",
        409: "conflicts with the recorded state or an earlier event",
        422: "invalid input: `errors` lists each field and the reason",
        503: "events cannot be recorded now (Retry-After)",
    }
    schema = {"schema": {"$ref": "#/components/schemas/Problem"}}
    return {
        s: {
            "description": what[s],
            "content": {"application/problem+json": schema},
            "model": Problem,
        }
        for s in statuses
    }
