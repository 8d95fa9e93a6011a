"""An award that left the state's memory for the journal database (app/state/past_awards.py
says which and when): the record the listing filters, orders and shows."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class PastAward:
    """An award as it left memory: the keys `GET /v1/awards` filters and orders on, and
    its listing row (JSON text, payment included) as the listing shows it."""

    id: str
    link: str | None
    table: str
    round: str
    meter: str | None
    kind: str
    state: str  # void or paid (final only for a row rebuilt by an older tool)
    box: int
    dealt_at: int
    sequence: int
    kind_rank: int  # the kind's place in tables.settle.KINDS: the listing's last key
    seq: int  # the journal entry that made it leave
    row: str
    # Its payment as the state held it (JSON), for the payout slip; None for a void one.
    # Not compared: a row written before the table kept it has none (alembic 0011), and
    # the listing row, compared, names the payment.
    payment: str | None = field(default=None, compare=False)

    def order(self) -> tuple[int, int, str, str, int, int, str]:
        """The listing's order (app/state/views.py `Listed.order`), then the id."""
        return (
            self.dealt_at,
            self.sequence,
            self.table,
            self.round,
            self.box,
            self.kind_rank,
            self.id,
        )
