"""The table events' bodies as pydantic models: their OpenAPI schemas, and the wording of
every 422 (a body msgspec does not take whole is decided here: decoding.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.api.schemas import Box, Money, Reason, Strict, Time

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


class BoxBetRequest(Strict):
    box: Box
    ante: Money = "0"
    jackpot: Money | None = None
    jackpot_dealer: Money | None = None
    player: Annotated[StrictStr, Field(min_length=1, max_length=64)] | None = None


class BetsRequest(Strict):
    closed_at: Time
    boxes: Annotated[list[BoxBetRequest], Field(min_length=1, max_length=52)]


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


class VoidRequest(Strict):
    reason: Reason
    boxes: Annotated[list[Box], Field(min_length=1, max_length=52)] | None = None
