"""The journal's canonical JSON: sorted keys, no spaces, UTF-8; and its exact reader,
every integer exact whatever its size (docs/journal.md)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def canonical_json(data: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text (docs/journal.md). orjson gives the same text as
    `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, faster
    (docs/performance.md); integers beyond 64 bits, which it refuses, take the slow path."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class UnreadableJson(ValueError):
    """Journal or snapshot text that `canonical_json` never writes: not JSON, or with a
    number that is not an integer (money and times are integers)."""


# Bytes -> "0" for a digit, "." for ".", "e", "E", " " for the rest: a run of 19 "0" is an
# integer orjson may not hold (it reads one beyond 64 bits as a float, silently: 2**64 ->
# 1.8446744073709552e19), "0." a number with a fraction or an exponent. Either (or the
# same in a string: "5.8.1", a hex digest) takes the exact path.
_NUMBER_SHAPE = bytes(48 if 48 <= i <= 57 else 46 if i in b".eE" else 32 for i in range(256))
_LONG = b"0" * 19


def loads_exact(text: str | bytes, what: str) -> Any:
    """Journal or snapshot JSON -> data, every integer exact whatever its size; a number
    with a fraction or an exponent is refused with `what` (the entry) named.

    orjson (about three times as fast) reads the text when nothing in it could be one of
    those; the standard library's parser, exact for integers, reads the rest."""
    raw = text.encode() if isinstance(text, str) else text
    shape = raw.translate(_NUMBER_SHAPE)
    try:
        if _LONG not in shape and b"0." not in shape:
            return orjson.loads(raw)
        return json.loads(raw, parse_float=_refuse, parse_constant=_refuse)
    except UnreadableJson as error:
        raise UnreadableJson(
            f"{what}: {error} is not an integer (the journal holds none)"
        ) from None
    except ValueError as error:  # orjson's and json's JSONDecodeError
        raise UnreadableJson(f"{what}: not JSON ({error})") from None


def _refuse(number: str) -> Any:
    raise UnreadableJson(number)
