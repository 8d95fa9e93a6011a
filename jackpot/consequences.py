"""What an operator's change of a meter would do if it took effect now: the figures a
supervisor proposes and a second one approves (docs/api.md "Dual control"). Pure: the
meter's value and reserve now (every pending event counted) are parameters; the rules
are those that apply the change (jackpot/meter.py `reset`, `pay`, `correct`)."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.money import Money


@dataclass(frozen=True, slots=True)
class MeterNow:
    """A meter as it stands: `seed_after` is the seed its next reset returns to."""

    value: int
    reserve: int
    seed: int
    next_seed: int | None

    @property
    def seed_after(self) -> int:
        return self.seed if self.next_seed is None else self.next_seed


@dataclass(frozen=True, slots=True)
class Consequence:
    """Before and after. A reset's funding: `to_reserve` is what leaves the meter for the
    reserve (an operator reset's excess over the seed), `from_reserve` then `from_house`
    fund a shortfall; `house_cover` is what the house pays of a hand-paid jackpot the
    meter no longer holds."""

    value_before: Money
    value_after: Money
    seed_before: Money
    seed_after: Money
    reserve_before: Money
    reserve_after: Money
    from_reserve: Money = Money(0)
    from_house: Money = Money(0)
    to_reserve: Money = Money(0)
    house_cover: Money = Money(0)


def _funded(now: MeterNow, value: int, *, operator: bool) -> Consequence:
    """A reset from `value` (reserve first, then the house; an operator reset moves the
    excess over the seed to the reserve, an award's remainder stays in the meter)."""
    seed = now.seed_after
    need = seed - value
    from_reserve = min(now.reserve, need) if need > 0 else 0
    from_house = need - from_reserve if need > 0 else 0
    to_reserve = -need if need < 0 and operator else 0
    after = seed if need > 0 or operator else value
    return Consequence(
        value_before=Money(now.value),
        value_after=Money(after),
        seed_before=Money(now.seed),
        seed_after=Money(seed),
        reserve_before=Money(now.reserve),
        reserve_after=Money(now.reserve - from_reserve + to_reserve),
        from_reserve=Money(from_reserve),
        from_house=Money(from_house),
        to_reserve=Money(to_reserve),
    )


def of_reset(now: MeterNow) -> Consequence:
    return _funded(now, now.value, operator=True)


def of_seed(now: MeterNow, seed: int) -> Consequence:
    """A seed change: the value does not move; the next reset returns to `seed`."""
    before = now.seed_after
    return Consequence(
        value_before=Money(now.value),
        value_after=Money(now.value),
        seed_before=Money(before),
        seed_after=Money(seed),
        reserve_before=Money(now.reserve),
        reserve_after=Money(now.reserve),
    )


def of_adjust(now: MeterNow, amount: int) -> Consequence:
    """5.24: the house gives (or takes) `amount`."""
    return Consequence(
        value_before=Money(now.value),
        value_after=Money(now.value + amount),
        seed_before=Money(now.seed_after),
        seed_after=Money(now.seed_after),
        reserve_before=Money(now.reserve),
        reserve_after=Money(now.reserve),
    )


def of_hand_paid(now: MeterNow, amount: int, *, reset: bool) -> Consequence:
    """5.18.1: `amount` paid by hand leaves the meter (the house covers what it no longer
    holds); with `reset` the meter then returns to its seed as after an award."""
    cover = max(0, amount - now.value)
    left = now.value + cover - amount
    if not reset:
        return Consequence(
            value_before=Money(now.value),
            value_after=Money(left),
            seed_before=Money(now.seed_after),
            seed_after=Money(now.seed_after),
            reserve_before=Money(now.reserve),
            reserve_after=Money(now.reserve),
            house_cover=Money(cover),
        )
    funded = _funded(now, left, operator=False)
    return Consequence(
        value_before=Money(now.value),
        value_after=funded.value_after,
        seed_before=Money(now.seed),
        seed_after=funded.seed_after,
        reserve_before=funded.reserve_before,
        reserve_after=funded.reserve_after,
        from_reserve=funded.from_reserve,
        from_house=funded.from_house,
        house_cover=Money(cover),
    )


def of_void_round(now: MeterNow, reversed_meter: int, reversed_reserve: int) -> Consequence:
    """A round's contributions leave the meter and the reserve now; what they no longer
    hold, the house covers (docs/design.md "Voids")."""
    return Consequence(
        value_before=Money(now.value),
        value_after=Money(max(0, now.value - reversed_meter)),
        seed_before=Money(now.seed_after),
        seed_after=Money(now.seed_after),
        reserve_before=Money(now.reserve),
        reserve_after=Money(max(0, now.reserve - reversed_reserve)),
        house_cover=Money(max(0, reversed_meter - now.value)),
    )
