"""The regulator's meters of one link meter, lifetime, as the operator's meter read shows them."""

from __future__ import annotations

from typing import Any

from jackpot.meter import Meter
from jackpot.money import format_exact, format_money

# Money among them (two places, and to the micro-unit in `exact`); the rest are counts.
# Wagers count when their bets are applied; the flows and hits once final (the meter's
# final part: `final_value`). Payments at the table or by an attendant will join them.
MONEY = ("wagered", "wagered_voided", "contributions_meter", "contributions_reserve",
         "overflow", "wins", "overflow_to_house", "overflow_to_meter",
         "overflow_from_meter")  # fmt: skip
COUNTS = ("wagers", "wagers_voided", "hits")


def lifetime(meter: Meter) -> dict[str, int]:
    """Every meter since the floor began, exact (micro-units for money)."""
    return {
        "wagers": meter.wagers,
        "wagered": meter.wagered,
        "wagers_voided": meter.wagers_voided,
        "wagered_voided": meter.wagered_voided,
        # Gross of voids (taken back as `reversed_*` in the reconciliation); what passed the
        # ceiling is in `contributions_reserve` and, apart, in `overflow`.
        "contributions_meter": meter.to_meter,
        "contributions_reserve": meter.to_reserve,
        "overflow": meter.overflow,
        "hits": meter.hits,
        "wins": meter.awarded,  # what the hits paid out of the meter
        # Where the overflow went if not to the reserve (`overflow_to`), and what another
        # meter passed to this one (within contributions_meter / contributions_reserve).
        "overflow_to_house": meter.overflow_to_house,
        "overflow_to_meter": meter.overflow_to_meter,
        "overflow_from_meter": meter.overflow_from_meter,
    }


def meters_view(meter: Meter) -> dict[str, Any]:
    figures = lifetime(meter)
    view: dict[str, Any] = {name: figures[name] for name in COUNTS}
    view.update({name: format_money(figures[name]) for name in MONEY})
    view["exact"] = {name: format_exact(figures[name]) for name in MONEY}
    return view
