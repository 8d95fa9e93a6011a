"""bench/bench_displays.py's send time, carried in a meter's value: the display process
reads that value as money (its screens' view), so it must be an amount."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jackpot.money import parse_money
from tests.unit.bench.loading import load_bench

bd = load_bench("bench_displays")


@given(
    now_us=st.integers(min_value=0, max_value=2**62),
    delay_us=st.integers(min_value=0, max_value=10**10),
)
def test_a_send_time_is_an_amount_and_gives_back_the_delay(now_us: int, delay_us: int) -> None:
    value = bd.send_time_value(now_us)
    parse_money(value)  # raises MoneyError if the display process could not read it
    assert bd.latency_us(value.encode(), now_us + delay_us) == delay_us


def test_the_send_time_of_tonight_is_its_microseconds_modulo_10_to_the_11() -> None:
    # 2026-11-27 as microseconds since the epoch: the old value, str(us), was refused.
    assert bd.send_time_value(1_795_822_197_157_183) == "221971571.83"
