"""What the reconciliation says of payments: paid at the table, paid by an attendant
(a supervisor's payment) in the period, and unpaid at its end (PA 605a.7(a)(2)-(3)
keeps the first two apart)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.state.floor_state import FloorState
from app.state.payments import state_of, unpaid
from jackpot.money import format_money

PAYMENT_COLUMNS = ("awards_paid_at_table", "awards_paid_by_attendant", "awards_unpaid")


def _where(paid: dict[str, Any]) -> str:
    return PAYMENT_COLUMNS[0] if paid["method"] == "table" else PAYMENT_COLUMNS[1]


def payment_figures(
    closing: FloorState, start: int, end: int
) -> dict[tuple[str | None, str | None], dict[str, int]]:
    """Per (link, meter) of the award (meter None: the link's fixed awards) the amounts
    paid in [start, end) at the table and by an attendant, and those unpaid at `end`
    (`closing`: the state after the period's last entry)."""
    figures: dict[tuple[str | None, str | None], dict[str, int]] = {}

    def add(key: tuple[str | None, str | None], column: str, amount: int) -> None:
        row = figures.setdefault(key, dict.fromkeys(PAYMENT_COLUMNS, 0))
        row[column] += amount

    for record in closing.payments.values():
        paid_at = record["paid_at"]
        if state_of(record) == "paid" and start <= paid_at < end:
            add((record["link"], record["meter"]), _where(record), record["amount"])
    for award in unpaid(closing):
        add((award.link, award.meter), PAYMENT_COLUMNS[2], award.amount or 0)
    return figures


def payment_totals(
    figures: dict[tuple[str | None, str | None], dict[str, int]],
) -> dict[str, Any]:
    """Every award's figures (meter and fixed), and per link."""
    links: dict[str, dict[str, int]] = {}
    for (link, _), row in figures.items():
        into = links.setdefault(link or "", dict.fromkeys(PAYMENT_COLUMNS, 0))
        for column in PAYMENT_COLUMNS:
            into[column] += row[column]
    return {
        **{c: format_money(sum(r[c] for r in figures.values())) for c in PAYMENT_COLUMNS},
        # A list, not an object: a table with no link (western_stud) has link null.
        "links": [
            {"link": link or None, **{c: format_money(v) for c, v in row.items()}}
            for link, row in sorted(links.items())
        ],
    }


def meter_payments(
    figures: dict[tuple[str | None, str | None], dict[str, int]], link: str, meter: str
) -> Iterable[tuple[str, int]]:
    row = figures.get((link, meter), dict.fromkeys(PAYMENT_COLUMNS, 0))
    return ((c, row[c]) for c in PAYMENT_COLUMNS)
