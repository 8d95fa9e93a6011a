"""Payments as the state applies them: each award paid once, with its amount, only when
final; the liability is every final award not paid. Three Card Poker pay tables (4.4:
A K Q of hearts 1,250, straight flush 175; 4.7: envy 250 and 50)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.state.commands import BetsCommand, OutcomeCommand, PaidCommand, TablePaidCommand
from app.state.entries import (
    FinalizeEntry,
    PaidAward,
    PaidConfirmEntry,
    PaidEntry,
    TablePaidEntry,
)
from app.state.floor_state import FloorState
from app.state.kinds import prepare_bets, prepare_outcome
from app.state.payments import (
    METHODS,
    WitnessError,
    payables,
    prepare_paid,
    prepare_table_paid,
    unpaid,
)
from app.store.snapshots import dump_service, load_service
from jackpot.errors import JackpotError, StateConflictError
from jackpot.money import parse_money
from tests.support import command_of
from tests.unit.app.state.test_floor_state import box, config, hand


def settled(witness_above: str | None = None) -> FloorState:
    """A round at T03: box 1 A K Q of hearts (1,250, 4.4), box 2 a straight flush (175),
    box 3 A K Q of spades with a 1.00 wager (the tcp meter, and envy to boxes 1 and 2)."""
    cfg = config()
    if witness_above is not None:
        cfg = replace(cfg, witness_above=parse_money(witness_above))
    s = FloorState(cfg)
    bets = {"closed_at": 0, "boxes": [box(1), box(2), box(3)]}
    s.apply(prepare_bets(s, "T03", "R1", command_of(BetsCommand, bets), 0, random.Random(1)))
    body = {
        "boxes": [hand(1, "AH KH QH", 500), hand(2, "2S 3S 4S", 510), hand(3, "AS KS QS", 520)],
        "dealer": None,
    }
    s.apply(prepare_outcome(s, "T03", "R1", command_of(OutcomeCommand, body), 1_000))
    s.apply(FinalizeEntry(now=10_000))
    return s


def test_every_award_of_the_round_is_payable_once_final() -> None:
    s = settled()
    amounts = sorted((a.id, a.amount) for a in payables(s) if a.state == "final")
    assert [(i, a) for i, a in amounts if i.endswith("fixed")] == [
        ("T03/R1/1/player/fixed", parse_money("1250.00")),
        ("T03/R1/2/player/fixed", parse_money("175.00")),
    ]
    # Envy (4.7): 250 to every other box for box 3's A K Q of spades, 50 for box 1's hearts.
    assert [i for i, _ in amounts if "envy" in i] == [
        "T03/R1/1/player/envy/3", "T03/R1/2/player/envy/1", "T03/R1/2/player/envy/3",
        "T03/R1/3/player/envy/1",
    ]  # fmt: skip
    assert [i for i, _ in amounts if i.count("/") == 3] == ["T03/R1/3/player"]  # the meter


def test_the_payer_cannot_witness_their_own_payment() -> None:
    s = settled(witness_above="1000.00")
    award = next(a for a in payables(s) if a.id == "T03/R1/1/player/fixed")
    s.apply(
        prepare_paid(s, PaidCommand(award.id, award.amount or 0, "cash", "", ""), 20_000, "sam")
    )
    with pytest.raises(WitnessError):
        s.apply(PaidConfirmEntry(now=21_000, by="sam", award=award.id))
    assert award.id in {a.id for a in unpaid(s)}
    s.apply(PaidConfirmEntry(now=22_000, by="sue", award=award.id))
    assert award.id not in {a.id for a in unpaid(s)}


Attempt = tuple[int, bool, int, bool]  # award index, right amount, payer, by the table


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.booleans(), st.integers(0, 2), st.booleans()),
        max_size=25,
    )
)
def test_each_award_is_paid_once_with_its_amount_and_the_rest_is_the_liability(
    attempts: list[Attempt],
) -> None:
    s = settled(witness_above="1000.00")
    awards = sorted((a for a in payables(s) if a.state == "final"), key=lambda a: a.id)
    total = sum(a.amount or 0 for a in awards)
    now = 20_000
    for index, right, payer, at_table in attempts:
        award = awards[index]
        now += 1_000
        amount = (award.amount or 0) + (0 if right else 1)
        try:
            entry: TablePaidEntry | PaidEntry
            if at_table:
                entry = prepare_table_paid(s, "T03", "R1", TablePaidCommand([award.box]), now)
            else:
                command = PaidCommand(award.id, amount, METHODS[index % 4], "", "")
                entry = prepare_paid(s, command, now, ["sam", "sue", "olivia"][payer])
            s.apply(entry)
            s.apply(PaidConfirmEntry(now=now, by=["sue", "olivia", "sam"][payer], award=award.id))
        except JackpotError:
            pass  # refused: nothing changed
    paid = s.payments
    # Once each, with the award's own amount, only for final awards.
    assert all(p["amount"] == next(a.amount for a in awards if a.id == i) for i, p in paid.items())
    # One payment recorded per award paid: the audit log has each once.
    recorded = [a["award"] for a in s.audit if a["action"] in ("paid", "table_paid")]
    assert sorted(recorded) == sorted(paid)
    assert all(p["method"] == "table" for p in paid.values() if p["by"] == "T03")
    assert not any(p["kind"] == "meter" and p["method"] == "table" for p in paid.values())
    done = sum(p["amount"] for p in paid.values() if p["paid_at"] is not None)
    assert done + sum(a.amount or 0 for a in unpaid(s)) == total
    # The snapshot keeps them.
    assert load_service(s.config, dump_service(s, s.seq, "h")).payments == paid


def test_a_table_entry_naming_a_meter_award_is_refused_on_replay() -> None:
    # A forged or altered entry: the table's dealer never pays a meter award.
    s = settled()
    meter = PaidAward("T03/R1/3/player", parse_money("5000.60"))
    entry = TablePaidEntry(now=20_000, table="T03", round="R1", boxes=[3], awards=[meter])
    with pytest.raises(StateConflictError, match="meter award"):
        s.apply(entry)
    assert s.payments == {}
