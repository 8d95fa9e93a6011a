"""The msgspec decoding of table events (app/api/table_events/decoding.py) against the
pydantic models it stands in for: every body it takes, the model takes, with the same
command; every good body it takes; everything else the model decides (its 422s unchanged)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from fastapi.exceptions import RequestValidationError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.api.table_events.decoding import BODIES as WIRE
from app.api.table_events.decoding import decode, fast_command
from app.state.commands import Command, VoidCommand

# Good values, then bad ones (a final newline, a full-width digit, a bound passed...).
TIMES = (
    ["2026-11-22T18:00:00.123Z", "2026-11-22T18:00:00Z", "2026-11-22T18:00:00+08:00"],
    ["2026-11-22T18:00:00.123Z\n", "2026-11-22 18:00:00", "2026-13-22T18:00:00Z", "", "x"],
)
MONEY = (
    ["0", "1.00", "10.5", "999999999999999.99", "0.00"],
    ["1000000000000000", "01.00", "1.001", "-1.00", "1.00\n", " 1.00", "1e2", "", "１.00"],
)
CARDS = (["AS", "as", "10H", "Td", "2c"], ["ZZ", "1H", "AS\n", "A", "", "AX", "ＡS"])
TEXT = (["ok", "x" * 64, "\u00e9", "\ud83d\ude00", "a\x00b", " a "],
        ["", " ", "\u200b", "\t\n", "x" * 65, "y" * 501])  # fmt: skip
# A JSON value of any kind: where a field wants another, both must refuse.
ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
    st.just([]), st.just({}),
)  # fmt: skip


def field(
    good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = ODD
) -> st.SearchStrategy[Any]:
    """Mostly a good value (so that whole bodies are good often enough), now and then not."""
    return st.sampled_from(range(16)).flatmap(
        lambda n: bad if n == 14 else ODD if n == 15 else good
    )


def pick(values: tuple[list[Any], list[Any]], *more: Any) -> st.SearchStrategy[Any]:
    return field(st.sampled_from([*values[0], *more]), st.sampled_from(values[1]))


def obj(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """An object with any subset of the fields, now and then an unknown one."""
    keys = st.lists(st.sampled_from(sorted(fields)), unique=True)
    extra = st.dictionaries(st.sampled_from(["extra", "Box", "boxes "]), ODD, max_size=1)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        chosen = draw(keys) if draw(st.integers(0, 9)) == 0 else sorted(fields)
        value = {k: draw(fields[k]) for k in chosen}
        if draw(st.integers(0, 19)) == 0:
            value.update(draw(extra))
        return value

    return build()


BOX = field(st.integers(1, 52), st.sampled_from([0, 53, -1, 2**64]))
BET = obj({
    "box": BOX, "ante": pick(MONEY), "jackpot": pick(MONEY, None),
    "jackpot_dealer": pick(MONEY, None), "player": pick(TEXT, None),
})  # fmt: skip
BETS = obj(
    {
        "closed_at": pick(TIMES),
        "boxes": field(st.lists(BET, min_size=1, max_size=8), st.lists(BET, max_size=54)),
    }
)
HAND = field(st.lists(pick(CARDS), max_size=7), st.lists(pick(CARDS), max_size=8))
OUTCOME = obj({
    "boxes": field(st.lists(obj({
        "box": BOX, "dealt_at": pick(TIMES), "cards": HAND, "folded": field(st.booleans()),
    }), max_size=53)),
    "dealer": field(st.one_of(st.none(), obj({"cards": HAND, "dealt_at": pick(TIMES, None)}))),
})  # fmt: skip
VOID = obj(
    {
        "reason": pick(TEXT),
        "boxes": field(st.one_of(st.none(), st.lists(BOX, min_size=1, max_size=53)), st.just([])),
    }
)
BODIES: list[tuple[str, st.SearchStrategy[dict[str, Any]]]] = [
    ("bets", BETS), ("outcome", OUTCOME), ("void", VOID),
]  # fmt: skip


def encodings(value: Any, duplicates: bool = True) -> st.SearchStrategy[bytes]:
    """The body as a client may send it: compact, spaced, escaped, with a duplicate key."""
    texts = [json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)]
    if duplicates and isinstance(value, dict) and value:
        key = next(iter(value))
        texts.append(json.dumps(value)[:-1] + f', "{key}": "dup"}}')
        texts.append('{"' + key + '": null, ' + json.dumps(value)[1:])
    return st.sampled_from([t.encode("utf-8", "surrogatepass") for t in texts])


def pydantic_command(kind: str, raw: bytes) -> Command | None:
    """The command of a body the model takes, read from the model's fields."""
    body = WIRE[kind]
    try:
        model = body.model.model_validate_json(raw)
    except ValidationError:
        return None
    return body.command(msgspec.convert(model.model_dump(), body.wire))


@pytest.mark.parametrize("kind,bodies", BODIES, ids=lambda x: x if isinstance(x, str) else "")
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_body_taken_is_the_models_with_the_same_command(
    kind: str, bodies: st.SearchStrategy[dict[str, Any]], data: st.DataObject
) -> None:
    raw = data.draw(bodies.flatmap(encodings))
    fast = fast_command(kind, raw)
    if fast is not None:
        assert pydantic_command(kind, raw) == fast


@pytest.mark.parametrize("kind,bodies", BODIES, ids=lambda x: x if isinstance(x, str) else "")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_body_the_model_takes_goes_the_short_way(
    kind: str, bodies: st.SearchStrategy[dict[str, Any]], data: st.DataObject
) -> None:
    # Refusing what the model takes would only be slower, yet then it is not the shortcut
    # it claims to be. A repeated key is the exception: msgspec checks each of its values,
    # pydantic only the last, so such a body goes to pydantic (same answer, slower).
    raw = data.draw(bodies.flatmap(lambda value: encodings(value, duplicates=False)))
    reference = pydantic_command(kind, raw)
    if reference is not None:
        assert fast_command(kind, raw) == reference


BETS_AT = b'{"closed_at": "2026-11-22T18:00:00Z", "boxes": '
HAND_AT = b'{"boxes": [{"box": 1, "dealt_at": "2026-11-22T18:00:00Z", "cards": '


@pytest.mark.parametrize(
    "kind,raw",
    [
        ("bets", BETS_AT + b'[{"box": 1, "ante": "1.00\\n"}]}'),
        ("bets", BETS_AT + b'[{"box": true}]}'),
        ("bets", BETS_AT + b'[{"box": 1.0}]}'),
        ("bets", BETS_AT + b'[{"box": 1, "ante": 1}]}'),
        ("bets", BETS_AT + b"[]}"),
        ("bets", BETS_AT + b'[{"box": 1, "jackpot_dealer": ""}]}'),  # not "0"
        ("outcome", HAND_AT + b'["ZZ"]}]}'),
        ("outcome", HAND_AT + b'["AS\\n"]}]}'),
        ("void", b'{"reason": "\\u200b"}'),
        ("void", b'{"reason": "x", "boxes": [-0]}'),
        ("void", b'{"reason": "x", "unknown": 1}'),
        ("void", b'{"reason": "\\ud800"}'),
        ("void", b'\xef\xbb\xbf{"reason": "x"}'),
    ],
)  # fmt: skip
def test_a_bad_body_is_left_to_the_model(kind: str, raw: bytes) -> None:
    assert pydantic_command(kind, raw) is None  # the model refuses it: so must the shortcut
    assert fast_command(kind, raw) is None


def test_the_cards_looked_up_are_exactly_those_the_schema_takes() -> None:
    # Rule 5.8.1: every string of one to three characters over the cards' alphabet (and a
    # few others), through the schema's Card, against the shortcut's table of cards.
    from itertools import product

    from pydantic import TypeAdapter

    from app.api.table_events.decoding import CARDS
    from app.api.table_events.request_models import Card

    card = TypeAdapter(Card)
    alphabet = "0123456789TJQKAtjqkaSHDCshdcXZ1 \n"
    taken = set()
    for size in (1, 2, 3):
        for letters in product(alphabet, repeat=size):
            text = "".join(letters)
            try:
                card.validate_python(text)
            except ValidationError:
                continue
            taken.add(text)
    assert taken == set(CARDS)
    assert all(CARDS[c] == c.upper() for c in CARDS)


def test_a_body_only_the_model_takes_is_decoded_through_it() -> None:
    # A repeated key: msgspec refuses it, pydantic takes the last value; same command.
    raw = b'{"reason": null, "reason": "misdeal", "boxes": [2]}'
    assert fast_command("void", raw) is None
    assert decode("void", raw) == VoidCommand("misdeal", [2])


def test_a_body_the_model_refuses_is_a_422_naming_the_field() -> None:
    with pytest.raises(RequestValidationError) as refused:
        decode("void", b'{"reason": "\\u200b"}')
    [error] = refused.value.errors()
    assert error["loc"] == ("body", "reason") and error["type"] == "reason_blank"
