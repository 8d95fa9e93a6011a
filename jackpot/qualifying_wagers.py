"""Qualifying wagers, metered on every meter of their link: accepted, and voided since."""

from __future__ import annotations

from collections.abc import Iterable

from jackpot.commands import Wager
from jackpot.link import Link
from jackpot.records import BoxRecord


def _counted(wager: int, dealer_wager: int) -> int:
    # singapore-stud 3.5: a wager on the player's hand and one on the dealer's are two.
    return (wager > 0) + (dealer_wager > 0)


def count_accepted(link: Link, wagers: Iterable[Wager]) -> None:
    """Every accepted jackpot wager qualifies for every meter of its link: each meter
    contributes from it at its own rate (docs/design.md, vocabulary)."""
    count = amount = 0
    for w in wagers:  # as `_counted`, inline: once per box of every bets
        count += (w.wager > 0) + (w.dealer_wager > 0)
        amount += w.wager + w.dealer_wager
    if not count:
        return
    for meter in link.meters:
        meter.wagers += count
        meter.wagered += amount


def count_voided(link: Link, box: BoxRecord) -> None:
    """A voided box's wagers are metered apart; the accepted ones stay as they were."""
    count = _counted(box.wager, box.dealer_wager)
    for meter in link.meters:
        meter.wagers_voided += count
        meter.wagered_voided += box.wager + box.dealer_wager
