"""The table of entry kinds: how each is made from a request, applied to the state, answered.

`KINDS[kind]` is the one place a kind is dispatched on (cosmicpython's handler table):
the writer prepares a request's entry with it, applies it and answers; the replay
(recovery, reports) and `jackpot verify` apply and answer with it. An entry's fields and
the core's command it records are its class in app/state/entries.py. A request's
command (app/state/commands.py) is made its entry from the command and the state alone,
checked against the rules with nothing changed: `prepare_outcome` also re-derives a
journaled outcome's claims for `jackpot verify`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from msgspec import UNSET, to_builtins

from app.state.account_kinds import ACCOUNT_KINDS, answer_account, prepare_account
from app.state.alarm_kinds import acknowledge, acknowledge_answer
from app.state.commands import (
    ApproveCommand,
    BetsCommand,
    Command,
    OutcomeCommand,
    PaidCommand,
    ProposeCommand,
    RetireCommand,
    TablePaidCommand,
    VoidCommand,
)
from app.state.entries import (
    ApproveEntry,
    ArmEntry,
    BetsEntry,
    Claim,
    CorrectEntry,
    Decision,
    Drawn,
    Entry,
    ExpireEntry,
    FinalizeEntry,
    Fixed,
    OperatorEntry,
    OutcomeEntry,
    ProposeEntry,
    RejectEntry,
    ResetEntry,
    ResumeChange,
    ResumeEntry,
    RetireChange,
    RetireEntry,
    SuspendChange,
    SuspendEntry,
    TransferChange,
    VoidEntry,
    change_of,
    entry_draws,
    entry_from_dict,
    idempotency_key,
)
from app.state.in_play_state import (
    apply_in_play,
    apply_retire,
    check_in_play,
    check_in_play_bets,
    check_not_retired,
    check_retire,
    check_tables,
)
from app.state.operator_views import operator_answer
from app.state.parameter_kinds import (
    apply_approve,
    apply_config,
    apply_propose,
    apply_reject,
    config_answer,
    prepare_config,
    prepare_decision,
)
from app.state.past_awards import settle_paid, settle_pruned
from app.state.payments import (
    PaymentResult,
    apply_paid,
    apply_paid_confirm,
    apply_table_paid,
    payment_answer,
    prepare_paid,
    prepare_table_paid,
)
from app.state.reductions import check_reduction, with_reason_code
from app.state.shape import FloorData, RoundExtras
from app.state.start_kind import apply_start, prepare_start, start_answer
from app.state.transfers import apply_transfer, check_transfer
from app.state.views import bets_answer, outcome_answer, void_answer
from jackpot.commands import SEMANTICS
from jackpot.errors import (
    ClockSkewError,
    OpenRoundsLimitError,
    StateConflictError,
    UnknownError,
)
from jackpot.floor import FinalizeResult, Result, VoidResult
from jackpot.money import Money, format_money
from jackpot.operator_changes import check_change
from jackpot.outcomes import check_awaits_outcome
from tables.bets import BetDecision, BetStatus, RandomSource, decide_bets, draw
from tables.cards import parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


class Request(Protocol):
    """A request as the writer hands it over (app/writer/group.py, Submission)."""

    kind: str
    table: str | None
    round: str | None
    command: Command | None
    by: str | None


Prepare = Callable[[FloorData, Request, int, RandomSource], Entry]
Answer = Callable[[FloorData, Any, Any], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of entry: `apply` changes the state (atomically: a refusal by the core
    changes nothing) and returns the core's result; `prepare` makes the entry of a
    request (None: the writer's timer makes it); `answer` is the request's answer
    from the state the entry leaves and its result (None: it answers no one)."""

    apply: Callable[[FloorData, Any], Result]
    prepare: Prepare | None = None
    answer: Answer | None = None
    status: int = 200  # the HTTP status of a first answer


# -- table events: bets, outcome, void ------------------------------------------------


def prepare_bets(
    state: FloorData,
    table: str,
    round_id: str,
    command: BetsCommand,
    now: int,
    rng: RandomSource,
) -> BetsEntry:
    settings = state.table(table).settings
    check_not_retired(state, state.table(table).link)  # a retired link takes no bets (409)
    limit = state.config.max_open_rounds
    if state.floor.open_count(table, at_least=limit) >= limit:
        raise OpenRoundsLimitError(
            f"table {table!r} has {limit} open rounds (bets and no outcome or void), "
            f"the floor's max_open_rounds: post their outcomes or void them (a round "
            f"open longer than {state.config.timing.expire_after_ms} ms expires)"
        )
    # The entry's records are the command's boxes as they are; its decisions made once.
    decisions = decide_bets(settings, command.boxes, Decision)
    # 5.18.2: no jackpot wager where the progressive is not in play (409 naming it).
    check_in_play_bets(
        state, table, ((b.box, b.jackpot > 0 or b.jackpot_dealer > 0) for b in command.boxes)
    )
    # Singapore Stud's Magic Card, Lucky Player and Lucky Dealer are drawn by the
    # server when bets close (4.3-4.5), from the caller's secure generator.
    draws = draw(settings, rng)
    return BetsEntry(
        now=now,
        table=table,
        round=round_id,
        closed_at=command.closed_at,
        boxes=list(command.boxes),
        decisions=decisions,
        draws=None if draws is None else Drawn.of(draws),
    )


def prepare_outcome(
    state: FloorData, table: str, round_id: str, command: OutcomeCommand, now: int
) -> OutcomeEntry:
    config = state.table(table)
    rnd = state.floor.round(table, round_id)
    check_awaits_outcome(rnd, state.config.timing)
    extras = state.extras[(table, round_id)]
    _check_dealt_at(state, command, max(now, state.floor.now))
    hands = [
        BoxHand(h.box, parse_hand(h.cards, ("boxes", i, "cards")), h.folded, h.dealt_at)
        for i, h in enumerate(command.boxes)
    ]
    dealer = None
    if command.dealer is not None:
        d = command.dealer
        dealer = DealerHand(parse_hand(d.cards, ("dealer", "cards")), d.dealt_at)
    decisions = [_decision(d, voided=rnd.boxes[d.box].voided) for d in extras.decisions]
    draws = None if extras.draws is None else entry_draws(extras.draws)
    claims = settle(config.settings, decisions, hands, dealer, draws)
    meter_claims = []
    fixed = []
    for c in claims:
        if isinstance(c, FixedClaim):
            fixed.append(Fixed(c.box, c.kind, c.hand, c.amount, c.for_box, c.target))
        else:
            # A row that names no level journals no meter: the link's first, as ever.
            meter = UNSET if c.meter is None else c.meter
            meter_claims.append(Claim(c.box, c.target, c.hand, c.share, c.dealt_at, meter))
    return OutcomeEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        boxes=list(command.boxes),
        dealer=command.dealer,
        claims=meter_claims,
        fixed=fixed,
    )


def _check_dealt_at(state: FloorData, command: OutcomeCommand, now: int) -> None:
    """docs/design.md: a time more than max_clock_skew ahead of the server's clock is
    refused: every box's dealt_at and the dealer's, not only a winning hand's."""
    skew = state.config.timing.max_clock_skew_ms
    dealer = command.dealer
    times: list[tuple[str, tuple[str | int, ...], int | None]] = [
        (f"box {h.box}", ("boxes", i, "dealt_at"), h.dealt_at) for i, h in enumerate(command.boxes)
    ]
    times.append(
        ("the dealer", ("dealer", "dealt_at"), None if dealer is None else dealer.dealt_at)
    )
    for who, loc, dealt_at in times:
        if dealt_at is not None and dealt_at > now + skew:
            raise ClockSkewError(
                f"{who}: dealt_at is {dealt_at - now} ms ahead of the server's clock "
                f"(max_clock_skew {skew} ms)",
                loc,
            )


def prepare_void(
    state: FloorData, table: str, round_id: str, command: VoidCommand, now: int
) -> VoidEntry:
    state.table(table)
    state.floor.round(table, round_id)
    return VoidEntry(
        version=SEMANTICS,
        now=now,
        table=table,
        round=round_id,
        reason=command.reason,
        boxes=None if command.boxes is None else list(command.boxes),
    )


def _decision(d: Decision, *, voided: bool) -> BetDecision:
    """A bets decision as the state keeps it, for settling the outcome."""
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d.box, "none", Money(0), Money(0), "void", Money(0), d.player)
    status = cast(BetStatus, d.status)  # the rules' (decide_bets), as journaled
    return BetDecision(d.box, status, d.wager, d.dealer_wager, d.reason, d.ante, d.player)


def _round(request: Request) -> tuple[str, str]:
    assert request.table is not None and request.round is not None  # the route's path
    return request.table, request.round


def _prepare_bets(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, BetsCommand)
    return prepare_bets(service, *_round(r), r.command, now, rng)


def _apply_bets(service: FloorData, entry: BetsEntry) -> Result:
    result = service.floor.apply(entry.command(service.table(entry.table).link))
    service.extras[(entry.table, entry.round)] = RoundExtras(
        entry.boxes, entry.decisions, entry.draws
    )
    return result


def _prepare_outcome(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, OutcomeCommand)
    return prepare_outcome(service, *_round(r), r.command, now)


def _apply_outcome(service: FloorData, entry: OutcomeEntry) -> Result:
    result = service.floor.apply(entry.command())
    hands = {"boxes": to_builtins(entry.boxes), "dealer": to_builtins(entry.dealer)}
    service.extras[(entry.table, entry.round)].hands = hands
    return result


def _prepare_void(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, VoidCommand)
    return prepare_void(service, *_round(r), r.command, now)


def _apply_void(service: FloorData, entry: VoidEntry) -> Result:
    return service.floor.apply(entry.command())


def _void_answer(service: FloorData, entry: VoidEntry, result: Any) -> dict[str, Any]:
    assert isinstance(result, VoidResult)
    return void_answer(service, entry.table, entry.round, list(result.reversed))


# -- the writer's timer: finalize, expire ---------------------------------------------


def _apply_finalize(service: FloorData, entry: FinalizeEntry) -> Result:
    since, since_meter = len(service.floor.past_fixed), len(service.floor.past_meter)
    result = service.floor.apply(entry.command())
    service.leaving += settle_pruned(service, since, since_meter)  # void or paid: they leave
    assert isinstance(result, FinalizeResult)
    for table, round_id in result.pruned:  # settled long enough ago: the journal answers
        service.extras.pop((table, round_id), None)
        for event in ("bets", "outcome", "void", "table_paid"):
            service.idem.pop(idempotency_key(table, round_id, event), None)
    return result


def _apply_arm(service: FloorData, entry: ArmEntry) -> Result:
    return service.floor.apply(entry.command(service.config.mystery_key))


def _apply_expire(service: FloorData, entry: ExpireEntry) -> Result:
    return service.floor.apply(entry.command())


# -- operators' changes: seed, reset, correct, and dual control -----------------------


def _prepare_change(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    """An operator's entry: the command's fields (the route checked them) and who."""
    command = r.command
    check_reduction(command)
    _check_retire_tables(service, command)
    if isinstance(command, ProposeCommand):
        fields: dict[str, Any] = {"change": command.proposed()}
    else:
        fields = to_builtins(command)
    return entry_from_dict({"kind": r.kind, "now": now, "by": r.by, **fields}, "request")


def _check_retire_tables(service: FloorData, command: Command | None) -> None:
    """A retirement asked for, proposed or approved: no table of the floor file names the
    link (live only: app/state/transfers.py)."""
    change: Any = command.change if isinstance(command, ProposeCommand) else command
    if isinstance(command, ApproveCommand):
        change = service.proposals.get(command.id, {}).get("change", {})
        link = change.get("link") if change.get("kind") == "retire" else None
    else:
        link = change.link if isinstance(change, RetireCommand) else None
    if link is not None:
        check_tables(service, link)


def _meter(service: FloorData, link_id: str, meter_id: str) -> dict[str, Any]:
    """A meter's display value and seed, for the audit log (UnknownError: no such meter)."""
    link = service.floor.link(link_id)
    index = service.floor.meter_index(link, meter_id)
    meter = link.meters[index]
    return {
        "value": format_money(link.display_values()[index]),
        "seed": format_money(meter.next_seed if meter.next_seed is not None else meter.seed),
    }


def _apply_change(
    service: FloorData, entry: OperatorEntry, approved_by: str | None = None
) -> Result:
    """Who, when, what, before, after, why: every operator action, from the journal."""
    check_not_retired(service, entry.link)  # a retired link's meters change no more
    before = _meter(service, entry.link, entry.meter)
    result = service.floor.apply(entry.command())
    correction = entry.correction if isinstance(entry, CorrectEntry) else None
    record: dict[str, Any] = {
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": entry.kind if correction is None else f"correct:{correction}",
        "link": entry.link, "meter": entry.meter, "before": before,
        "after": _meter(service, entry.link, entry.meter), "reason": entry.reason,
    }  # fmt: skip
    with_reason_code(record, entry)
    if approved_by:
        record["approved_by"] = approved_by
    if isinstance(entry, CorrectEntry):
        record["amount"] = format_money(entry.amount)
        if entry.table:
            record["round"] = f"{entry.table}/{entry.round}"
    service.audit.append(record)
    return result


def _propose(service: FloorData, entry: ProposeEntry) -> Any:
    """A supervisor's change, held until a different one approves it (dual control)."""
    change = entry.proposed()
    # Checked now (unknown link or meter: 404; a seed above the ceiling) so that
    # approving cannot fail on it.
    if isinstance(change, TransferChange):
        check_transfer(service, change, entry.now)
    elif isinstance(change, RetireChange):
        check_retire(service, change.link)
    elif isinstance(change, SuspendChange | ResumeChange):
        check_in_play(service, change.entry(entry.now, entry.by))
    else:
        check_not_retired(service, change.link)
        _meter(service, change.link, change.meter)
        proposed = change.entry(entry.now, entry.by)
        if not isinstance(proposed, ResetEntry):
            check_change(service.floor, proposed.command())
    pid = f"change-{len(service.proposals) + 1}"
    proposal = {
        "id": pid, "state": "proposed", "change": dict(entry.change), "by": entry.by,
        "at": entry.now, "reason": change.reason,
    }  # fmt: skip
    service.proposals[pid] = proposal
    service.audit.append(with_reason_code({
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": f"propose:{change.kind}", "link": change.link,
        "meter": getattr(change, "meter", None),
        "before": None, "after": {"change": pid}, "reason": change.reason,
    }, change))  # fmt: skip
    return proposal


def _proposal(service: FloorData, entry: ApproveEntry | RejectEntry) -> dict[str, Any]:
    """The proposal a second supervisor decides: open, and proposed by another."""
    proposal = service.proposals.get(entry.id)
    if proposal is None:
        raise UnknownError(f"no change {entry.id!r}")
    if proposal["state"] != "proposed":
        raise StateConflictError(f"change {entry.id} is already {proposal['state']}")
    if entry.by == proposal["by"]:
        raise StateConflictError("dual control: a different supervisor must decide this change")
    return proposal


def _approve(service: FloorData, entry: ApproveEntry) -> Any:
    """The change applied as if it were an entry now, with the proposer as `by`."""
    proposal = _proposal(service, entry)
    change = change_of(proposal["change"], entry.id)
    if isinstance(change, TransferChange):
        result: Any = apply_transfer(service, change, entry.now, proposal["by"], entry.by)
        proposal.update(state="approved", decided_by=entry.by, decided_at=entry.now)
        return result
    changed = change.entry(entry.now, proposal["by"])
    if isinstance(changed, RetireEntry):
        result = apply_retire(service, changed, approved_by=entry.by)
    elif isinstance(changed, SuspendEntry | ResumeEntry):
        result = apply_in_play(service, changed, approved_by=entry.by)
    else:
        result = _apply_change(service, changed, approved_by=entry.by)
    proposal.update(state="approved", decided_by=entry.by, decided_at=entry.now)
    return result


def _reject(service: FloorData, entry: RejectEntry) -> Any:
    proposal = _proposal(service, entry)
    proposal.update(state="rejected", decided_by=entry.by, decided_at=entry.now)
    service.audit.append({
        "id": len(service.audit) + 1, "at": entry.now, "who": entry.by,
        "action": f"reject:{proposal['change']['kind']}",
        "link": proposal["change"].get("link"), "meter": proposal["change"].get("meter"),
        "before": {"change": proposal["id"]}, "after": None, "reason": entry.reason,
    })  # fmt: skip
    return proposal


def _retire(service: FloorData, entry: RetireEntry) -> Any:
    return apply_retire(service, entry)


def _in_play(service: FloorData, entry: SuspendEntry | ResumeEntry) -> Any:
    return apply_in_play(service, entry)


def _operator_answer(service: FloorData, entry: Entry, result: Any) -> dict[str, Any]:
    return operator_answer(service, entry.kind, result)


def _table_answer(view: Callable[[FloorData, str, str], dict[str, Any]]) -> Answer:
    return lambda service, entry, result: view(service, entry.table, entry.round)


# -- payments (app/state/payments.py) -------------------------------------------------


def _prepare_paid(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, PaidCommand) and r.by is not None
    return prepare_paid(service, r.command, now, r.by)


def _prepare_table_paid(service: FloorData, r: Request, now: int, rng: RandomSource) -> Entry:
    assert isinstance(r.command, TablePaidCommand)
    return prepare_table_paid(service, *_round(r), r.command, now)


def _paid(apply: Callable[[FloorData, Any], PaymentResult]) -> Callable[[FloorData, Any], Any]:
    """A payment's apply: its result is the payments recorded, not a core result. A
    pruned award now paid leaves memory (app/state/past_awards.py)."""

    def paid(service: FloorData, entry: Any) -> PaymentResult:
        result = apply(service, entry)
        for record in result.payments:
            service.leaving += settle_paid(service, record["award"])
        return result

    return paid


_CHANGE = Kind(_apply_change, _prepare_change, _operator_answer)

KINDS: dict[str, Kind] = {
    "bets": Kind(_apply_bets, _prepare_bets, _table_answer(bets_answer), 201),
    "outcome": Kind(_apply_outcome, _prepare_outcome, _table_answer(outcome_answer), 201),
    "void": Kind(_apply_void, _prepare_void, _void_answer),
    "finalize": Kind(_apply_finalize),
    "arm": Kind(_apply_arm),
    "expire": Kind(_apply_expire),
    "seed": _CHANGE,
    "reset": _CHANGE,
    "correct": _CHANGE,
    "propose": Kind(_propose, _prepare_change, _operator_answer),
    "approve": Kind(_approve, _prepare_change, _operator_answer),
    "reject": Kind(_reject, _prepare_change, _operator_answer),
    "paid": Kind(_paid(apply_paid), _prepare_paid, payment_answer),
    "paid_confirm": Kind(_paid(apply_paid_confirm), _prepare_change, payment_answer),
    "table_paid": Kind(_paid(apply_table_paid), _prepare_table_paid, payment_answer),
    "suspend": Kind(_in_play, _prepare_change, _operator_answer),
    "resume": Kind(_in_play, _prepare_change, _operator_answer),
    "acknowledge": Kind(acknowledge, _prepare_change, acknowledge_answer),
    "config": Kind(apply_config, prepare_config, config_answer),  # type: ignore[arg-type]
    "config_propose": Kind(apply_propose, prepare_config, config_answer),  # type: ignore[arg-type]
    "config_approve": Kind(apply_approve, prepare_decision, config_answer),  # type: ignore[arg-type]
    "config_reject": Kind(apply_reject, prepare_decision, config_answer),  # type: ignore[arg-type]
    "start": Kind(apply_start, prepare_start, start_answer),  # type: ignore[arg-type]
    "retire": Kind(_retire, _prepare_change, _operator_answer),
}
# Operator accounts, personal tokens, tables' keys (app/state/account_kinds.py).
KINDS.update(
    {kind: Kind(apply, prepare_account, answer_account) for kind, apply in ACCOUNT_KINDS.items()}
)
