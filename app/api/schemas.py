"""Request bodies at the edge (pydantic), converted to plain domain values for the writer."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.state.timefmt import parse_time
from jackpot.commands import SEMANTICS
from jackpot.money import MAX_MONEY_TEXT, parse_money

# Money is a decimal string with at most two places; a JSON number is refused (API.md).
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
CARD_PATTERN = r"^([2-9TJQKAtjqka]|10)[SHDCshdc]$"
_CARD = re.compile(CARD_PATTERN.strip("^$"))
NOT_A_CARD, _NOT_A_CARD = "not_a_card", '"{card}" is not a card (rule 5.8.1)'


def _card(text: str) -> str:
    # Rule 5.8.1: a card that is not of the deck. The hand's model adds where it is.
    if _CARD.fullmatch(text) is None:
        raise PydanticCustomError(NOT_A_CARD, _NOT_A_CARD, {"card": text})
    return text


# The pattern stays in the schema for clients; the check is `_card`, for its message.
Card = Annotated[
    StrictStr,
    AfterValidator(_card),
    Field(examples=["AS"], json_schema_extra={"pattern": CARD_PATTERN}),
]
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


class BoxBetRequest(Strict):
    box: Box
    ante: Money = "0"
    jackpot: Money | None = None
    jackpot_dealer: Money | None = None
    player: Annotated[StrictStr, Field(min_length=1, max_length=64)] | None = None


class BetsRequest(Strict):
    closed_at: Time
    boxes: Annotated[list[BoxBetRequest], Field(min_length=1, max_length=52)]

    def domain(self) -> dict[str, Any]:
        return {
            "closed_at": parse_time(self.closed_at),
            "boxes": [
                {
                    "box": b.box,
                    "ante": parse_money(b.ante),
                    "jackpot": parse_money(b.jackpot or "0"),
                    "jackpot_dealer": parse_money(b.jackpot_dealer or "0"),
                    "player": b.player,
                }
                for b in self.boxes
            ],
        }


def _name_cards(data: Any, handler: ValidatorFunctionWrapHandler, hand: str) -> Any:
    """Validate a hand; a card that is not a card is named by its hand and place
    ('box 1, card 5: "ZZ" is not a card (rule 5.8.1)'), its `loc` unchanged."""
    try:
        return handler(data)
    except ValidationError as error:
        lines = error.errors(include_url=False)
        if not any(e["type"] == NOT_A_CARD for e in lines):
            raise
        if "{box}" in hand:
            box = data.get("box") if isinstance(data, dict) else None
            hand = hand.format(box=box if isinstance(box, int) else "?")
        named: list[InitErrorDetails] = []
        for e in lines:
            kind: str | PydanticCustomError = e["type"]
            if kind == NOT_A_CARD:
                where = f"{hand}, card {int(e['loc'][-1]) + 1}: "
                kind = PydanticCustomError(NOT_A_CARD, where + _NOT_A_CARD, e.get("ctx"))
            line: InitErrorDetails = {"type": kind, "loc": e["loc"], "input": e["input"]}
            if "ctx" in e:
                line["ctx"] = e["ctx"]
            named.append(line)
        raise ValidationError.from_exception_data(error.title, named) from None


class _Hand(Strict):
    """A hand whose bad card is named with whose hand it is (`where`)."""

    where: ClassVar[str]

    @model_validator(mode="wrap")
    @classmethod
    def _cards_named(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        return _name_cards(data, handler, cls.where)


class BoxHandRequest(_Hand):
    where = "box {box}"
    box: Box
    dealt_at: Time
    cards: Annotated[list[Card], Field(max_length=7)]
    folded: StrictBool = False


class DealerRequest(_Hand):
    where = "dealer"
    cards: Annotated[list[Card], Field(max_length=7)]
    dealt_at: Time | None = None


class OutcomeRequest(Strict):
    boxes: Annotated[list[BoxHandRequest], Field(max_length=52)]
    dealer: DealerRequest | None = None

    def domain(self) -> dict[str, Any]:
        dealer = None
        if self.dealer is not None:
            dealer = {
                "cards": [c.upper() for c in self.dealer.cards],
                "dealt_at": None
                if self.dealer.dealt_at is None
                else parse_time(self.dealer.dealt_at),
            }
        return {
            "boxes": [
                {
                    "box": b.box,
                    "dealt_at": parse_time(b.dealt_at),
                    "cards": [c.upper() for c in b.cards],
                    "folded": b.folded,
                }
                for b in self.boxes
            ],
            "dealer": dealer,
        }


class VoidRequest(Strict):
    reason: Reason
    boxes: Annotated[list[Box], Field(min_length=1, max_length=52)] | None = None

    def domain(self) -> dict[str, Any]:
        return {"reason": self.reason, "boxes": self.boxes}


class SeedRequest(Strict):
    seed: Money
    reason: Reason


class ResetRequest(Strict):
    reason: Reason


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
    amount: SignedMoney = "0"
    reset: StrictBool = True
    table: Id | None = None
    round: Id | None = None

    def domain(self, link: str, meter: str) -> dict[str, Any]:
        negative = self.amount.startswith("-")
        amount = parse_money(self.amount.lstrip("-"))
        # The rules it is applied by (docs/journal.md, versions): void_round reverses at
        # the current position since 2, the ceiling bounds an adjust since 3.
        return {
            "version": SEMANTICS,
            "correction": self.kind,
            "link": link,
            "meter": meter,
            "amount": -amount if negative else amount,
            "reset": self.reset,
            "table": self.table,
            "round": self.round,
            "reason": self.reason,
        }


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
