"""Bets closed: which jackpot wagers a table accepts, returns or refuses; Singapore's draws."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.money import ZERO, Money
from tables.bets import BetDecision, BoxBet, TableSettings, check_bets, decide_bets, draw
from tables.cards import DECK, Card, Suit
from tables.errors import InvalidBetError, TablesError
from tables.games import GameId, game

from .rounds import bet, m, table

STUDS = [GameId.casino_stud, GameId.multi_link_casino_stud, GameId.three_card_poker]


@pytest.mark.parametrize("game_id", STUDS)
def test_3_8_jackpot_wager_with_an_ante_is_accepted(game_id: GameId) -> None:
    [decision] = check_bets(table(game_id), [bet(3, ante="25.00", jackpot="1.00")])
    assert decision == BetDecision(3, "accepted", m("1.00"), ZERO, None, m("25.00"))


@pytest.mark.parametrize("game_id", STUDS)
def test_5_4_jackpot_wager_without_ante_is_returned(game_id: GameId) -> None:
    [decision] = check_bets(table(game_id), [bet(2, ante="0", jackpot="1.00")])
    assert decision == BetDecision(2, "returned", ZERO, ZERO, "no ante (rule 5.4)")


def test_3_5_singapore_jackpot_wager_without_ante_is_returned() -> None:
    # Singapore's 5.4 is about exposed cards: its ante requirement is 3.5.
    [decision] = check_bets(table(GameId.singapore_stud), [bet(1, ante="0", dealer="1.00")])
    assert (decision.status, decision.reason) == ("returned", "no ante (rule 3.5)")
    assert (decision.wager, decision.dealer_wager) == (ZERO, ZERO)


def test_no_jackpot_wager_is_status_none_and_keeps_the_ante_and_player() -> None:
    [decision] = check_bets(
        table(GameId.three_card_poker), [bet(4, ante="5.00", jackpot="0", player="p1")]
    )
    assert decision == BetDecision(4, "none", ZERO, ZERO, None, m("5.00"), "p1")
    assert decision.has_ante


def test_3_6_pair_plus_only_box_has_no_ante() -> None:
    [decision] = check_bets(table(GameId.three_card_poker), [bet(4, ante="0", jackpot="0")])
    assert decision.status == "none"
    assert not decision.has_ante


@pytest.mark.parametrize("game_id", STUDS)
@pytest.mark.parametrize("jackpot", ["2.00", "0.50", "1.01"])
def test_3_4_jackpot_wager_must_be_the_prescribed_amount(game_id: GameId, jackpot: str) -> None:
    with pytest.raises(InvalidBetError) as caught:
        check_bets(table(game_id), [bet(1), bet(2, jackpot=jackpot)])
    assert caught.value.loc == ("boxes", 1, "jackpot")
    assert "1.00" in caught.value.message and "3.4" in caught.value.message


@pytest.mark.parametrize("game_id", STUDS + [GameId.western_stud])
def test_2_1_1_b_jackpot_bet_is_for_the_players_hand_only(game_id: GameId) -> None:
    with pytest.raises(InvalidBetError) as caught:
        check_bets(table(game_id), [bet(1, jackpot="1.00", dealer="1.00")])
    assert caught.value.loc == ("boxes", 0, "jackpot_dealer")


def test_3_5_singapore_one_or_more_credits_on_player_dealer_or_both() -> None:
    settings = table(GameId.singapore_stud, wager="1.00")
    decisions = check_bets(
        settings,
        [
            bet(1, jackpot="3.00"),
            bet(2, jackpot="0", dealer="2.00"),
            bet(5, jackpot="1", dealer="1"),
        ],
    )
    assert [(d.box, d.status, d.wager, d.dealer_wager) for d in decisions] == [
        (1, "accepted", m("3"), ZERO),
        (2, "accepted", ZERO, m("2")),
        (5, "accepted", m("1"), m("1")),
    ]


@pytest.mark.parametrize(
    ("jackpot", "dealer", "field"), [("1.50", "0", "jackpot"), ("1", "0.50", "jackpot_dealer")]
)
def test_3_5_singapore_wager_that_is_not_whole_credits_is_refused(
    jackpot: str, dealer: str, field: str
) -> None:
    with pytest.raises(InvalidBetError, match="3.5") as caught:
        check_bets(table(GameId.singapore_stud), [bet(6, jackpot=jackpot, dealer=dealer)])
    assert caught.value.loc == ("boxes", 0, field)


def test_western_river_bet_any_amount_up_to_the_ante() -> None:
    settings = table(GameId.western_stud)
    decisions = check_bets(
        settings, [bet(1, ante="10.00", jackpot="10.00"), bet(2, ante="10.00", jackpot="0.35")]
    )
    assert [(d.status, d.wager) for d in decisions] == [
        ("accepted", m("10")),
        ("accepted", m("0.35")),
    ]


def test_western_river_bet_shall_not_exceed_the_ante() -> None:
    with pytest.raises(InvalidBetError, match="shall not exceed the ante") as caught:
        check_bets(table(GameId.western_stud), [bet(1, ante="10.00", jackpot="10.01")])
    assert caught.value.loc == ("boxes", 0, "jackpot")


def test_western_river_bet_without_ante_is_returned() -> None:
    [decision] = check_bets(table(GameId.western_stud), [bet(1, ante="0", jackpot="5")])
    assert decision.status == "returned" and decision.reason is not None
    assert "no ante" in decision.reason


@pytest.mark.parametrize("box", [0, 8, -1])
def test_a_box_that_is_not_at_the_table_is_refused(box: int) -> None:
    with pytest.raises(InvalidBetError) as caught:
        check_bets(table(GameId.casino_stud, boxes=7), [bet(1), bet(box)])
    assert caught.value.loc == ("boxes", 1, "box")


def test_3_5_a_box_bet_twice_is_refused() -> None:
    with pytest.raises(InvalidBetError, match="box 3 appears twice") as caught:
        check_bets(table(GameId.casino_stud), [bet(3), bet(1), bet(3)])
    assert caught.value.loc == ("boxes", 2, "box")


@pytest.mark.parametrize(
    ("field", "value"), [("ante", -1), ("jackpot", -1_000_000), ("ante", 10_001)]
)
def test_negative_or_sub_cent_amounts_are_refused(field: str, value: int) -> None:
    amounts = {"ante": m("10"), "jackpot": m("1")} | {field: Money(value)}
    with pytest.raises(InvalidBetError) as caught:
        check_bets(table(GameId.casino_stud), [BoxBet(1, amounts["ante"], amounts["jackpot"])])
    assert caught.value.loc == ("boxes", 0, field)


def test_decisions_come_in_the_order_given() -> None:
    decisions = check_bets(
        table(GameId.casino_stud), [bet(5), bet(2, ante="0"), bet(7, jackpot="0")]
    )
    assert [(d.box, d.status) for d in decisions] == [(5, "accepted"), (2, "returned"), (7, "none")]


# Table settings.
@pytest.mark.parametrize(
    ("game_id", "setting"),
    [(GameId.casino_stud, True), (GameId.three_card_poker, True),
     (GameId.multi_link_casino_stud, False), (GameId.western_stud, True)],
)  # fmt: skip
def test_3_12_1_fold_is_fixed_by_rule_outside_singapore(game_id: GameId, setting: bool) -> None:
    with pytest.raises(TablesError, match="by rule"):
        table(game_id, fold_keeps_jackpot=setting)
    assert table(game_id, fold_keeps_jackpot=not setting).fold_keeps is (not setting)


def test_singapore_fold_is_a_table_setting_forfeit_by_default() -> None:
    assert table(GameId.singapore_stud).fold_keeps is False
    assert table(GameId.singapore_stud, fold_keeps_jackpot=True).fold_keeps is True


@pytest.mark.parametrize("boxes", [0, 53])
def test_table_box_count_is_checked(boxes: int) -> None:
    with pytest.raises(TablesError):
        table(GameId.casino_stud, boxes=boxes)


def test_3_3_prescribed_jackpot_wager_is_positive_except_at_western() -> None:
    with pytest.raises(TablesError, match="3.3"):
        TableSettings(game(GameId.casino_stud), ZERO, 7)
    assert TableSettings(game(GameId.western_stud), ZERO, 7).prescribed_wager == 0


def test_lucky_dealer_odds_is_at_least_one() -> None:
    with pytest.raises(TablesError):
        TableSettings(game(GameId.singapore_stud), m("1"), 7, lucky_dealer_odds=0)


# Singapore Stud draws (4.3-4.5).
@pytest.mark.parametrize("game_id", STUDS + [GameId.western_stud])
def test_draws_only_at_singapore(game_id: GameId) -> None:
    assert draw(table(game_id), random.Random(1)) is None


class Fixed:
    """A random source that answers the given numbers in turn."""

    def __init__(self, *answers: int) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[int, ...]] = []

    def randrange(self, *args: int) -> int:
        self.calls.append(args)
        return self.answers.pop(0)


def test_4_3_to_4_5_draw_uses_the_whole_deck_every_box_and_one_in_n() -> None:
    rng = Fixed(51, 6, 0)
    drawn = draw(table(GameId.singapore_stud, boxes=7), rng)
    assert drawn is not None
    assert drawn.magic_card == DECK[51] == Card(14, Suit.C)
    assert (drawn.lucky_box, drawn.lucky_dealer) == (6, True)
    assert rng.calls == [(52,), (1, 8), (10,)]


def test_draws_cover_every_card_and_box_and_lucky_dealer_about_one_in_n() -> None:
    settings = TableSettings(game(GameId.singapore_stud), m("1"), 5, lucky_dealer_odds=4)
    rng = random.Random(20261122)
    rounds = [draw(settings, rng) for _ in range(4000)]
    cards = Counter(d.magic_card for d in rounds if d is not None)
    boxes = Counter(d.lucky_box for d in rounds if d is not None)
    lucky = sum(1 for d in rounds if d is not None and d.lucky_dealer)
    assert set(cards) == set(DECK)
    assert set(boxes) == {1, 2, 3, 4, 5}
    assert 800 < lucky < 1200  # 1 in 4 of 4000: 1000 expected, sd about 27


def test_draw_accepts_a_system_random() -> None:
    drawn = draw(table(GameId.singapore_stud), random.SystemRandom())
    assert drawn is not None and 1 <= drawn.lucky_box <= 7


# -- whoever makes the decisions, the rules decide the same -------------------

AMOUNTS = ["0", "0.50", "1.00", "2.00", "10.00", "25.00"]
# Mostly what a table takes (none, or the prescribed 1.00), sometimes any amount.
WAGERS = st.one_of(st.sampled_from(["0", "1.00"]), st.sampled_from(AMOUNTS))


def expected_decision(settings: TableSettings, b: BoxBet, i: int) -> tuple[object, ...]:
    """3.4, 3.5, 3.8 and 5.4 and the River rule, as the rules state them: the box's
    (status, wager, dealer_wager) or the field refused."""
    game_, one = settings.game, m("1.00")  # the tables below prescribe 1.00
    if b.jackpot_dealer and not game_.dealer_wager:
        return ("boxes", i, "jackpot_dealer")
    if game_.dealer_wager and b.jackpot % one:
        return ("boxes", i, "jackpot")
    if game_.dealer_wager and b.jackpot_dealer % one:
        return ("boxes", i, "jackpot_dealer")
    if not game_.dealer_wager and not game_.river and b.jackpot not in (0, one):
        return ("boxes", i, "jackpot")
    if not (b.jackpot or b.jackpot_dealer):
        return ("none", 0, 0)
    if not b.ante:
        return ("returned", 0, 0)
    if game_.river and b.jackpot > b.ante:
        return ("boxes", i, "jackpot")
    return ("accepted", b.jackpot, b.jackpot_dealer)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(GameId),
    st.lists(
        st.tuples(
            st.sampled_from(["0", "10.00", "25.00"]),
            WAGERS,
            st.one_of(st.just("0"), WAGERS),
            st.sampled_from([None, "p1"]),
        ),
        min_size=1,
        max_size=7,
    ),
)
def test_3_4_3_5_3_8_5_4_decide_bets_follows_the_rules_with_any_maker(
    game_id: GameId, amounts: list[tuple[str, str, str, str | None]]
) -> None:
    settings_ = table(game_id)
    bets = [
        BoxBet(box, m(ante), m(jackpot), m(dealer), player)
        for box, (ante, jackpot, dealer, player) in enumerate(amounts, 1)
    ]
    expected = [expected_decision(settings_, b, i) for i, b in enumerate(bets)]
    refused = next((e for e in expected if e[0] == "boxes"), None)
    try:
        made = decide_bets(settings_, bets, lambda *fields: fields)
    except InvalidBetError as error:
        assert error.loc == refused
        return
    assert refused is None
    assert [(f[1], f[2], f[3]) for f in made] == expected
    # The fields in BetDecision's order, as check_bets makes them; ante and player kept.
    assert [BetDecision(*f) for f in made] == check_bets(settings_, bets)
    assert [(f[0], f[5], f[6]) for f in made] == [(b.box, b.ante, b.player) for b in bets]
