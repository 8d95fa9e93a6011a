"""One progressive meter: its final value, reserve, seed and the ledger that proves it."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.config import MeterConfig
from jackpot.money import FULL_SHARE, Money, share_of


@dataclass(slots=True)
class Funding:
    """How a reset brought the meter back to its seed (DESIGN.md: reserve first, then house)."""

    seed: Money
    from_reserve: Money
    from_house: Money
    to_reserve: Money  # an operator reset moves any excess over the seed to the reserve


@dataclass(slots=True)
class Meter:
    """The meter's state after every event before the watermark (the final part).

    Ledger identity, to the micro-unit, at every instant:
        contributed + house_funded == awarded + value + reserve
    `contributed` is net of reversed (voided) contributions; the house funds the
    first seed, every reset shortfall and any reversal the meter no longer holds.
    """

    config: MeterConfig
    seed: Money
    next_seed: Money | None
    value: Money
    reserve: Money
    contributed: int = 0
    house_funded: int = 0
    awarded: int = 0
    reserve_funded: int = 0  # reserve -> meter at resets (internal movement, reported)
    overflow: int = 0  # contributions sent to the reserve by the ceiling
    reset_key: tuple[int, int, int, str, int, int] = (-1, 0, 0, "", 0, 0)  # last final reset

    @classmethod
    def new(cls, config: MeterConfig) -> Meter:
        # The first seed is house money, like every later reset shortfall.
        return cls(
            config=config,
            seed=config.seed,
            next_seed=None,
            value=config.seed,
            reserve=Money(0),
            house_funded=config.seed,
        )

    def contribute(self, to_meter: int, to_reserve: int) -> tuple[int, int]:
        """Apply a contribution; returns what actually went to (meter, reserve)."""
        ceiling = self.config.ceiling
        if ceiling is not None and self.value + to_meter > ceiling:
            # Beyond the ceiling contributions go to the reserve (API.md, floor file).
            kept = max(0, ceiling - self.value)
            self.overflow += to_meter - kept
            to_reserve += to_meter - kept
            to_meter = kept
        self.value = Money(self.value + to_meter)
        self.reserve = Money(self.reserve + to_reserve)
        self.contributed += to_meter + to_reserve
        return to_meter, to_reserve

    def reverse(self, from_meter: int, from_reserve: int, in_meter: bool) -> int:
        """Reverse a final contribution (a void); returns what the house had to cover.

        When the contribution is no longer in the meter (a reset since took it), or the
        meter or reserve holds less than it (an award or a reset used it), the house
        covers the difference: a meter never goes negative (DESIGN.md, decisions).
        """
        covered = 0
        take = min(self.value, from_meter) if in_meter else 0
        covered += from_meter - take
        self.value = Money(self.value - take)
        take_r = min(self.reserve, from_reserve)
        covered += from_reserve - take_r
        self.reserve = Money(self.reserve - take_r)
        self.contributed -= from_meter + from_reserve
        self.house_funded += covered
        return covered

    def award(self, share: int) -> tuple[Money, Funding | None]:
        """Pay a share of the value at this instant, rounded down to the cent (4.2).

        The remainder stays in the meter. A 100 % award resets the meter to its seed; a
        10 % award leaves the rest, even below the seed (4.2, 4.5.1).
        """
        amount = share_of(self.value, share)
        self.value = Money(self.value - amount)
        self.awarded += amount
        if share == FULL_SHARE:
            return amount, self.reset(operator=False)
        return amount, None

    def reset(self, *, operator: bool) -> Funding:
        """Return to the seed: a pending seed change takes effect now.

        The amount still in the meter counts toward the seed (the sub-cent remainder of an
        award); the reserve funds the rest first, then the house. An operator reset moves
        any excess over the seed to the reserve, so no player money leaves the system.
        """
        if self.next_seed is not None:
            self.seed, self.next_seed = self.next_seed, None
        need = self.seed - self.value
        from_reserve = from_house = to_reserve = 0
        if need > 0:
            from_reserve = min(self.reserve, need)
            from_house = need - from_reserve
        elif need < 0 and operator:
            to_reserve = -need
        elif need < 0:
            need = 0  # an award's remainder above the seed stays in the meter
        if need > 0 or to_reserve:
            self.value = self.seed
        self.reserve = Money(self.reserve - from_reserve + to_reserve)
        self.reserve_funded += from_reserve
        self.house_funded += from_house
        return Funding(self.seed, Money(from_reserve), Money(from_house), Money(to_reserve))

    def balanced(self) -> bool:
        return self.contributed + self.house_funded == self.awarded + self.value + self.reserve
