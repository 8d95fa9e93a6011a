"""The regulator's meters per link meter: qualifying wagers, hits, overflow, exactly."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.commands import BoxWager, CloseBets, Correct, Finalize
from jackpot.config import LinkConfig, MeterConfig
from jackpot.errors import JackpotError
from jackpot.floor import Floor
from jackpot.money import RATE_SCALE, Money, parse_rate
from jackpot.records import FINAL
from jackpot.snapshot import dump, load
from jackpot.table_ledger import TABLE_FLOWS, link_flows
from tests.unit.jackpot.support import (
    ROYAL,
    STRAIGHT_FLUSH,
    TIMING,
    bets,
    finalize,
    floor,
    m,
    outcome,
    void,
)

LATER = 10**9  # far beyond every hold: everything before it is final


def test_qualifying_wagers_are_counted_per_box_and_amount() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00"), (2, "1.00"), (3, "0")))
    f.apply(bets("T2", "R2", 1_100, 1_100, (1, "2.00")))
    meter = f.links["stud"].meters[0]
    assert (meter.wagers, meter.wagered) == (3, m("4.00"))


def test_singapore_player_and_dealer_wagers_are_two_wagers() -> None:
    # singapore-stud 3.5: a jackpot wager on the player's hand, the dealer's, or both.
    f = floor()
    wagers = (BoxWager(1, m("1.00"), m("1.00")), BoxWager(2, Money(0), m("1.00")))
    f.apply(CloseBets("T1", "R1", "stud", 1_000, 1_000, wagers))
    meter = f.links["stud"].meters[0]
    assert (meter.wagers, meter.wagered) == (3, m("3.00"))


def test_voided_wagers_are_metered_apart_and_the_wagers_stay() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00"), (2, "2.00")))
    f.apply(void("T1", "R1", 1_500, (2,)))
    f.apply(void("T1", "R1", 1_600, (2,)))  # a box voided twice is voided once
    meter = f.links["stud"].meters[0]
    assert (meter.wagers, meter.wagered) == (2, m("3.00"))
    assert (meter.wagers_voided, meter.wagered_voided) == (1, m("2.00"))


def test_a_hit_is_counted_when_its_award_is_final_with_its_amount() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00")))
    f.apply(outcome("T1", "R1", 2_000, (1, STRAIGHT_FLUSH, 1_900)))
    meter = f.links["stud"].meters[0]
    assert meter.hits == 0  # pending: not a hit yet
    f.apply(finalize(LATER))
    # 10000.00 + 0.25, 10 % of it rounded down to the cent (4.2): 1000.02
    assert (meter.hits, meter.awarded) == (1, m("1000.02"))


def test_a_voided_award_is_no_hit() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00")))
    f.apply(outcome("T1", "R1", 2_000, (1, ROYAL, 1_900)))
    f.apply(void("T1", "R1", 2_100))
    f.apply(finalize(LATER))
    assert f.links["stud"].meters[0].hits == 0


def test_a_jackpot_paid_by_hand_is_a_hit() -> None:
    # 5.18.1: paid by hand at the last registered value; the meter was won all the same.
    f = floor()
    f.apply(Correct("hand_paid", "stud", "major", 1_000, "sue", "5.18.1", m("10000.00"), True))
    meter = f.links["stud"].meters[0]
    assert (meter.hits, meter.awarded) == (1, m("10000.00"))


def test_overflow_is_what_passed_the_ceiling() -> None:
    f = floor(ceiling="10000.30")
    for n in range(3):  # 0.25 each: 0.25 fits, 0.05 of the next, none of the third
        f.apply(bets("T1", f"R{n}", 1_000 + n, 1_000 + n, (1, "1.00")))
    f.apply(finalize(LATER))
    meter = f.links["stud"].meters[0]
    assert meter.value == m("10000.30")
    assert meter.overflow == m("0.45")
    assert meter.to_meter == m("0.30")


def test_counters_survive_a_snapshot() -> None:
    f = floor()
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00"), (2, "2.00")))
    f.apply(void("T1", "R1", 1_500, (2,)))
    f.apply(outcome("T1", "R1", 2_000, (1, STRAIGHT_FLUSH, 1_900)))
    f.apply(finalize(LATER))
    loaded = load(dump(f), [f.links["stud"].config], TIMING).links["stud"].meters[0]
    assert (loaded.wagers, loaded.wagered, loaded.wagers_voided, loaded.hits) == (
        2,
        m("3.00"),
        1,
        1,
    )


def test_a_snapshot_without_counters_is_refused() -> None:
    # The counters are lifetime meters: a state that lacks them cannot say them.
    f = floor()
    data = dump(f)
    del data["links"]["stud"]["meters"][0]["wagers"]
    with contextlib.suppress(ValueError):
        load(data, [f.links["stud"].config], TIMING)
        raise AssertionError("loaded a snapshot without the meters' counters")


RATES = st.sampled_from(["0", "0.01", "0.25", "0.33"])
CEILINGS = st.sampled_from([None, "10000.50", "10003.00", "10100.00"])
DESTINATIONS = st.sampled_from(["reserve", "house", "m0", "m1", "m2"])
WAGERS = st.sampled_from(["1.00", "2.00", "0.50", "5.00"])


def _link(meters: list[tuple[str, str, str | None, str]]) -> LinkConfig:
    def destination(i: int, to: str) -> str:
        # Another meter of the link, later in its order (the floor file refuses a cycle).
        if to.startswith("m") and not i < int(to[1:]) < len(meters):
            return "reserve"
        return to

    return LinkConfig(
        "stud",
        tuple(
            MeterConfig(
                f"m{i}",
                m("10000.00"),
                parse_rate(rate),
                parse_rate(reserve),
                None if ceiling is None else m(ceiling),
                overflow_to=destination(i, to),
            )
            for i, (rate, reserve, ceiling, to) in enumerate(meters)
        ),
    )


OPS = st.lists(
    st.tuples(
        st.sampled_from(["bets", "win", "void", "tick", "hand_paid"]),
        st.integers(0, 5_000),
        st.lists(
            st.tuples(st.integers(1, 5), WAGERS), min_size=1, max_size=4, unique_by=lambda b: b[0]
        ),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(
    meters=st.lists(st.tuples(RATES, RATES, CEILINGS, DESTINATIONS), min_size=1, max_size=3),
    ops=OPS,
)
def test_counters_are_what_happened(  # noqa: C901, PLR0912 - the model: one branch per op
    meters: list[tuple[str, str, str | None, str]],
    ops: list[tuple[str, int, list[tuple[int, str]]]],
) -> None:
    link = _link(meters)
    f = Floor([link], TIMING)
    now = 1_000_000
    accepted: dict[tuple[str, int], int] = {}  # (round, box) -> wager: an independent tally
    voided: set[tuple[str, int]] = set()
    hand_paid = hand_paid_amount = 0
    for n, (op, step, boxes) in enumerate(ops):
        now += step
        open_rounds = sorted(k for k, r in f.rounds.items() if r.state == "open")
        if op == "bets":
            rnd = f"R{n}"
            f.apply(bets(f"T{step % 3}", rnd, now - step % 2_000, now, *boxes))
            accepted.update(((rnd, box), m(w)) for box, w in boxes)
        elif op == "win" and open_rounds:
            table, rnd = open_rounds[step % len(open_rounds)]
            live = sorted(b for b, r in f.rounds[(table, rnd)].boxes.items() if not r.voided)
            claims = [
                (box, ROYAL if (box + step) % 2 else STRAIGHT_FLUSH, now - 100)
                for box in live[: 1 + step % 2]
            ]
            with contextlib.suppress(JackpotError):
                f.apply(outcome(table, rnd, now, *claims))
        elif op == "void" and open_rounds:
            table, rnd = open_rounds[step % len(open_rounds)]
            with contextlib.suppress(JackpotError):
                f.apply(void(table, rnd, now, (boxes[0][0],)))
                if (rnd, boxes[0][0]) in accepted:
                    voided.add((rnd, boxes[0][0]))
        elif op == "hand_paid":
            paid = m(boxes[0][1])
            f.apply(Correct("hand_paid", "stud", "m0", now, "sue", "5.18.1", paid, False))
            hand_paid += 1
            hand_paid_amount += paid
        else:
            f.apply(Finalize(now))
        for meter in f.links["stud"].meters:  # conservation at every step
            assert meter.balanced()
    f.apply(Finalize(now + LATER))
    # Per table, the final events' flows add up to the link's (a jackpot paid by hand is
    # no table's).
    tables = [sum(flows[i] for flows in f.table_flows.values()) for i in range(len(TABLE_FLOWS))]
    expected = list(link_flows(f.links["stud"]))
    expected[TABLE_FLOWS.index("meter_awards")] -= hand_paid
    expected[TABLE_FLOWS.index("meter_awarded")] -= hand_paid_amount
    assert tables == expected
    total = sum(accepted.values())
    for i, meter in enumerate(f.links["stud"].meters):
        config = link.meters[i]
        assert (meter.wagers, meter.wagered) == (len(accepted), total)
        gone = sum(accepted[k] for k in voided)
        assert (meter.wagers_voided, meter.wagered_voided) == (len(voided), gone)
        finals = [a for a in f.awards.values() if a.state == FINAL and a.event.meter == i]
        # Hits are the final meter awards (and the jackpots paid by hand), wins their amounts.
        assert meter.hits == len(finals) + (hand_paid if i == 0 else 0)
        if i != 0 or not hand_paid:
            assert meter.awarded == sum(a.amount or 0 for a in finals)
        # Overflow is what passed the ceiling: the nominal contributions (and what another
        # meter passed on) less what the meter kept, sent where the meter says.
        nominal = sum(w * config.rate // RATE_SCALE for w in accepted.values())
        nominal_reserve = sum(w * config.reserve_rate // RATE_SCALE for w in accepted.values())
        assert meter.to_meter + meter.overflow == nominal + meter.overflow_from_meter
        passed = meter.overflow_to_house + meter.overflow_to_meter
        assert meter.to_reserve - (meter.overflow - passed) == nominal_reserve
        if config.overflow_to == "reserve":
            assert passed == 0
        elif config.overflow_to == "house":
            assert meter.overflow_to_meter == 0
        else:
            assert meter.overflow_to_house == 0
        if config.ceiling is None:
            assert meter.overflow == 0
        # Conservation, with every counter: money in = money out + money held.
        assert meter.overflow_from_meter == sum(
            o.overflow_to_meter
            for o, c in zip(f.links["stud"].meters, link.meters, strict=True)
            if c.overflow_to == config.id
        )
        assert meter.balanced()
        assert (
            meter.contributed + meter.house_funded + meter.corrections
            == meter.awarded + meter.value + meter.reserve + meter.withheld
        )


def _two_meters(first_to: str) -> Floor:
    major = MeterConfig(
        "major", m("10000.00"), parse_rate("0.25"), parse_rate("0.05"), m("10000.30"),
        overflow_to=first_to,
    )  # fmt: skip
    minor = MeterConfig("minor", m("100.00"), parse_rate("0.10"), parse_rate("0"))
    return Floor([LinkConfig("stud", (major, minor))], TIMING)


def test_overflow_to_the_house_leaves_meter_and_reserve() -> None:
    f = _two_meters("house")
    for n in range(3):  # 0.25 each past 10000.30: 0.25 kept, 0.05 then nothing
        f.apply(bets("T1", f"R{n}", 1_000 + n, 1_000 + n, (1, "1.00")))
    f.apply(finalize(LATER))
    major, minor = f.links["stud"].meters
    assert (major.value, major.reserve) == (m("10000.30"), m("0.15"))
    assert (major.overflow, major.overflow_to_house) == (m("0.45"), m("0.45"))
    assert minor.value == m("100.30")  # its own 0.10s only
    assert major.balanced() and minor.balanced()


def test_overflow_to_another_meter_of_the_link_goes_on_its_value() -> None:
    f = _two_meters("minor")
    for n in range(3):
        f.apply(bets("T1", f"R{n}", 1_000 + n, 1_000 + n, (1, "1.00")))
    f.apply(finalize(LATER))
    major, minor = f.links["stud"].meters
    assert (major.value, major.reserve, major.overflow_to_meter) == (
        m("10000.30"), m("0.15"), m("0.45")
    )  # fmt: skip
    assert (minor.value, minor.overflow_from_meter) == (m("100.75"), m("0.45"))
    assert major.balanced() and minor.balanced()


def test_a_voided_contribution_that_passed_to_the_house_is_covered_by_it() -> None:
    f = _two_meters("house")
    f.apply(bets("T1", "R1", 1_000, 1_000, (1, "1.00")))
    f.apply(bets("T1", "R2", 1_001, 1_001, (1, "1.00")))  # 0.05 kept, 0.20 to the house
    f.apply(finalize(10_000))
    f.apply(void("T1", "R2", 10_000))
    f.apply(finalize(LATER))
    major = f.links["stud"].meters[0]
    # The meter gives back the 0.05 it kept, the reserve its 0.05; the house the 0.20.
    assert (major.value, major.reserve) == (m("10000.25"), m("0.05"))
    assert major.house_cover_meter == m("0.20")
    assert major.balanced()
