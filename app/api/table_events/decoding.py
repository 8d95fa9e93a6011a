"""A table event's body decoded once into its command (app/state/commands.py).

msgspec decodes and checks a body in one pass into the wire structs below, about a third
of pydantic's time for a round of seven boxes. It only ever says yes: a body it does not
take whole (a bad field, an unknown one, a repeated key) goes to the pydantic models
(request_models.py), which decide and word the 422; one they take is then read into the
same wire struct. Either way `_COMMANDS` makes the command, so every body taken here is
taken by the model with the same command (tests/unit/app/api/test_event_bodies.py).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from pydantic import BaseModel

from app.api.reading import validate
from app.api.schemas import MONEY_PATTERN
from app.api.table_events.request_models import (
    CARD_PATTERN,
    BetsRequest,
    OutcomeRequest,
    VoidRequest,
)
from app.state.commands import BetsCommand, Command, OutcomeCommand, VoidCommand
from app.state.entries import PostedBox, PostedDealer, PostedHand
from app.state.timefmt import parse_time
from jackpot.money import Money, parse_money

# Python's `$` also matches before a final newline, pydantic's (Rust regex) does not.
_MONEY = re.compile(MONEY_PATTERN.removesuffix("$") + r"\Z")
_CARD = re.compile(CARD_PATTERN.removesuffix("$") + r"\Z")
# Every card the schema's Card takes (rule 5.8.1), to its upper case: a look-up, not a regex.
CARDS = {
    card: card.upper()
    for card in (rank + suit for rank in [*"23456789TJQKAtjqka", "10"] for suit in "SHDCshdc")
    if _CARD.match(card)
}
Box = Annotated[int, msgspec.Meta(ge=1, le=52)]
Boxes = Annotated[list[Box], msgspec.Meta(min_length=1, max_length=52)]
Player = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Reason = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]
Hand = Annotated[list[str], msgspec.Meta(max_length=7)]  # cards: `CARDS[card]`


class _Struct(msgspec.Struct, forbid_unknown_fields=True):
    pass


class BoxBetBody(_Struct):
    box: Box
    ante: str = "0"  # amounts: checked and parsed by `money`
    jackpot: str | None = None
    jackpot_dealer: str | None = None
    player: Player | None = None


class Bets(_Struct):
    closed_at: str
    boxes: Annotated[list[BoxBetBody], msgspec.Meta(min_length=1, max_length=52)]


class BoxHandBody(_Struct):
    box: Box
    dealt_at: str
    cards: Hand
    folded: bool = False


class Dealer(_Struct):
    cards: Hand
    dealt_at: str | None = None


class Outcome(_Struct):
    boxes: Annotated[list[BoxHandBody], msgspec.Meta(max_length=52)]
    dealer: Dealer | None = None


class Void(_Struct):
    reason: Reason
    boxes: Boxes | None = None


@functools.lru_cache(maxsize=4_096)  # a floor's wagers are a few amounts, again and again
def money(text: str) -> Money:
    """An amount as the schema's Money takes it (pattern, then at most MAX_MONEY)."""
    if _MONEY.match(text) is None:
        raise ValueError(text)
    return parse_money(text)


def bets_command(body: Bets) -> BetsCommand:
    return BetsCommand(
        parse_time(body.closed_at),
        [
            PostedBox(
                b.box,
                money(b.ante),
                # Absent or null is 0; "" is not an amount (the schema's pattern).
                money("0" if b.jackpot is None else b.jackpot),
                money("0" if b.jackpot_dealer is None else b.jackpot_dealer),
                b.player,
            )
            for b in body.boxes
        ],
    )


def outcome_command(body: Outcome) -> OutcomeCommand:
    dealer = body.dealer
    return OutcomeCommand(
        [
            PostedHand(b.box, parse_time(b.dealt_at), [CARDS[c] for c in b.cards], b.folded)
            for b in body.boxes
        ],
        None
        if dealer is None
        else PostedDealer(
            [CARDS[c] for c in dealer.cards],
            None if dealer.dealt_at is None else parse_time(dealer.dealt_at),
        ),
    )


def void_command(body: Void) -> VoidCommand:
    # As the model's Reason: one of only spaces, control or format characters is refused.
    if all(unicodedata.category(c)[0] in "CZ" for c in body.reason):
        raise ValueError("a reason must have visible text")
    return VoidCommand(body.reason, body.boxes)


class _Body:
    """A kind's wire struct, its decoder, its command and the model that words a 422."""

    def __init__(
        self, wire: type[Any], command: Callable[[Any], Command], model: type[BaseModel]
    ) -> None:
        self.wire, self.decoder = wire, msgspec.json.Decoder(wire)
        self.command, self.model = command, model


BODIES = {
    "bets": _Body(Bets, bets_command, BetsRequest),
    "outcome": _Body(Outcome, outcome_command, OutcomeRequest),
    "void": _Body(Void, void_command, VoidRequest),
}


def fast_command(kind: str, raw: bytes) -> Command | None:
    """The command of a body msgspec takes whole, or None: then the model decides."""
    body = BODIES[kind]
    try:
        return body.command(body.decoder.decode(raw))
    except Exception:  # any refusal at all: the pydantic model words it (module docstring)
        return None


def decode(kind: str, raw: bytes) -> Command:
    """The command of a table event's body (`kind`: bets, outcome, void), or a 422
    naming every bad field (as FastAPI words it: `loc` starts with "body")."""
    command = fast_command(kind, raw)
    if command is not None:
        return command
    body = BODIES[kind]
    model = validate(body.model, raw)
    return body.command(msgspec.convert(model.model_dump(), body.wire))
