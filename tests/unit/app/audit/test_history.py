"""Thinning a meter's history for the chart keeps its shape: the first and last points,
the highest and lowest, in order, and at most about the limit."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import example, given
from hypothesis import strategies as st

from app.audit.history import thin

cents = st.integers(min_value=0, max_value=10**11)


def points(values: list[int]) -> list[dict[str, object]]:
    return [
        {"seq": i + 1, "at": "", "value": f"{v // 100}.{v % 100:02d}"} for i, v in enumerate(values)
    ]


@given(st.lists(cents, max_size=400), st.integers(min_value=4, max_value=60))
# An odd limit made limit // 2 + 1 buckets: 8 points for a limit of 5.
@example([5, 0, 9, 5, 5, 5, 5, 5, 0, 9, 5, 5, 5, 5, 0, 9, 5], 5)
def test_thinning_keeps_the_ends_the_extremes_and_the_order(values: list[int], limit: int) -> None:
    given_points = points(values)
    kept = thin(given_points, limit)
    if len(given_points) <= limit:
        assert kept == given_points
        return
    assert len(kept) <= limit + 2
    assert kept[0] is given_points[0] and kept[-1] is given_points[-1]
    seqs = [p["seq"] for p in kept]
    assert seqs == sorted(set(seqs))  # in order, none twice
    shown = {Decimal(str(p["value"])) for p in kept}
    assert Decimal(str(max(values))) / 100 in shown and Decimal(str(min(values))) / 100 in shown


def test_a_sawtooth_keeps_its_teeth() -> None:
    # Ten climbs of 100 steps, each dropping back to 0: every tooth's top survives.
    values = [step for _ in range(10) for step in range(1, 101)] + [0]
    kept = thin(points(values), 100)
    assert sum(1 for p in kept if p["value"] == "1.00") >= 10
    assert [p["value"] for p in kept].count("0.00") == 1
