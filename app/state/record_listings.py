"""Which awards and audit records a listing or an export shows: the filters of
`GET /v1/awards` and `GET /v1/audit` (docs/api.md "Records and reports"), in their order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.state.audit_views import audit_matches
from app.state.payments import with_payment
from app.state.shape import FloorData
from app.state.views import Listed, every_award

# The columns of before, then those of every kind (appended: a reader by position works on).
AWARD_COLUMNS = (
    "id", "link", "table", "round", "box", "hand", "meter", "share", "state", "amount",
    "order", "sequence", "late", "dealt_at", "finalized_at", "kind", "for_box", "target",
    "payment", "paid_at", "method", "paid_by", "witness",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AwardFilter:
    """Awards dealt in [start, end) (epoch ms); None matches any. `state` is the award's
    as listed: `paid` once its payment is witnessed."""

    start: int
    end: int
    kind: str | None = None
    link: str | None = None
    meter: str | None = None
    table: str | None = None
    state: str | None = None


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Audit records made in [start, end) (epoch ms); None matches any."""

    start: int
    end: int
    link: str | None = None
    table: str | None = None
    action: str | None = None


def matching_awards(service: FloorData, wanted: AwardFilter) -> list[Listed]:
    """Newest dealt first."""
    fields = {"kind": wanted.kind, "link": wanted.link, "meter": wanted.meter}
    fields["table"] = wanted.table
    awards = [
        a
        for a in every_award(service)
        if all(v is None or getattr(a, k) == v for k, v in fields.items())
        and wanted.start <= a.dealt_at < wanted.end
    ]
    awards.sort(key=Listed.order, reverse=True)
    if wanted.state is None:
        return awards
    return [a for a in awards if paid_row(service, a)["state"] == wanted.state]


def paid_row(service: FloorData, award: Listed) -> dict[str, Any]:
    """An award's listing row with its payment, if any (app/state/payments.py)."""
    row = award.row()
    return with_payment(row, service.payments.get(row["id"]))


def matching_audit(audit: list[dict[str, Any]], wanted: AuditFilter) -> list[dict[str, Any]]:
    """Oldest first."""
    return [
        a
        for a in audit
        if wanted.start <= a["at"] < wanted.end
        and audit_matches(a, wanted.link, wanted.table, wanted.action)
    ]
