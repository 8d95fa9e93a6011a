"""The demo. `--boost`: hits frequent without sinking the meters. A full-meter hand (a royal flush,
A K Q of spades) is boosted by the factor; a straight flush, which takes 10 % of the
meter and leaves the rest below the seed (4.2, 4.5.1), only as far as the meter affords
at the demo's rates: straight flushes stay rare beside royal flushes. `--silent-table`: a
table goes silent past the round timeout and comes back."""

from __future__ import annotations

import random
from decimal import Decimal
from math import comb

import pytest

from app.cli.simulate import Options, Silence, run
from app.cli.simulated_rounds import TableSpec, boost_odds, partial_odds, plan_round
from app.config.demo import DEMO_FLOOR
from tables.games import GameId

HANDS5 = comb(52, 5)


def test_a_royal_flush_takes_the_whole_boost() -> None:
    assert boost_odds(GameId.casino_stud, 2000) == pytest.approx(1999 * 4 / HANDS5)
    assert boost_odds(GameId.three_card_poker, 2000) == pytest.approx(1999 / comb(52, 3))
    assert partial_odds(GameId.three_card_poker, 2000) == 0  # AKQ of spades only: 100 %


def test_a_straight_flush_drains_less_than_the_demo_meter_takes_in() -> None:
    # The demo stud major at its seed: 10 % of 10,000.00 a straight flush; in, 0.25 of
    # each 1.00 wager, three hands in four with one.
    drain = partial_odds(GameId.casino_stud, 2000) * 0.10 * 10_000
    assert drain < 0.25 * 1.00 * 0.75 / 2
    assert partial_odds(GameId.casino_stud, 2000) > 0  # still seen now and then


def test_royal_flushes_outnumber_straight_flushes_in_boosted_deals() -> None:
    spec = TableSpec("T01", GameId.casino_stud, 7, Decimal("1.00"), "t")
    rng = random.Random(7)
    royal = straight = 0
    for _ in range(1500):
        for hand in plan_round(spec, rng, 2000).hands:
            ranks = sorted(c.rank for c in hand.cards)
            suits = {c.suit for c in hand.cards}
            if len(suits) == 1 and (ranks[-1] - ranks[0] == 4 or ranks == [2, 3, 4, 5, 14]):
                if ranks[0] == 10:
                    royal += 1
                else:
                    straight += 1
    assert royal > 10 * max(1, straight), (royal, straight)


def test_a_silent_table_deals_then_keeps_quiet_past_the_round_timeout_then_deals() -> None:
    silence = Silence.of(["T03"], DEMO_FLOOR)
    assert (silence.tables, silence.dealing_s, silence.quiet_s) == (frozenset({"T03"}), 60, 210)
    assert silence.quiet_for(59.0) == 0
    assert silence.quiet_for(60.0) == 210  # the whole quiet stretch, from its start
    assert silence.quiet_for(200.0) == 70
    assert silence.quiet_for(270.0 + 5) == 0  # dealing again


def test_an_unknown_silent_table_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    options = Options("http://x", DEMO_FLOOR, None, 1.0, None, 1.0, 1.0, None, "T03,T99")
    assert run(options) == 2
    assert "--silent-table: no simulated table T99" in capsys.readouterr().err


def test_a_boosted_stud_meter_stays_near_its_seed_over_a_long_demo() -> None:
    """The demo's stud major (seed 10,000.00, 0.25 of each 1.00 wager) under the boosted
    deals of three 7-box tables: a royal flush resets it to the seed, a straight flush
    takes 10 % (rounded down to the cent). It spends little time under 95 % of its seed."""
    spec = TableSpec("T01", GameId.casino_stud, 7, Decimal("1.00"), "t")
    rng = random.Random(11)
    seed = meter = 1_000_000  # cents
    below = 0
    rounds = 6_000
    for _ in range(rounds):
        plan = plan_round(spec, rng, 2000)
        wagers = {b.box for b in plan.bets if b.jackpot and b.ante}
        meter += 25 * len(wagers)
        for hand in plan.hands:
            if hand.box not in wagers or hand.folded:
                continue
            ranks = sorted(c.rank for c in hand.cards)
            if len({c.suit for c in hand.cards}) == 1 and ranks[-1] - ranks[0] == 4:
                meter = seed if ranks[0] == 10 else meter - meter // 10
        below += meter < seed * 95 // 100
    assert below < rounds // 10, below
