"""The payments' entries: an award paid by a supervisor, witnessed, or paid at its table."""

from __future__ import annotations

from typing import Any, ClassVar

from app.state.entries.base import Base, Part


class PaidEntry(Base, tag="paid", kw_only=True, frozen=True):
    """A supervisor's payment of one final award. `needs_witness`: decided when it was
    recorded (the amount above the floor's `witness_above`), so a replay under a changed
    floor file gives the same state."""

    kind: ClassVar[str] = "paid"
    by: str
    award: str
    amount: int  # micro-units: the award's amount
    method: str
    reference: str
    note: str
    needs_witness: bool


class PaidConfirmEntry(Base, tag="paid_confirm", kw_only=True, frozen=True):
    """A second operator witnessing a payment: only then is the award paid."""

    kind: ClassVar[str] = "paid_confirm"
    by: str
    award: str


class PaidAward(Part, frozen=True):
    award: str
    amount: int


class TablePaidEntry(Base, tag="table_paid", kw_only=True, frozen=True):
    """What a table's dealer paid from the rack: the boxes posted, and the fixed awards
    they named, each with its amount (what was decided, recorded)."""

    kind: ClassVar[str] = "table_paid"
    table: str
    round: str
    boxes: list[int]
    awards: list[PaidAward]

    def body(self) -> dict[str, Any]:
        return {"boxes": list(self.boxes)}
