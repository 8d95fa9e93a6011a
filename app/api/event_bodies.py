"""The table events' bodies decoded by msgspec: the hot path's shortcut to their commands.

Bets, outcomes and voids are nearly all of the server's traffic. msgspec decodes and
checks a body in one pass into plain structs, about a third of pydantic's time for a
round of seven boxes. It only ever says yes: a body it does not take whole (a bad field,
an unknown one, anything unusual) is handed to the pydantic models of app/api/schemas.py,
which decide and word the 422 as they always have. So the answers are the models' by
construction; what must hold is that every body taken here is taken by the model too,
with the same command (tests/unit/app/api/test_event_bodies.py).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from pydantic import BaseModel

from app.api.schemas import (
    CARD_PATTERN,
    MONEY_PATTERN,
    BetsRequest,
    OutcomeRequest,
    VoidRequest,
)
from app.state.timefmt import parse_time
from jackpot.money import parse_money

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


class BoxBet(_Struct):
    box: Box
    ante: str = "0"  # amounts: checked and parsed by `money`
    jackpot: str | None = None
    jackpot_dealer: str | None = None
    player: Player | None = None


class Bets(_Struct):
    closed_at: str
    boxes: Annotated[list[BoxBet], msgspec.Meta(min_length=1, max_length=52)]


class BoxHand(_Struct):
    box: Box
    dealt_at: str
    cards: Hand
    folded: bool = False


class Dealer(_Struct):
    cards: Hand
    dealt_at: str | None = None


class Outcome(_Struct):
    boxes: Annotated[list[BoxHand], msgspec.Meta(max_length=52)]
    dealer: Dealer | None = None


class Void(_Struct):
    reason: Reason
    boxes: Boxes | None = None


_BETS = msgspec.json.Decoder(Bets)
_OUTCOME = msgspec.json.Decoder(Outcome)
_VOID = msgspec.json.Decoder(Void)


@functools.lru_cache(maxsize=4_096)  # a floor's wagers are a few amounts, again and again
def money(text: str) -> int:
    """An amount as the schema's Money takes it (pattern, then at most MAX_MONEY)."""
    if _MONEY.match(text) is None:
        raise ValueError(text)
    return parse_money(text)


def bets_command(raw: bytes) -> dict[str, Any]:
    """As BetsRequest.domain() (app/api/schemas.py)."""
    body = _BETS.decode(raw)
    return {
        "closed_at": parse_time(body.closed_at),
        "boxes": [
            {
                "box": b.box,
                "ante": money(b.ante),
                # Absent or null is 0; "" is not an amount (the schema's pattern).
                "jackpot": money("0" if b.jackpot is None else b.jackpot),
                "jackpot_dealer": money("0" if b.jackpot_dealer is None else b.jackpot_dealer),
                "player": b.player,
            }
            for b in body.boxes
        ],
    }


def outcome_command(raw: bytes) -> dict[str, Any]:
    """As OutcomeRequest.domain()."""
    body = _OUTCOME.decode(raw)
    dealer = body.dealer
    return {
        "boxes": [
            {
                "box": b.box,
                "dealt_at": parse_time(b.dealt_at),
                "cards": [CARDS[c] for c in b.cards],
                "folded": b.folded,
            }
            for b in body.boxes
        ],
        "dealer": None
        if dealer is None
        else {
            "cards": [CARDS[c] for c in dealer.cards],
            "dealt_at": None if dealer.dealt_at is None else parse_time(dealer.dealt_at),
        },
    }


def void_command(raw: bytes) -> dict[str, Any]:
    """As VoidRequest.domain()."""
    body = _VOID.decode(raw)
    # As schemas._visible: a reason of only spaces, control or format characters is refused.
    if all(unicodedata.category(c)[0] in "CZ" for c in body.reason):
        raise ValueError("a reason must have visible text")
    return {"reason": body.reason, "boxes": body.boxes}


COMMANDS: dict[type[BaseModel], Callable[[bytes], dict[str, Any]]] = {
    BetsRequest: bets_command,
    OutcomeRequest: outcome_command,
    VoidRequest: void_command,
}


def fast_command(model: type[BaseModel], raw: bytes) -> dict[str, Any] | None:
    """The command of a body msgspec takes whole, or None: then the model decides."""
    command = COMMANDS.get(model)
    if command is None:
        return None
    try:
        return command(raw)
    except Exception:  # any refusal at all: the pydantic model words it (module docstring)
        return None
