"""A must-hit-by trigger: uniform over the cents of [from, by), committed, revealed, and the
first crossing in event order wins."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jackpot.errors import InvalidCommandError
from jackpot.money import CENT, Money, parse_money
from jackpot.mystery import (
    Trigger,
    check_range,
    commitment,
    draw_trigger,
    first_crossing,
    reveal_problems,
)

LOW, HIGH = parse_money("400.00"), parse_money("500.00")
NONCE = "00112233445566778899aabbccddeeff"


def test_the_commitment_is_the_sha256_of_the_trigger_text_and_nonce() -> None:
    # Computed by hand, as a player would: printf '473.12|<nonce>' | sha256sum
    expected = hashlib.sha256(b"473.12|00112233445566778899aabbccddeeff").hexdigest()
    assert commitment(parse_money("473.12"), NONCE) == expected
    assert Trigger(parse_money("473.12"), NONCE).commitment == expected


def test_a_draw_takes_the_cent_the_generator_gives_from_the_range() -> None:
    drawn = draw_trigger(LOW, HIGH, lambda n: 7312, lambda k: "ab" * k)
    assert drawn == Trigger(parse_money("473.12"), "ab" * 16)


def test_every_cent_of_the_range_can_be_drawn_and_nothing_outside() -> None:
    low, high = parse_money("1.00"), parse_money("1.05")
    seen: Counter[int] = Counter()
    for i in range(10):

        def each(n: int, i: int = i) -> int:
            return i % n

        seen[draw_trigger(low, high, each, lambda k: "00").value] += 1
    assert sorted(seen) == [parse_money(t) for t in ("1.00", "1.01", "1.02", "1.03", "1.04")]
    assert set(seen.values()) == {2}  # each cent as often: the draw adds no bias


@pytest.mark.parametrize(("low", "high"), [("5.00", "5.00"), ("6.00", "5.00")])
def test_an_empty_range_is_refused(low: str, high: str) -> None:
    with pytest.raises(InvalidCommandError, match="from < by"):
        check_range(parse_money(low), parse_money(high))


@given(st.integers(0, 9_999), st.binary(min_size=16, max_size=16))
def test_verify_finds_a_sound_reveal_sound(cents: int, nonce: bytes) -> None:
    trigger = Money(LOW + cents * CENT)
    published = commitment(trigger, nonce.hex())
    assert reveal_problems(published, trigger, nonce.hex(), LOW, HIGH) == []


@given(st.integers(0, 9_999), st.integers(1, 9_999), st.binary(min_size=16, max_size=16))
def test_verify_catches_an_altered_trigger_or_nonce(cents: int, shift: int, nonce: bytes) -> None:
    trigger = Money(LOW + cents * CENT)
    published = commitment(trigger, nonce.hex())
    moved = Money(LOW + (cents + shift) % 10_000 * CENT)
    assert reveal_problems(published, moved, nonce.hex(), LOW, HIGH) != []
    other = bytes([nonce[0] ^ 1]) + nonce[1:]
    assert reveal_problems(published, trigger, other.hex(), LOW, HIGH) != []


def test_verify_catches_a_trigger_outside_its_range_even_if_committed() -> None:
    outside = parse_money("500.00")  # "by" itself is outside: [from, by)
    published = commitment(outside, NONCE)
    (problem,) = reveal_problems(published, outside, NONCE, LOW, HIGH)
    assert "outside [400.00, 500.00)" in problem


def test_the_first_contribution_to_reach_the_trigger_wins() -> None:
    c = parse_money
    assert first_crossing(c("499.00"), [c("0.50"), c("0.50"), c("0.50")], c("500.00")) == 1
    assert first_crossing(c("499.00"), [c("0.50"), c("0.25")], c("500.00")) is None
    # a returned wager contributes nothing and never triggers, even at the trigger
    assert first_crossing(c("500.00"), [Money(0), c("0.10")], c("500.00")) == 1


@given(st.lists(st.integers(0, 5 * CENT * 100), max_size=30), st.integers(0, 10**8))
def test_exactly_the_first_crossing_wins(amounts: list[int], trigger: int) -> None:
    hit = first_crossing(0, amounts, trigger)
    totals = [sum(amounts[: i + 1]) for i in range(len(amounts))]
    crossing = [i for i, t in enumerate(totals) if t >= trigger and amounts[i] > 0]
    assert hit == (crossing[0] if crossing else None)
