"""Transfers between meters: exact, conserving, refused where they would mislead players."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import Amount, BoxWager, CloseBets, TransferMoney
from jackpot.config import LinkConfig, MeterConfig
from jackpot.errors import InvalidCommandError, JackpotError, StateConflictError
from jackpot.floor import Floor
from jackpot.meter import Meter
from jackpot.money import Money, parse_rate
from jackpot.reconcile import Ledger, reconcile
from jackpot.snapshot import dump, load
from jackpot.transfers import ABOVE_SEED, ALL, Holding, move
from tests.unit.jackpot.support import ROYAL, TIMING, finalize, m, outcome


def _meter(id_: str, seed: str, ceiling: str | None = None, **more: Any) -> MeterConfig:
    return MeterConfig(
        id=id_,
        seed=m(seed),
        rate=parse_rate("0.25"),
        reserve_rate=parse_rate("0.05"),
        ceiling=None if ceiling is None else m(ceiling),
        **more,
    )


def two_links(ceiling: str | None = None, **more: Any) -> Floor:
    """`stud` (major, minor) and `old` (major), which is being taken off the floor."""
    return Floor(
        [
            LinkConfig("stud", (_meter("major", "1000.00", ceiling), _meter("minor", "100.00"))),
            LinkConfig("old", (_meter("major", "500.00", **more),)),
        ],
        TIMING,
    )


def grow(f: Floor, link: str, table: str, rnd: str, at: int, wager: str, micro: int = 0) -> None:
    stake = Money(m(wager) + micro)
    f.apply(CloseBets(table, rnd, link, at, at, (BoxWager(1, stake),)))
    f.apply(outcome(table, rnd, at + 100))  # no win: the round settles
    f.apply(finalize(at + 5_000))


def send(
    f: Floor,
    amount: Amount,
    *,
    reserve: bool = False,
    below_seed: bool = False,
    to: tuple[str, str] = ("stud", "major"),
    source: tuple[str, str] = ("old", "major"),
) -> Any:
    return f.apply(
        TransferMoney(*source, *to, amount, reserve, below_seed, f.now if f.now > 0 else 1)
    )


def money_in(f: Floor) -> int:
    """Every meter's value and reserve: a transfer moves money within it."""
    return sum(meter.value + meter.reserve for link in f.links.values() for meter in link.meters)


def outside(f: Floor) -> tuple[int, int, int]:
    """What came in from or went out to anyone but a meter: contributions, the house,
    corrections, awards. A transfer changes none of it."""
    meters = [meter for link in f.links.values() for meter in link.meters]
    return (
        sum(mt.contributed for mt in meters),
        sum(mt.house_funded + mt.corrections for mt in meters),
        sum(mt.awarded + mt.withheld for mt in meters),
    )


# -- the pure rule ---------------------------------------------------------------------


def test_above_seed_moves_exactly_what_the_value_holds_above_the_seed() -> None:
    source = Holding(Money(m("612.34") + 5), m("40.00"), m("500.00"))  # 5 micro-units more
    target = Holding(m("1000.00"), m("0"), m("1000.00"))
    moved = move(source, target, ABOVE_SEED, include_reserve=False, below_seed=False, ceiling=None)
    assert moved.amount == m("112.34") + 5
    assert moved.source == Holding(m("500.00"), m("40.00"), m("500.00"))
    assert moved.target == Holding(Money(m("1112.34") + 5), m("0"), m("1000.00"))
    assert moved.reserve == 0


def test_include_reserve_moves_the_whole_reserve_reserve_to_reserve() -> None:
    source = Holding(m("600.00"), m("40.00"), m("500.00"))
    target = Holding(m("1000.00"), m("3.00"), m("1000.00"))
    moved = move(source, target, m("10.00"), include_reserve=True, below_seed=False, ceiling=None)
    assert (moved.amount, moved.reserve) == (m("10.00"), m("40.00"))
    assert moved.source == Holding(m("590.00"), m("0"), m("500.00"))
    assert moved.target == Holding(m("1010.00"), m("43.00"), m("1000.00"))


def test_below_the_seed_only_while_out_of_play_and_never_below_zero() -> None:
    source = Holding(m("600.00"), m("0"), m("500.00"))
    target = Holding(m("0"), m("0"), m("0"))
    with pytest.raises(StateConflictError, match="below its seed 500.00"):
        move(source, target, m("100.01"), include_reserve=False, below_seed=False, ceiling=None)
    moved = move(source, target, ALL, include_reserve=False, below_seed=True, ceiling=None)
    assert (moved.source.value, moved.target.value) == (0, m("600.00"))
    with pytest.raises(StateConflictError, match="below zero"):
        move(source, target, m("600.01"), include_reserve=False, below_seed=True, ceiling=None)


def test_the_target_never_passes_its_ceiling() -> None:
    source = Holding(m("600.00"), m("0"), m("500.00"))
    target = Holding(m("1950.00"), m("0"), m("1000.00"))
    with pytest.raises(StateConflictError, match="above its ceiling 2000.00"):
        move(source, target, m("50.01"), include_reserve=False, below_seed=False, ceiling=m("2000"))
    moved = move(
        source, target, m("50.00"), include_reserve=False, below_seed=False, ceiling=m("2000")
    )
    assert moved.target.value == m("2000.00")


def test_nothing_to_move_and_a_non_positive_amount_are_refused() -> None:
    at_seed = Holding(m("500.00"), m("0"), m("500.00"))
    target = Holding(m("0"), m("0"), m("0"))
    with pytest.raises(StateConflictError, match="nothing to transfer"):
        move(at_seed, target, ABOVE_SEED, include_reserve=True, below_seed=False, ceiling=None)
    with pytest.raises(InvalidCommandError, match="above zero"):
        move(at_seed, target, Money(0), include_reserve=False, below_seed=True, ceiling=None)


holdings = st.builds(
    Holding,
    st.integers(0, 10**12).map(Money),
    st.integers(0, 10**12).map(Money),
    st.integers(0, 10**12).map(Money),
)
amounts = st.one_of(st.just(ABOVE_SEED), st.just(ALL), st.integers(-10, 10**12).map(Money))


@given(
    holdings, holdings, amounts, st.booleans(), st.booleans(),
    st.none() | st.integers(0, 2 * 10**12).map(Money),
)  # fmt: skip
def test_a_transfer_conserves_money_or_is_refused(
    source: Holding,
    target: Holding,
    amount: Amount,
    include_reserve: bool,
    below_seed: bool,
    ceiling: Money | None,
) -> None:
    try:
        moved = move(
            source, target, amount,
            include_reserve=include_reserve, below_seed=below_seed, ceiling=ceiling,
        )  # fmt: skip
    except JackpotError:
        return
    before = source.value + source.reserve + target.value + target.reserve
    after = moved.source.value + moved.source.reserve + moved.target.value + moved.target.reserve
    assert after == before
    assert moved.source.value >= (0 if below_seed else source.seed)
    assert moved.source.reserve >= 0
    assert ceiling is None or moved.target.value <= ceiling
    assert moved.amount + moved.reserve > 0
    assert moved.target.value - target.value == moved.amount
    assert moved.target.reserve - target.reserve == moved.reserve


# -- on the floor's meters -------------------------------------------------------------


def test_a_transfer_is_counted_in_both_ledgers_and_both_still_balance() -> None:
    f = two_links()
    grow(f, "old", "T9", "R1", 1_000, "400.00")  # old/major: 500 + 100, reserve 20
    opening = {k: Ledger.of(f.links[k].meters[0]) for k in ("stud", "old")}
    record = send(f, ABOVE_SEED, reserve=True)
    assert (record.amount, record.reserve) == (m("100.00"), m("20.00"))
    old, stud = f.links["old"].meters[0], f.links["stud"].meters[0]
    assert (old.value, old.reserve) == (m("500.00"), 0)
    assert (stud.value, stud.reserve) == (m("1100.00"), m("20.00"))
    assert old.balanced() and stud.balanced()
    out = reconcile(opening["old"], Ledger.of(old))
    into = reconcile(opening["stud"], Ledger.of(stud))
    assert (out.transferred_out, out.transferred_out_reserve) == (m("100.00"), m("20.00"))
    assert (into.transferred_in, into.transferred_in_reserve) == (m("100.00"), m("20.00"))
    assert out.balanced and into.balanced


def test_a_pending_award_on_either_meter_refuses_the_transfer_and_changes_nothing() -> None:
    f = two_links()
    grow(f, "old", "T9", "R1", 1_000, "400.00")
    f.apply(CloseBets("T1", "R2", "stud", 10_000, 10_000, (BoxWager(1, m("1.00")),)))
    f.apply(outcome("T1", "R2", 10_100, (1, ROYAL, 10_050)))  # pending: the hold has not passed
    before = dump(f)
    with pytest.raises(StateConflictError, match="stud/major has an award pending"):
        send(f, ABOVE_SEED)
    assert dump(f) == before


def test_a_must_hit_by_level_takes_no_transfer() -> None:
    f = two_links(must_hit_by=m("900.00"))
    with pytest.raises(StateConflictError, match="old/major is a must-hit-by level"):
        send(f, m("1.00"), below_seed=True)


def test_a_meter_cannot_transfer_to_itself() -> None:
    f = two_links()
    with pytest.raises(InvalidCommandError) as refused:
        send(f, m("1.00"), to=("old", "major"))
    assert refused.value.loc == ("to_meter",)


def test_transferred_flows_survive_a_snapshot() -> None:
    f = two_links()
    grow(f, "old", "T9", "R1", 1_000, "400.00")
    send(f, ALL, reserve=True, below_seed=True)
    again = load(dump(f), [c.config for c in f.links.values()], TIMING)
    for link in ("old", "stud"):
        kept, was = again.links[link].meters[0], f.links[link].meters[0]
        assert Ledger.of(kept) == Ledger.of(was)
    assert again.links["old"].meters[0].value == 0


def _step(f: Floor, op: tuple[Any, ...], at: int) -> None:
    kind = op[0]
    if kind == "bets":
        _, link, wager = op
        grow(f, link, "T1" if link == "stud" else "T9", f"R{at}", at, "0.00", wager)
        return
    _, (link, meter), (to_link, to_meter), amount, reserve, below = op
    f.apply(TransferMoney(link, meter, to_link, to_meter, amount, reserve, below, at))


METERS = st.sampled_from([("stud", "major"), ("stud", "minor"), ("old", "major")])
OPS = st.one_of(
    st.tuples(st.just("bets"), st.sampled_from(["stud", "old"]), st.integers(1, 10**9)),
    st.tuples(
        st.just("transfer"), METERS, METERS,
        st.one_of(st.just(ABOVE_SEED), st.just(ALL), st.integers(1, 10**9).map(Money)),
        st.booleans(), st.booleans(),
    ),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(OPS, max_size=25), st.none() | st.just("1300.00"))
def test_conservation_over_random_histories_with_transfers(
    ops: list[tuple[Any, ...]], ceiling: str | None
) -> None:
    """Meters + reserves + paid + house over both links: a transfer changes none of the
    totals, and a refused one changes nothing at all."""
    f = two_links(ceiling)
    for n, op in enumerate(ops):
        before, totals, state = money_in(f), outside(f), dump(f)
        try:
            _step(f, op, 10_000 * (n + 1))
        except JackpotError:
            assert dump(f) == state
            continue
        meters: list[Meter] = [mt for link in f.links.values() for mt in link.meters]
        assert all(mt.balanced() and mt.value >= 0 and mt.reserve >= 0 for mt in meters)
        if op[0] == "transfer":
            assert (money_in(f), outside(f)) == (before, totals)
        out = sum(mt.transferred_out + mt.transferred_out_reserve for mt in meters)
        came = sum(mt.transferred_in + mt.transferred_in_reserve for mt in meters)
        assert out == came
