"""Reconciliation of a meter over a period: opening + every flow = closing, to the micro-unit."""

from __future__ import annotations

from dataclasses import dataclass

from jackpot.meter import COUNTERS, LEDGER, Meter


@dataclass(frozen=True, slots=True)
class Ledger:
    """A meter's value, reserve and cumulative flows at one instant."""

    value: int
    reserve: int
    flows: tuple[int, ...]  # in LEDGER order
    counts: tuple[int, ...] = (0,) * len(COUNTERS)  # in COUNTERS order

    @classmethod
    def of(cls, meter: Meter) -> Ledger:
        return cls(
            meter.value,
            meter.reserve,
            tuple(getattr(meter, f) for f in LEDGER),
            tuple(getattr(meter, c) for c in COUNTERS),
        )

    def flow(self, name: str) -> int:
        if name in COUNTERS:
            return self.counts[COUNTERS.index(name)]
        return self.flows[LEDGER.index(name)]


@dataclass(frozen=True, slots=True)
class Reconciliation:
    opening_value: int
    opening_reserve: int
    contributions_meter: int
    contributions_reserve: int  # ceiling overflow included
    awards: int
    seed_from_reserve: int
    seed_from_house: int
    house_cover: int  # reversed (voided) contributions the meter or reserve no longer held
    reset_to_reserve: int  # an operator reset's excess over the seed
    corrections: int
    closing_value: int
    closing_reserve: int

    @property
    def meter_balances(self) -> bool:
        return self.closing_value == (
            self.opening_value
            + self.contributions_meter
            - self.reversed_meter
            - self.awards
            - self.awards_withheld
            + self.awards_returned
            + self.seed_from_reserve
            + self.seed_from_house
            + self.house_cover_meter
            - self.reset_to_reserve
            + self.corrections
            - self.transferred_out
            + self.transferred_in
        )

    @property
    def reserve_balances(self) -> bool:
        return self.closing_reserve == (
            self.opening_reserve
            + self.contributions_reserve
            - self.reversed_reserve
            - self.seed_from_reserve
            + self.reset_to_reserve
            + self.house_cover_reserve
            - self.transferred_out_reserve
            + self.transferred_in_reserve
        )

    house_cover_meter: int = 0
    house_cover_reserve: int = 0
    # Voided contributions taken back at the void's position (docs/design.md, voids): out of
    # the meter and the reserve, or covered by the house where they no longer held them.
    reversed_meter: int = 0
    reversed_reserve: int = 0
    # A voided box's pending award takes its amount at its place for nobody (withheld)
    # and gives it back to the meter (returned): its reset's seed at once, the rest at the
    # void's position (docs/design.md, voids). Not in `awards`: nobody was paid.
    awards_withheld: int = 0
    awards_returned: int = 0
    # The regulator's meters over the period (docs/api.md): what passed the ceiling (in
    # contributions_reserve), qualifying wagers and the voided ones, hits (the amount of
    # what they won is in `awards`).
    overflow: int = 0
    wagers: int = 0
    wagered: int = 0
    wagers_voided: int = 0
    wagered_voided: int = 0
    hits: int = 0
    # Where the overflow went when not to the reserve (`overflow_to`), and what another
    # meter of the link passed to this one (within its contributions).
    overflow_to_house: int = 0
    overflow_to_meter: int = 0
    overflow_from_meter: int = 0
    # Transfers to and from other meters (jackpot/transfers.py): value, then reserve.
    transferred_out: int = 0
    transferred_in: int = 0
    transferred_out_reserve: int = 0
    transferred_in_reserve: int = 0

    @property
    def balanced(self) -> bool:
        return self.meter_balances and self.reserve_balances


def reconcile(opening: Ledger, closing: Ledger) -> Reconciliation:
    def delta(name: str) -> int:
        return closing.flow(name) - opening.flow(name)

    return Reconciliation(
        opening_value=opening.value,
        opening_reserve=opening.reserve,
        contributions_meter=delta("to_meter"),
        contributions_reserve=delta("to_reserve"),
        awards=delta("awarded"),
        seed_from_reserve=delta("reserve_funded"),
        seed_from_house=delta("house_seed"),
        house_cover=delta("house_cover_meter") + delta("house_cover_reserve"),
        reset_to_reserve=delta("reset_to_reserve"),
        corrections=delta("corrections"),
        closing_value=closing.value,
        closing_reserve=closing.reserve,
        house_cover_meter=delta("house_cover_meter"),
        house_cover_reserve=delta("house_cover_reserve"),
        reversed_meter=delta("reversed_meter"),
        reversed_reserve=delta("reversed_reserve"),
        awards_withheld=delta("awards_withheld"),
        awards_returned=delta("awards_returned"),
        overflow=delta("overflow"),
        overflow_to_house=delta("overflow_to_house"),
        overflow_to_meter=delta("overflow_to_meter"),
        overflow_from_meter=delta("overflow_from_meter"),
        transferred_out=delta("transferred_out"),
        transferred_in=delta("transferred_in"),
        transferred_out_reserve=delta("transferred_out_reserve"),
        transferred_in_reserve=delta("transferred_in_reserve"),
        **{name: delta(name) for name in COUNTERS},
    )
