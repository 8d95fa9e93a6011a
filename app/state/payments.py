"""Payments: an award's life ends when the player has the money, recorded and witnessed.

A supervisor pays one final award (`paid`), with the award's amount exactly and one of
the METHODS; above the floor's `witness_above` a second operator confirms it
(`paid_confirm`) and only then is the award paid. A table records what its dealer paid
from the rack (`table_paid`): the fixed awards of the boxes it names, never a meter
award. Each award is paid once. Every payment is an audit row; `service.payments` keeps
them by award id (docs/api.md "Payments").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.state.commands import PaidCommand, TablePaidCommand
from app.state.entries import PaidAward, PaidConfirmEntry, PaidEntry, TablePaidEntry
from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.commands import FixedAward
from jackpot.errors import InvalidCommandError, JackpotError, StateConflictError, UnknownError
from jackpot.money import format_money
from jackpot.records import FINAL, PENDING

METHODS = ("cash", "chips", "cheque", "transfer", "table")
PAID, AWAITING_WITNESS = "paid", "awaiting_witness"


class WitnessError(JackpotError):
    """The payer cannot witness their own payment (403)."""


@dataclass(frozen=True, slots=True)
class Payable:
    """An award as a payment needs it: what, where, how much, in which state."""

    id: str
    kind: str  # meter, or a fixed award's kind
    state: str  # pending, final, void
    amount: int | None
    link: str | None
    meter: str | None
    table: str
    round: str
    box: int
    hand: str | None
    dealt_at: int


@dataclass(frozen=True, slots=True)
class PaymentResult:
    """The payments an entry recorded. No `link`: the writer would show that link's
    meters to displays again, and a payment changes no meter."""

    payments: tuple[dict[str, Any], ...]


def fixed_award_id(table: str, round_id: str, f: FixedAward) -> str:
    """A fixed award's id as `GET /v1/awards` lists it (app/state/views.py)."""
    parts = [table, round_id, str(f.box), f.target, f.kind]
    return "/".join(parts + ([] if f.for_box is None else [str(f.for_box)]))


def _fixed(
    table: str, round_id: str, link: str | None, f: FixedAward, voided: bool, at: int
) -> Payable:
    return Payable(
        fixed_award_id(table, round_id, f), f.kind, "void" if voided else FINAL, f.amount,
        link, None, table, round_id, f.box, f.hand, at if f.dealt_at is None else f.dealt_at,
    )  # fmt: skip


def payables(state: FloorData, table: str | None = None) -> Iterator[Payable]:
    """Every award the server decided (of one table, if given): meter awards as the
    journal has them (pending while their finalize is uncommitted), then fixed ones."""
    floor = state.floor
    for a in floor.awards.values():
        if table is None or a.table == table:
            pending = a.id in state.uncommitted
            yield Payable(
                a.id, "meter", PENDING if pending else a.state, a.amount, a.link, a.meter,
                a.table, a.round, a.box, a.hand, a.dealt_at,
            )  # fmt: skip
    for rnd in floor.rounds.values():
        if table is None or rnd.table == table:
            for r in rnd.fixed:
                yield _fixed(rnd.table, rnd.round, rnd.link, r.award, r.voided, rnd.closed_at)
    for p in floor.past_fixed:
        if table is None or p.table == table:
            yield _fixed(p.table, p.round, p.link, p.award, p.voided, 0)


def find_award(state: FloorData, award_id: str) -> Payable:
    table = award_id.partition("/")[0]
    for award in payables(state, table):
        if award.id == award_id:
            return award
    raise UnknownError(f"no award {award_id!r}", ("path", "award"))


def _check_payable(state: FloorData, award: Payable, amount: int) -> None:
    """Final (not pending, not void), not paid before, and this very amount."""
    if award.state != FINAL:
        why = "the watermark has not passed it" if award.state == PENDING else "its box was void"
        raise StateConflictError(f"award {award.id} is {award.state} ({why}): it cannot be paid")
    paid = state.payments.get(award.id)
    if paid is not None:
        raise StateConflictError(
            f"award {award.id} is already paid: {paid['id']} by {paid['by']} at "
            f"{format_time(paid['at'])}, {format_money(paid['amount'])} ({paid['method']})"
        )
    assert award.amount is not None  # a final award has its amount
    if amount != award.amount:
        raise InvalidCommandError(
            f"amount {format_money(amount)} is not award {award.id}'s amount "
            f"{format_money(award.amount)}",
            ("amount",),
        )


# -- a supervisor's payment, and its witness -----------------------------------------


def prepare_paid(state: FloorData, command: PaidCommand, now: int, by: str) -> PaidEntry:
    award = find_award(state, command.award)
    _check_payable(state, award, command.amount)
    above = state.config.witness_above
    return PaidEntry(
        now=now, by=by, award=command.award, amount=command.amount, method=command.method,
        reference=command.reference, note=command.note,
        needs_witness=above is not None and command.amount > above,
    )  # fmt: skip


def _record(
    state: FloorData, award: Payable, amount: int, method: str, by: str, now: int, n: int = 0
) -> dict[str, Any]:
    # Named by its entry's seq (and place in it): the id says where the journal has it,
    # and stays the same whatever an auditor's replay skips before it.
    pid = f"payment-{state.seq + 1}" + (f"-{n}" if n else "")
    return {
        "id": pid, "award": award.id, "kind": award.kind,
        "link": award.link, "meter": award.meter, "table": award.table,
        "round": award.round, "box": award.box, "hand": award.hand,
        "dealt_at": award.dealt_at, "amount": amount, "method": method, "reference": "",
        "note": "", "by": by, "at": now, "seq": state.seq + 1, "needs_witness": False,
        "witness": None, "witnessed_at": None, "confirm_seq": None, "paid_at": now,
    }  # fmt: skip


def _audit(state: FloorData, action: str, record: dict[str, Any], who: str, now: int) -> None:
    state.audit.append({
        "id": len(state.audit) + 1, "at": now, "who": who, "action": action,
        "link": record["link"], "meter": record["meter"],
        "before": {"state": FINAL}, "after": {"payment": record["id"], "state": state_of(record)},
        "reason": record["note"], "amount": format_money(record["amount"]),
        "round": f"{record['table']}/{record['round']}", "award": record["award"],
    })  # fmt: skip


def apply_paid(state: FloorData, entry: PaidEntry) -> PaymentResult:
    award = find_award(state, entry.award)
    _check_payable(state, award, entry.amount)
    if entry.method not in METHODS:
        raise InvalidCommandError(f"method {entry.method!r} is not one of {METHODS}", ("method",))
    record = _record(state, award, entry.amount, entry.method, entry.by, entry.now)
    record.update(reference=entry.reference, note=entry.note, needs_witness=entry.needs_witness)
    if entry.needs_witness:
        record["paid_at"] = None
    state.payments[award.id] = record
    _audit(state, "paid", record, entry.by, entry.now)
    return PaymentResult((record,))


def apply_paid_confirm(state: FloorData, entry: PaidConfirmEntry) -> PaymentResult:
    record = state.payments.get(entry.award)
    if record is None:
        raise UnknownError(f"award {entry.award} has no payment to witness", ("path", "award"))
    if state_of(record) != AWAITING_WITNESS:
        what = "needs no witness" if not record["needs_witness"] else "is already witnessed"
        raise StateConflictError(f"payment {record['id']} of award {entry.award} {what}")
    if entry.by == record["by"]:
        raise WitnessError(
            f"{entry.by} recorded payment {record['id']}: a different operator witnesses it"
        )
    record.update(
        witness=entry.by, witnessed_at=entry.now, confirm_seq=state.seq + 1, paid_at=entry.now
    )
    state.audit.append({
        "id": len(state.audit) + 1, "at": entry.now, "who": entry.by, "action": "paid_confirm",
        "link": record["link"], "meter": record["meter"],
        "before": {"payment": record["id"], "state": AWAITING_WITNESS},
        "after": {"payment": record["id"], "state": PAID}, "reason": record["note"],
        "amount": format_money(record["amount"]),
        "round": f"{record['table']}/{record['round']}", "award": record["award"],
    })  # fmt: skip
    return PaymentResult((record,))


# -- a table's dealer paid from the rack ---------------------------------------------


def prepare_table_paid(
    state: FloorData, table: str, round_id: str, command: TablePaidCommand, now: int
) -> TablePaidEntry:
    state.table(table)
    state.floor.round(table, round_id)  # 404: a round that left memory is a supervisor's
    awards = [a for a in payables(state, table) if a.round == round_id]
    paid: list[PaidAward] = []
    for i, box in enumerate(command.boxes):
        if box in command.boxes[:i]:
            raise InvalidCommandError(f"box {box} is named twice", ("boxes", i))
        mine = [a for a in awards if a.box == box and a.state != "void"]
        fixed = [a for a in mine if a.kind != "meter"]
        unpaid = [a for a in fixed if a.id not in state.payments]
        if not unpaid:
            raise _nothing_to_pay(state, round_id, box, i, mine, fixed)
        paid += [PaidAward(a.id, a.amount or 0) for a in unpaid]
    return TablePaidEntry(
        now=now, table=table, round=round_id, boxes=list(command.boxes), awards=paid
    )


def _nothing_to_pay(
    state: FloorData, round_id: str, box: int, i: int, mine: list[Payable], fixed: list[Payable]
) -> JackpotError:
    if fixed:  # every fixed award of the box is paid already
        _check_payable(state, fixed[0], fixed[0].amount or 0)
    if mine:
        return StateConflictError(
            f"box {box}'s award {mine[0].id} is a meter award: a supervisor pays it "
            "(POST /v1/awards/{id}/paid), not the table",
            ("boxes", i),
        )
    return InvalidCommandError(f"box {box} has no award in round {round_id!r}", ("boxes", i))


def apply_table_paid(state: FloorData, entry: TablePaidEntry) -> PaymentResult:
    records: list[dict[str, Any]] = []
    for item in entry.awards:
        award = find_award(state, item.award)
        if award.kind == "meter":
            raise StateConflictError(f"award {award.id} is a meter award: a supervisor pays it")
        if (award.table, award.round) != (entry.table, entry.round):
            raise StateConflictError(f"award {award.id} is not of round {entry.round}")
        _check_payable(state, award, item.amount)
        n = len(records) + 1
        records.append(_record(state, award, item.amount, "table", entry.table, entry.now, n))
        state.payments[award.id] = records[-1]
    for record in records:
        _audit(state, "table_paid", record, entry.table, entry.now)
    return PaymentResult(tuple(records))


# -- views ---------------------------------------------------------------------------


def state_of(record: dict[str, Any]) -> str:
    return PAID if record["paid_at"] is not None else AWAITING_WITNESS


def payment_view(record: dict[str, Any]) -> dict[str, Any]:
    """A payment as docs/api.md "Payments" shows it."""
    paid_at, witnessed = record["paid_at"], record["witnessed_at"]
    return {
        "id": record["id"], "award": record["award"], "state": state_of(record),
        "amount": format_money(record["amount"]), "method": record["method"],
        "reference": record["reference"], "note": record["note"],
        "paid_by": record["by"], "recorded_at": format_time(record["at"]),
        "needs_witness": record["needs_witness"], "witness": record["witness"],
        "witnessed_at": None if witnessed is None else format_time(witnessed),
        "paid_at": None if paid_at is None else format_time(paid_at),
        "seq": record["seq"], "confirm_seq": record["confirm_seq"],
    }  # fmt: skip


def payment_answer(state: FloorData, entry: Any, result: Any) -> dict[str, Any]:
    assert isinstance(result, PaymentResult)
    if isinstance(entry, TablePaidEntry):
        return {
            "table": entry.table,
            "round": entry.round,
            "paid": [payment_view(r) for r in result.payments],
        }
    return payment_view(result.payments[0])


def with_payment(row: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """An award's listing row with its payment: state `paid` once it is (a payment
    awaiting its witness leaves it final: still the casino's liability)."""
    if record is None:
        return row
    paid = state_of(record) == PAID
    view = payment_view(record)
    return {
        **row,
        "state": PAID if paid else row["state"],
        "payment": record["id"],
        "paid_at": view["paid_at"],
        "method": record["method"],
        "paid_by": record["by"],
        "witness": record["witness"],
    }


def unpaid(state: FloorData) -> Iterator[Payable]:
    """The casino's liability: final awards with no payment, or one awaiting its witness."""
    payments = state.payments
    for award in payables(state):
        if award.state == FINAL:
            record = payments.get(award.id)
            if record is None or record["paid_at"] is None:
                yield award


def claims_of(entry: PaidEntry | PaidConfirmEntry | TablePaidEntry) -> list[tuple[str, int]]:
    """The awards an entry pays and the amount it says each is (a confirmation: none)."""
    if isinstance(entry, PaidEntry):
        return [(entry.award, entry.amount)]
    if isinstance(entry, TablePaidEntry):
        return [(a.award, a.amount) for a in entry.awards]
    return []


def check_payment(state: FloorData, award_id: str, amount: int) -> None:
    """`jackpot verify`: the award exists, is final, unpaid, and this is its amount."""
    _check_payable(state, find_award(state, award_id), amount)
