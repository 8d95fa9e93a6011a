"""What a change would do now (jackpot/consequences.py): a reset funded by the reserve
first, then the house, its excess going to the reserve (docs/design.md "Money"); a
hand-paid jackpot covered by the house past what the meter holds (5.18.1); money
conserved in every case."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jackpot.consequences import (
    MeterNow,
    of_adjust,
    of_hand_paid,
    of_reset,
    of_seed,
    of_void_round,
)

M = 1_000_000  # micro-units in one currency unit
amounts = st.integers(min_value=0, max_value=10**9 * M)


def test_a_reset_below_the_seed_is_funded_by_the_reserve_then_the_house() -> None:
    c = of_reset(MeterNow(value=4_356 * M, reserve=1_000 * M, seed=5_000 * M, next_seed=None))
    assert (c.value_before, c.value_after) == (4_356 * M, 5_000 * M)
    assert (c.from_reserve, c.from_house, c.to_reserve) == (644 * M, 0, 0)
    c = of_reset(MeterNow(value=4_356 * M, reserve=400 * M, seed=5_000 * M, next_seed=None))
    assert (c.from_reserve, c.from_house, c.reserve_after) == (400 * M, 244 * M, 0)


def test_a_reset_above_the_next_seed_sends_the_excess_to_the_reserve() -> None:
    c = of_reset(MeterNow(value=5_972 * M, reserve=10 * M, seed=5_000 * M, next_seed=5_500 * M))
    assert (c.seed_before, c.seed_after, c.value_after) == (5_000 * M, 5_500 * M, 5_500 * M)
    assert (c.to_reserve, c.from_reserve, c.from_house) == (472 * M, 0, 0)
    assert c.reserve_after == 482 * M


def test_a_seed_change_moves_only_the_next_seed() -> None:
    c = of_seed(MeterNow(value=7 * M, reserve=1 * M, seed=5 * M, next_seed=6 * M), 9 * M)
    assert (c.value_before, c.value_after, c.seed_before, c.seed_after) == (
        7 * M,
        7 * M,
        6 * M,
        9 * M,
    )


def test_a_hand_paid_jackpot_past_the_meter_is_covered_by_the_house() -> None:
    now = MeterNow(value=100 * M, reserve=30 * M, seed=50 * M, next_seed=None)
    c = of_hand_paid(now, 120 * M, reset=False)
    assert (c.value_after, c.house_cover) == (0, 20 * M)
    c = of_hand_paid(now, 120 * M, reset=True)
    assert (c.value_after, c.house_cover, c.from_reserve, c.from_house) == (
        50 * M,
        20 * M,
        30 * M,
        20 * M,
    )
    # An award's remainder above the seed stays in the meter (no operator excess).
    c = of_hand_paid(MeterNow(200 * M, 0, 50 * M, None), 10 * M, reset=True)
    assert (c.value_after, c.to_reserve) == (190 * M, 0)


def test_a_round_voided_takes_its_contributions_back_from_the_meter_and_the_reserve() -> None:
    c = of_void_round(
        MeterNow(value=3 * M, reserve=1 * M, seed=5 * M, next_seed=None), 4 * M, M // 2
    )
    assert (c.value_after, c.reserve_after, c.house_cover) == (0, M // 2, 1 * M)


@given(amounts, amounts, amounts, st.none() | amounts)
def test_a_reset_conserves_money(value: int, reserve: int, seed: int, nxt: int | None) -> None:
    c = of_reset(MeterNow(value, reserve, seed, nxt))
    assert c.value_before + c.from_reserve + c.from_house - c.to_reserve == c.value_after
    assert c.reserve_before - c.from_reserve + c.to_reserve == c.reserve_after
    assert c.value_after == (seed if nxt is None else nxt)
    assert min(c.from_reserve, c.from_house, c.to_reserve, c.reserve_after) >= 0


@given(amounts, amounts, amounts, amounts, st.booleans())
def test_a_hand_paid_jackpot_conserves_money(
    value: int, reserve: int, seed: int, paid: int, reset: bool
) -> None:
    c = of_hand_paid(MeterNow(value, reserve, seed, None), paid, reset=reset)
    assert c.value_before + c.house_cover - paid + c.from_reserve + c.from_house == c.value_after
    assert c.reserve_before - c.from_reserve == c.reserve_after
    assert min(c.value_after, c.reserve_after, c.house_cover) >= 0


@given(amounts, st.integers(min_value=-(10**9) * M, max_value=10**9 * M))
def test_an_adjustment_adds_its_amount(value: int, amount: int) -> None:
    assert of_adjust(MeterNow(value, 0, 0, None), amount).value_after == value + amount
