"""Contributions to a link's meters, with what passes a ceiling sent where the floor says.

A meter's `overflow_to` (docs/api.md, floor configuration): its reserve (the default),
the house, or another meter of the same link, which takes it as a contribution to its
own value (up to its own ceiling, beyond which its own `overflow_to` applies). The floor
file refuses a cycle, so passing on ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from jackpot.meter import Meter


def contribute(
    meters: Sequence[Meter], amounts: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """Each meter's own (to_meter, to_reserve); returns what each kept on its value and
    reserve (what a void takes back from it), after passing on what went to a meter."""
    applied = []
    passing = [0] * len(meters)
    for i, (meter, (to_meter, to_reserve)) in enumerate(zip(meters, amounts, strict=True)):
        before = meter.overflow_to_meter
        applied.append(meter.contribute(to_meter, to_reserve))
        passing[i] = meter.overflow_to_meter - before
    _pass_on(meters, passing)
    return tuple(applied)


def _pass_on(meters: Sequence[Meter], passing: list[int]) -> None:
    index = {meter.config.id: i for i, meter in enumerate(meters)}
    for _ in range(len(meters)):  # a chain visits each meter once at most
        if not any(passing):
            return
        further = [0] * len(meters)
        for i, amount in enumerate(passing):
            if amount:
                j = index[meters[i].config.overflow_to]
                target = meters[j]
                before = target.overflow_to_meter
                target.overflow_from_meter += amount
                target.contribute(amount, 0)
                further[j] += target.overflow_to_meter - before
        passing = further
    assert not any(passing), "overflow_to forms a cycle (the floor file refuses one)"


def passes_on(meters: Sequence[Meter]) -> bool:
    """Some meter of the link sends its overflow to another."""
    return any(m.config.overflow_to not in ("reserve", "house") for m in meters)
