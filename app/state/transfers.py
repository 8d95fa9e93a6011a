"""Transfers between meters: checked, applied, audited.

A transfer is always under dual control: proposed by one supervisor, applied by the
`approve` of another, whatever the floor's `dual_control` (docs/api.md "Transfers").
What decides it is journaled state only (meters, suspensions, retirements), so that the
replay decides alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.state.entries import TransferChange
from app.state.in_play_state import check_not_retired
from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.commands import TransferMoney
from jackpot.in_play import Place
from jackpot.money import format_exact, format_money
from jackpot.transfers import TransferRecord, check


@dataclass(frozen=True, slots=True)
class Transferred:
    """A transfer applied: the core's record and both meters' money before and after."""

    record: TransferRecord
    by: str
    approved_by: str
    reason: str
    source: tuple[dict[str, str], dict[str, str]]  # before, after
    target: tuple[dict[str, str], dict[str, str]]

    @property
    def links(self) -> tuple[str, str]:
        """The links whose meters it changed (displays are shown both)."""
        return self.record.link, self.record.to_link

    def answer(self) -> dict[str, Any]:
        r = self.record
        return {
            "link": r.link, "meter": r.meter, "to_link": r.to_link, "to_meter": r.to_meter,
            "amount": format_money(r.amount), "reserve": format_money(r.reserve),
            "exact": {"amount": format_exact(r.amount), "reserve": format_exact(r.reserve)},
            "source": {"before": self.source[0], "after": self.source[1]},
            "target": {"before": self.target[0], "after": self.target[1]},
            "by": self.by, "approved_by": self.approved_by, "reason": self.reason,
            "at": format_time(r.at),
        }  # fmt: skip


def _command(service: FloorData, change: TransferChange, now: int) -> TransferMoney:
    """The core's command: the source may go below its seed only while its link is out
    of play (a journaled suspension of the whole link: no wager is taken there)."""
    for link in (change.link, change.to_link):
        service.floor.link(link)  # 404 for an unknown link
        check_not_retired(service, link)
    suspended = bool(service.in_play.already(Place(change.link, None, None)))
    return change.command(now, below_seed=suspended)


def check_transfer(service: FloorData, change: TransferChange, now: int) -> None:
    """What applying it now would refuse, changing nothing (when it is proposed)."""
    check(service.floor, _command(service, change, now))


def _money(service: FloorData, link: str, meter: str) -> dict[str, str]:
    state = service.floor.link(link)
    m = state.meters[service.floor.meter_index(state, meter)]
    return {"value": format_exact(m.value), "reserve": format_exact(m.reserve)}


def apply_transfer(
    service: FloorData, change: TransferChange, now: int, by: str, approved_by: str
) -> Transferred:
    """Move the money (jackpot/transfers.py) and audit it on both links: `transfer:out`
    on the source (a reduction, reason code `transfer`), `transfer:in` on the target."""
    command = _command(service, change, now)
    source, target = (change.link, change.meter), (change.to_link, change.to_meter)
    before = _money(service, *source), _money(service, *target)
    record = service.floor.apply(command)
    assert isinstance(record, TransferRecord)
    after = _money(service, *source), _money(service, *target)
    for side, (link, meter), (other_link, other_meter), i in (
        ("out", source, target, 0),
        ("in", target, source, 1),
    ):
        service.audit.append({
            "id": len(service.audit) + 1, "at": now, "who": by,
            "action": f"transfer:{side}", "link": link, "meter": meter,
            "before": before[i], "after": after[i], "reason": change.reason,
            "reason_code": "transfer", "amount": format_money(record.amount),
            "reserve": format_money(record.reserve),
            "exact": {"amount": format_exact(record.amount),
                      "reserve": format_exact(record.reserve)},
            ("to" if side == "out" else "from"): f"{other_link}/{other_meter}",
            "approved_by": approved_by,
        })  # fmt: skip
    return Transferred(
        record, by, approved_by, change.reason, (before[0], after[0]), (before[1], after[1])
    )
