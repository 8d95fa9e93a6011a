"""What each table's events did to its link's meters once final: the per-table report's
figures, which add up exactly to the meters' own ledgers (docs/api.md, reports per table).

Each event the watermark makes final is a table's (its key names the table): whatever it
changed in the link's flows below is that table's. Resets, withheld and returned awards
move none of them; a jackpot paid by hand is no table's (the reconciliation's `awards`
counts it, the tables' `meter_awarded` does not).
"""

from __future__ import annotations

from jackpot.link import Link

TABLE_FLOWS = (
    "contributions_meter",  # on the link's meter values (overflow passed between them included)
    "contributions_reserve",  # on their reserves (overflow to a reserve included)
    "overflow_to_house",
    "reversed_meter",
    "reversed_reserve",
    "meter_awards",  # a count
    "meter_awarded",
)


def link_flows(link: Link) -> tuple[int, ...]:
    """The link's flows in TABLE_FLOWS order, summed over its meters."""
    to_meter = to_reserve = house = rev_meter = rev_reserve = hits = awarded = 0
    for m in link.meters:
        to_meter += m.to_meter
        to_reserve += m.to_reserve
        house += m.overflow_to_house
        rev_meter += m.reversed_meter
        rev_reserve += m.reversed_reserve
        hits += m.hits
        awarded += m.awarded
    return (to_meter, to_reserve, house, rev_meter, rev_reserve, hits, awarded)


def attribute(
    ledgers: dict[str, list[int]], table: str, before: tuple[int, ...], after: tuple[int, ...]
) -> None:
    """Add what one final event changed to its table's flows (no table: a reset)."""
    if not table or before == after:
        return
    flows = ledgers.setdefault(table, [0] * len(TABLE_FLOWS))
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        flows[i] += a - b
