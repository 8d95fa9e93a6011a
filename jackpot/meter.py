"""One progressive meter: its final value, reserve, seed and the ledger that proves it."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.config import MeterConfig
from jackpot.money import FULL_SHARE, Money, share_of
from jackpot.mystery import Trigger


@dataclass(slots=True)
class Funding:
    """How a reset brought the meter back to its seed (docs/design.md: reserve, then house)."""

    seed: Money
    from_reserve: Money
    from_house: Money
    to_reserve: Money  # an operator reset moves any excess over the seed to the reserve


LEDGER = (
    "to_meter",
    "to_reserve",
    "awarded",
    "reserve_funded",
    "house_seed",
    "house_cover_meter",
    "house_cover_reserve",
    "reset_to_reserve",
    "corrections",
    "overflow",
    "reversed_meter",
    "reversed_reserve",
    "awards_withheld",
    "awards_returned",
    "overflow_to_house",
    "overflow_to_meter",
    "overflow_from_meter",
    "transferred_out",
    "transferred_in",
    "transferred_out_reserve",
    "transferred_in_reserve",
)

# The regulator's meters besides the flows (docs/api.md, the meter read): qualifying
# wagers (count, amount), the voided ones, and hits. Counts, not money: outside the
# ledger identities. Wagers count when their bets are applied, hits when final.
COUNTERS = ("wagers", "wagered", "wagers_voided", "wagered_voided", "hits")


@dataclass(slots=True)
class Meter:
    """The meter's state after every event before the watermark (the final part).

    Ledger identity, to the micro-unit, at every instant:
        contributed + house_funded + corrections + transferred in - transferred out
            == awarded + value + reserve + withheld
    and, flow by flow (what a reconciliation report shows for a period):
        value   = to_meter - reversed_meter - awarded - awards_withheld + awards_returned
                  + reserve_funded + house_seed + house_cover_meter - reset_to_reserve
                  + corrections - transferred_out + transferred_in
        reserve = to_reserve - reversed_reserve - reserve_funded + reset_to_reserve
                  + house_cover_reserve - transferred_out_reserve + transferred_in_reserve
    `contributed` is net of reversed (voided) contributions: a void at the current
    position counts them in reversed_*; one replayed by the first version's rules
    (entry version 1) took them out of to_meter / to_reserve. The house funds the first seed,
    every reset shortfall (house_seed) and any reversal the meter or the reserve no
    longer holds (house_cover_*); corrections are audited operator adjustments. A voided
    box's pending award still takes its amount at its place (awards_withheld: paid to
    nobody) and gives it back to the meter (awards_returned): at once what funds its own
    reset, the rest at the void's position; `withheld` is what is between the two.
    """

    config: MeterConfig
    seed: Money
    next_seed: Money | None
    value: Money
    reserve: Money
    to_meter: int = 0
    to_reserve: int = 0
    awarded: int = 0
    reserve_funded: int = 0  # reserve -> meter at resets
    house_seed: int = 0  # house -> meter at resets (and the first seed)
    house_cover_meter: int = 0  # reversals the meter no longer held
    house_cover_reserve: int = 0  # reversals the reserve no longer held
    reset_to_reserve: int = 0  # meter -> reserve: an operator reset's excess over the seed
    corrections: int = 0  # audited operator adjustments (5.24), signed
    overflow: int = 0  # contributions sent to the reserve by the ceiling (within to_reserve)
    reversed_meter: int = 0  # voided contributions taken back at the void's position
    reversed_reserve: int = 0
    awards_withheld: int = 0  # voided awards: taken at their place, paid to nobody
    awards_returned: int = 0  # ... and given back to the meter at their void's position
    # Overflow sent elsewhere than the reserve (`overflow_to`), within `overflow`: to the
    # house (it leaves meter and reserve), or to another meter of the link, which counts
    # it in `overflow_from_meter` and in its own to_meter / to_reserve.
    overflow_to_house: int = 0
    overflow_to_meter: int = 0
    overflow_from_meter: int = 0
    # Transfers to and from another meter (jackpot/transfers.py): value to value, reserve
    # to reserve; across the floor what goes out comes in.
    transferred_out: int = 0
    transferred_in: int = 0
    transferred_out_reserve: int = 0
    transferred_in_reserve: int = 0
    reset_key: tuple[int, int, int, str, int, int] = (-1, 0, 0, "", 0, 0)  # last final reset
    trigger: Trigger | None = None  # a must-hit-by level's armed trigger (secret until hit)
    wagers: int = 0  # qualifying jackpot wagers accepted on the link (a count)
    wagered: int = 0  # ... their amount
    wagers_voided: int = 0  # ... of them voided since (a count)
    wagered_voided: int = 0
    hits: int = 0  # the meter won: final meter awards and jackpots paid by hand

    @classmethod
    def new(cls, config: MeterConfig) -> Meter:
        # The first seed is house money, like every later reset shortfall.
        return cls(
            config=config,
            seed=config.seed,
            next_seed=None,
            value=config.seed,
            reserve=Money(0),
            house_seed=config.seed,
        )

    @property
    def contributed(self) -> int:
        return self.to_meter + self.to_reserve - self.reversed_meter - self.reversed_reserve

    @property
    def withheld(self) -> int:
        """Taken by voided awards whose void's position is not final yet."""
        return self.awards_withheld - self.awards_returned

    @property
    def house_funded(self) -> int:
        return self.house_seed + self.house_cover_meter + self.house_cover_reserve

    def contribute(self, to_meter: int, to_reserve: int) -> tuple[int, int]:
        """Apply a contribution; returns what actually went to (meter, reserve)."""
        ceiling = self.config.ceiling
        if ceiling is not None and self.value + to_meter > ceiling:
            # Beyond the ceiling contributions go where the floor file says: the reserve
            # by default, the house, or another meter (jackpot/link.py passes it on).
            kept = max(0, ceiling - self.value)
            excess = to_meter - kept
            self.overflow += excess
            if self.config.overflow_to == "reserve":
                to_reserve += excess
            elif self.config.overflow_to == "house":
                self.overflow_to_house += excess
            else:
                self.overflow_to_meter += excess
            to_meter = kept
        self.value = Money(self.value + to_meter)
        self.reserve = Money(self.reserve + to_reserve)
        self.to_meter += to_meter
        self.to_reserve += to_reserve
        return to_meter, to_reserve

    def reverse(
        self, from_meter: int, from_reserve: int, in_meter: bool, *, gross: bool = True
    ) -> int:
        """Reverse a final contribution (a void); returns what the house had to cover.

        When the contribution is no longer in the meter (a reset since took it), or the
        meter or reserve holds less than it (an award or a reset used it), the house
        covers the difference: a meter never goes negative (docs/design.md, decisions).
        `gross`: counted in reversed_*, else (entry version 1) out of to_meter/to_reserve.
        """
        take = min(self.value, from_meter) if in_meter else 0
        take_r = min(self.reserve, from_reserve)
        self.value = Money(self.value - take)
        self.reserve = Money(self.reserve - take_r)
        if gross:
            self.reversed_meter += from_meter
            self.reversed_reserve += from_reserve
        else:
            self.to_meter -= from_meter
            self.to_reserve -= from_reserve
        self.house_cover_meter += from_meter - take
        self.house_cover_reserve += from_reserve - take_r
        return from_meter - take + from_reserve - take_r

    def reverse_passed(self, amount: int) -> None:
        """A voided contribution's share that passed the ceiling to the house or another
        meter: neither gives it back, so the house covers it (as a reversal the meter no
        longer holds)."""
        self.reversed_meter += amount
        self.house_cover_meter += amount

    def award(self, share: int) -> tuple[Money, Funding | None]:
        """Pay a share of the value at this instant, rounded down to the cent (4.2).

        The remainder stays in the meter. A 100 % award resets the meter to its seed; a
        10 % award leaves the rest, even below the seed (4.2, 4.5.1).
        """
        return self.pay(share_of(self.value, share), reset=share == FULL_SHARE)

    def pay(self, amount: int, *, reset: bool) -> tuple[Money, Funding | None]:
        """Pay `amount` out of the meter (an award, or one paid by hand: 5.18.1)."""
        shortfall = max(0, amount - self.value)
        # A hand-paid jackpot may exceed what the meter holds now: the house covers it.
        self.house_cover_meter += shortfall
        self.value = Money(self.value + shortfall - amount)
        self.awarded += amount
        self.hits += 1
        return Money(amount), self.reset(operator=False) if reset else None

    def withhold(self, share: int) -> tuple[Money, Funding | None, int]:
        """A voided box's award at its place: (amount, funding, held).

        It takes its share as an award would, so that every award after it takes the
        value that follows it (5.20, 4.5.1), and pays it to nobody. A 100 % award resets
        the meter: its own amount funds the seed first (the seed is not funded twice when
        the amount returns), then the reserve and the house as at any reset. What is left
        (`held`) returns to the meter at the void's position (`give_back`).
        """
        amount = share_of(self.value, share)
        self.value = Money(self.value - amount)
        self.awards_withheld += amount
        if share != FULL_SHARE:
            return Money(amount), None, amount
        seed = self.next_seed if self.next_seed is not None else self.seed
        refund = min(amount, max(0, seed - self.value))
        self.value = Money(self.value + refund)
        self.awards_returned += refund
        return Money(amount), self.reset(operator=False), amount - refund

    def give_back(self, amount: int) -> None:
        """A voided award's held amount returns to the meter at its void's position.

        It is the meter's own money (4.5.1): it comes back whole, ceiling or not (the
        ceiling sends contributions to the reserve, not what the meter already held).
        """
        self.value = Money(self.value + amount)
        self.awards_returned += amount

    def correct(self, delta: int) -> None:
        """An audited adjustment of the value (5.24): the house gives or takes it."""
        self.value = Money(self.value + delta)
        self.corrections += delta

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
            self.value = self.seed
        elif need < 0 and operator:
            to_reserve = -need
            self.value = self.seed
        # (an award's remainder above the seed stays in the meter)
        self.reserve = Money(self.reserve - from_reserve + to_reserve)
        self.reserve_funded += from_reserve
        self.house_seed += from_house
        self.reset_to_reserve += to_reserve
        return Funding(self.seed, Money(from_reserve), Money(from_house), Money(to_reserve))

    def balanced(self) -> bool:
        """Both flow identities hold (and so does the overall one)."""
        value = (
            self.to_meter
            - self.reversed_meter
            - self.awarded
            - self.awards_withheld
            + self.awards_returned
            + self.reserve_funded
            + self.house_seed
            + self.house_cover_meter
            - self.reset_to_reserve
            + self.corrections
            - self.transferred_out
            + self.transferred_in
        )
        reserve = (
            self.to_reserve
            - self.reversed_reserve
            - self.reserve_funded
            + self.reset_to_reserve
            + self.house_cover_reserve
            - self.transferred_out_reserve
            + self.transferred_in_reserve
        )
        return value == self.value and reserve == self.reserve
