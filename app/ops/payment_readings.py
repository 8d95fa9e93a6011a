"""The unpaid awards, read at scrape time: the casino's liability and what is overdue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from app.ops.readings import Read
from app.state.floor_state import FloorState
from app.state.payments import unpaid
from jackpot.money import SCALE


@runtime_checkable
class PaymentReadings(Protocol):
    """What they read of the writer (app/writer/writer.py's Writer)."""

    @property
    def service(self) -> FloorState: ...
    @property
    def clock(self) -> Callable[[], int]: ...


def payment_reads(writer: PaymentReadings) -> list[Read]:
    """deploy/prometheus-alerts.yml: JackpotAwardUnpaid once one is overdue."""

    def count() -> int:
        return sum(1 for _ in unpaid(writer.service))

    def amount() -> float:
        return sum(a.amount or 0 for a in unpaid(writer.service)) / SCALE

    def overdue() -> int:
        # Counted from the deal: an award is won when its hand is dealt (4.5.2).
        service = writer.service
        since = writer.clock() - service.config.pay_within_ms
        return sum(1 for a in unpaid(service) if a.dealt_at < since)

    return [
        Read("jackpot_awards_unpaid", "Final awards not yet paid (the liability)", count),
        Read(
            "jackpot_awards_unpaid_amount",
            "What the unpaid final awards amount to, in currency units",
            amount,
        ),
        Read(
            "jackpot_awards_unpaid_overdue",
            "Unpaid final awards dealt longer than the floor's pay_within_ms ago",
            overdue,
        ),
    ]
