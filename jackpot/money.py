"""Exact money: integer micro-units, decimal strings at the edge, never float."""

from __future__ import annotations

import functools
import re
from typing import NewType

# One currency unit is 1,000,000 micro-units. Wagers and awards are whole cents
# (10,000 micro-units); contributions are wager x rate with a rate of at most four
# decimal places, so every contribution is a whole number of micro-units: sub-cent
# contributions are carried exactly, never rounded away.
Money = NewType("Money", int)
SCALE = 1_000_000
CENT = 10_000
ZERO = Money(0)

# Rates and shares: integers over RATE_SCALE (four decimal places: "0.0125" -> 125).
Rate = NewType("Rate", int)
RATE_SCALE = 10_000
FULL_SHARE = Rate(RATE_SCALE)

# The largest amount accepted anywhere money comes in: the wire (app/schemas.py), the
# floor file (app/floor.py, pay-table amounts included) and operator changes (seeds,
# corrections). Chosen so that every amount derived from it stays an exact integer in
# every codec and column it meets:
#   - orjson (the journal's fast codec) and PostgreSQL BIGINT hold signed 64-bit ints:
#     2**63 - 1 = 9.22e18 micro-units = 9.22e12 units;
#   - a float64 (JavaScript, jq, a spreadsheet reading an export) is exact to 2**53 =
#     9.007e15 micro-units = 9.0e9 units.
# MAX_MONEY = 999,999,999.99 = 9.99...e14 micro-units (< 2**53: every amount a client or
# operator can send is exact even in a float64 reader). Derived from it:
#   - a River bet pays at most 25 x the bet: 2.5e16 micro-units, 1/369 of int64;
#   - an odds award is at most MAX_ODDS x the wager: 1,000 x MAX_MONEY = 1.0e18, 1/9 of
#     int64 (the rules' largest is Singapore Stud's 500 to 1, 4.2);
#   - a contribution is at most the wager (rate + reserve_rate <= 1): a meter's lifetime
#     totals (the ledger, docs/design.md "money is conserved") grow by at most MAX_MONEY an
#     entry. A floor of 1,000 tables x 7 boxes x 60 rounds an hour, all year, makes 3.7e9
#     wagers a year: at an average jackpot wager of 10 units, int64 lasts 250 years;
#   - the reconciliation's and verify's sums over many rows are Python ints (unbounded).
# A total that still outgrows 64 bits stays exact: canonical_json writes it with the
# standard library and jackpot.canonical.loads_exact reads every integer exactly.
MAX_MONEY = Money(999_999_999 * SCALE + 99 * CENT)
MAX_MONEY_TEXT = "999999999.99"
MAX_ODDS = 1_000  # "N to 1" in a pay table: N at most this (see MAX_MONEY)

_MONEY_RE = re.compile(r"^(0|[1-9][0-9]{0,14})(?:\.([0-9]{1,2}))?$")
_RATE_RE = re.compile(r"^(0|[1-9][0-9]{0,5})(?:\.([0-9]{1,4}))?$")


class MoneyError(ValueError):
    """A money or rate string that is not exact, not positive, has too many places, or is
    more than MAX_MONEY."""


def parse_money(text: str) -> Money:
    """'12.50' -> Money. At most two decimal places and MAX_MONEY; no sign, no exponent,
    no float."""
    if not isinstance(text, str):
        raise MoneyError('money must be a decimal string such as "1.00"')
    return _parse_money(text)


@functools.lru_cache(maxsize=4_096)  # a floor's wagers are a few amounts, again and again
def _parse_money(text: str) -> Money:
    match = _MONEY_RE.match(text)
    if match is None:
        raise MoneyError(
            f'{text!r} is not an amount: a decimal string with at most two places, such as "1.00"'
        )
    whole, frac = match.group(1), match.group(2) or ""
    amount = Money(int(whole) * SCALE + int(frac.ljust(2, "0")) * CENT)
    if amount > MAX_MONEY:
        raise MoneyError(f"{text} is more than {MAX_MONEY_TEXT}, the largest amount accepted")
    return amount


def parse_rate(text: str) -> Rate:
    """'0.25' -> Rate(2500). At most four decimal places, between 0 and 1 inclusive."""
    if not isinstance(text, str):
        raise MoneyError('a rate must be a decimal string such as "0.25"')
    match = _RATE_RE.match(text)
    if match is None:
        raise MoneyError(f"{text!r} is not a rate: a decimal string with at most four places")
    whole, frac = match.group(1), match.group(2) or ""
    value = int(whole) * RATE_SCALE + int(frac.ljust(4, "0"))
    if value > RATE_SCALE:
        raise MoneyError(f"{text!r} is more than 1")
    return Rate(value)


def format_money(amount: int) -> str:
    """Money -> '12.50'. Sub-cent micro-units are cut off (displays show whole cents)."""
    sign = "-" if amount < 0 else ""
    cents = abs(amount) // CENT
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def format_exact(amount: int) -> str:
    """Money -> '12.503125': every micro-unit, for audit reports and the journal."""
    sign = "-" if amount < 0 else ""
    whole, micros = divmod(abs(amount), SCALE)
    return f"{sign}{whole}.{micros:06d}"


def format_rate(rate: int) -> str:
    whole, frac = divmod(rate, RATE_SCALE)
    return f"{whole}.{frac:04d}".rstrip("0").rstrip(".") if frac else f"{whole}.00"


def floor_cents(amount: int) -> Money:
    """Round down to a whole cent: awards are paid in whole cents (docs/design.md, money)."""
    return Money(amount - amount % CENT)


def is_whole_cents(amount: int) -> bool:
    return amount % CENT == 0


def apply_rate(amount: int, rate: int) -> Money:
    """amount x rate, exact for whole-cent amounts and four-place rates (no rounding)."""
    return Money(amount * rate // RATE_SCALE)


def share_of(value: int, share: int) -> Money:
    """A share of a meter's value, rounded down to the cent: the remainder stays in the meter."""
    return floor_cents(value * share // RATE_SCALE)
