"""A must-hit-by level's hidden trigger: drawn in [from, by), committed to, then revealed.

The commitment is the sha256, in lower-case hex, of the text "<trigger>|<nonce>": the
trigger as money text with two places ("473.12") and the nonce as drawn (hex). Published
at the draw, it fixes the trigger before play without telling it; the reveal at the hit
lets anyone recompute it (`jackpot check-commitment`). The randomness is a parameter:
the writer draws with `secrets` (the core never holds a generator).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from jackpot.errors import InvalidCommandError
from jackpot.money import CENT, Money, format_money, is_whole_cents

NONCE_BYTES = 16  # 128 bits: the trigger cannot be found by trying every cent and nonce


@dataclass(frozen=True, slots=True)
class Trigger:
    """A drawn trigger and its nonce: secret until the level hits."""

    value: Money
    nonce: str  # hex

    @property
    def commitment(self) -> str:
        return commitment(self.value, self.nonce)


def commitment(trigger: int, nonce: str) -> str:
    """sha256("<trigger>|<nonce>") in hex: what is published at the draw."""
    return hashlib.sha256(f"{format_money(trigger)}|{nonce}".encode()).hexdigest()


def check_range(low: int, high: int) -> None:
    """[low, high) holds at least one cent: low and high whole cents, low < high."""
    if not (is_whole_cents(low) and is_whole_cents(high)) or low >= high:
        raise InvalidCommandError(
            f"a must-hit-by range is whole cents with from < by, not "
            f"[{format_money(low)}, {format_money(high)})"
        )


def draw_trigger(
    low: int, high: int, randbelow: Callable[[int], int], token_hex: Callable[[int], str]
) -> Trigger:
    """A trigger uniform over the cents of [low, high), and a fresh nonce.

    `randbelow(n)` is uniform over 0..n-1 and `token_hex(k)` gives k random bytes as hex:
    `secrets.randbelow` and `secrets.token_hex` in the writer.
    """
    check_range(low, high)
    cents = (high - low) // CENT
    return Trigger(Money(low + randbelow(cents) * CENT), token_hex(NONCE_BYTES))


def reveal_problems(published: str, trigger: int, nonce: str, low: int, high: int) -> list[str]:
    """What is wrong with a reveal: it does not match its commitment, or the trigger was
    outside its range or not whole cents. Empty: the reveal is sound."""
    problems = []
    if commitment(trigger, nonce) != published:
        problems.append(
            f"sha256({format_money(trigger)}|{nonce}) is not the commitment {published}"
        )
    if not is_whole_cents(trigger) or not low <= trigger < high:
        problems.append(
            f"the trigger {format_money(trigger)} is outside "
            f"[{format_money(low)}, {format_money(high)}) or not whole cents"
        )
    return problems


def first_crossing(value: int, contributions: list[int], trigger: int) -> int | None:
    """The index of the first contribution (in event order) that takes the meter from
    `value` to or past `trigger`: that round wins the level. None: none does."""
    for index, amount in enumerate(contributions):
        value += amount
        if amount > 0 and value >= trigger:
            return index
    return None
