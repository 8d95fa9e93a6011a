"""Transfers between meters and the retirement of a link: checked, applied, audited.

A transfer is always under dual control: proposed by one supervisor, applied by the
`approve` of another, whatever the floor's `dual_control` (docs/api.md "Transfers").
What decides it is journaled state only (meters, suspensions, retirements), so that the
replay decides alike; which tables name a link is the floor file's, checked when a
retirement is asked for and approved, never on replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.state.entries import RetireEntry, TransferChange
from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.commands import TransferMoney
from jackpot.errors import StateConflictError
from jackpot.in_play import Place
from jackpot.money import format_exact, format_money
from jackpot.transfers import TransferRecord, check

RETIRED = "link-retired"


class RetiredLinkError(StateConflictError):
    """A bet, a transfer or a change naming a retired link (409, `link-retired`)."""

    problem_type = RETIRED

    def __init__(self, link: str, retired: dict[str, Any]) -> None:
        super().__init__(
            f"link {link} is retired (since {format_time(retired['at'])}: "
            f"{retired['reason']}): it takes no bets, transfers or changes",
            ("link",),
        )
        self.extensions: dict[str, Any] = {"link": link, "retired": True}


def check_not_retired(service: FloorData, link: str | None) -> None:
    if link is not None and link in service.retired:
        raise RetiredLinkError(link, service.retired[link])


# -- transfers -----------------------------------------------------------------------


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


# -- retirement ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Retired:
    link: str
    at: int
    by: str
    reason: str
    approved_by: str | None

    def answer(self) -> dict[str, Any]:
        data = {"link": self.link, "retired": True, "at": format_time(self.at), "by": self.by}
        if self.approved_by:
            data["approved_by"] = self.approved_by
        return {**data, "reason": self.reason}


def check_tables(service: FloorData, link: str) -> None:
    """The floor file's tables: a link a table names is in use (tables are assigned in the
    floor file; moving them is an edit of the file and a restart). Live only: a replay
    under a later file must decide as the writer did."""
    named = sorted(t for t, c in service.config.tables.items() if c.link == link)
    if named:
        raise StateConflictError(
            f"link {link} cannot be retired: tables {', '.join(named)} are assigned to it "
            "in the floor file (move them to another link, or remove them, and restart)",
            ("link",),
        )


def check_retire(service: FloorData, link: str) -> None:
    """What the journaled state refuses: an unknown (404) or retired link, one that holds
    money (a meter's value or reserve above zero, counting what is pending) or has a
    round, award or reset still under way."""
    state = service.floor.link(link)
    check_not_retired(service, link)
    held = [
        f"{config.id} (value {format_exact(value)}, reserve {format_exact(reserve)})"
        for config, (value, reserve) in zip(state.config.meters, state.provisional(), strict=True)
        if value > 0 or reserve > 0
    ]
    if held:
        raise StateConflictError(
            f"link {link} holds money: {', '.join(held)}; transfer it to another link "
            "first (POST /v1/links/{link}/meters/{meter}/transfers)",
            ("link",),
        )
    if state.open_rounds or state.timeline.pending():
        raise StateConflictError(f"link {link} has rounds or events still under way")


def apply_retire(service: FloorData, entry: RetireEntry, approved_by: str | None = None) -> Retired:
    check_retire(service, entry.link)
    seq = service.seq + 1  # this entry's (a retire, or the approve that applies it)
    service.retired[entry.link] = {
        "at": entry.now, "by": entry.by, "reason": entry.reason, "seq": seq,
    }  # fmt: skip
    # A link retired is a parameter changed for good: its history says so beside the
    # floor file's changes (docs/api.md "Parameters").
    service.parameters.history.append({
        "seq": seq, "at": entry.now, "state": "retired", "link": entry.link, "by": entry.by,
        "approved_by": approved_by, "reason": entry.reason,
        "changes": [{"parameter": f"links[{entry.link}].retired", "before": False, "after": True}],
    })  # fmt: skip
    record: dict[str, Any] = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by, "action": "retire",
        "link": entry.link, "meter": None, "before": {"retired": False},
        "after": {"retired": True}, "reason": entry.reason,
        "reason_code": "closure",
    }  # fmt: skip
    if approved_by:
        record["approved_by"] = approved_by
    service.audit.append(record)
    return Retired(entry.link, entry.now, entry.by, entry.reason, approved_by)
