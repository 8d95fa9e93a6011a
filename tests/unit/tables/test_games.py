"""Games and pay tables: the rules' values by default, a table's overrides on top."""

from __future__ import annotations

import pytest

from jackpot.money import Rate, parse_money
from tables.errors import TablesError
from tables.games import FixedAmount, Game, GameId, MeterShare, Odds, Pay, game

FULL = MeterShare(Rate(10_000))
TENTH = MeterShare(Rate(1_000))


def dollars(text: str) -> FixedAmount:
    return FixedAmount(parse_money(text))


def rows(g: Game) -> dict[str, Pay]:
    return {row.name: row.pay for row in g.pay_table}


def test_4_2_casino_stud_progressive_pay_table() -> None:
    assert rows(game(GameId.casino_stud)) == {
        "royal_flush": FULL,
        "straight_flush": TENTH,
        "four_of_a_kind": dollars("500"),
        "full_house": dollars("200"),
        "flush": dollars("100"),
    }


def test_4_2_multi_link_progressive_pay_table() -> None:
    assert rows(game(GameId.multi_link_casino_stud)) == {
        "royal_flush": FULL,
        "straight_flush": TENTH,
        "four_of_a_kind": dollars("2000"),
        "full_house": dollars("200"),
        "flush": dollars("100"),
    }


def test_4_4_three_card_poker_progressive_pay_table_with_envy_bonus() -> None:
    assert rows(game(GameId.three_card_poker)) == {
        "akq_spades": FULL,
        "akq": dollars("1250"),
        "straight_flush": dollars("175"),
        "three_of_a_kind": dollars("150"),
        "straight": dollars("15"),
        "envy_akq_spades": dollars("250"),
        "envy_akq": dollars("50"),
    }


def test_4_2_and_4_5_singapore_stud_payouts() -> None:
    assert rows(game(GameId.singapore_stud)) == {
        "royal_flush": FULL,
        "straight_flush": TENTH,
        "four_of_a_kind": Odds(500),
        "full_house": Odds(100),
        "flush": Odds(50),
        "magic_card": Odds(5),
        "lucky_player": Odds(5),
        "lucky_dealer": Odds(5),
    }


def test_western_stud_river_bet_payment_schedule() -> None:
    assert rows(game(GameId.western_stud)) == {
        "royal_flush": Odds(25),
        "straight_flush": Odds(15),
        "four_of_a_kind": Odds(5),
        "full_house": Odds(5),
        "flush": Odds(2),
        "straight": Odds(2),
        "eight_or_better_low": Odds(1),
    }


@pytest.mark.parametrize(
    ("game_id", "hand_size", "fold_keeps", "uses_meter"),
    [
        (GameId.casino_stud, 5, False, True),  # 3.10; 3.12.1 fold forfeits
        (GameId.multi_link_casino_stud, 5, True, True),  # 3.12.1 / 4.3 fold keeps
        (GameId.three_card_poker, 3, False, True),  # 3.10; 3.12.1 fold forfeits
        (GameId.singapore_stud, 5, None, True),  # 1.1.4; fold: a table setting
        (GameId.western_stud, 5, False, False),  # no meter: the River bet only
    ],
)
def test_games_by_rule(
    game_id: GameId, hand_size: int, fold_keeps: bool | None, uses_meter: bool
) -> None:
    g = game(game_id)
    assert (g.id, g.hand_size, g.fold_keeps_jackpot, g.uses_meter) == (
        game_id, hand_size, fold_keeps, uses_meter,
    )  # fmt: skip


def test_game_by_its_string_id() -> None:
    assert game("three_card_poker") is game(GameId.three_card_poker)


def test_unknown_game_is_refused() -> None:
    with pytest.raises(TablesError, match="unknown game 'baccarat'"):
        game("baccarat")


def test_override_replaces_a_fixed_amount() -> None:
    g = game(GameId.casino_stud, {"four_of_a_kind": "750.00"})
    assert g.pay("four_of_a_kind") == dollars("750")
    assert g.pay("full_house") == dollars("200")  # other rows keep the rules' values
    assert game(GameId.casino_stud).pay("four_of_a_kind") == dollars("500")  # not mutated


def test_override_replaces_odds_and_meter_share_and_envy() -> None:
    g = game(GameId.singapore_stud, {"flush": "60", "straight_flush": "0.05"})
    assert g.pay("flush") == Odds(60)
    assert g.pay("straight_flush") == MeterShare(Rate(500))
    envy = game(GameId.three_card_poker, {"envy_akq_spades": "500"})
    assert envy.pay("envy_akq_spades") == dollars("500")


def test_unknown_row_is_refused_naming_it_and_the_rows() -> None:
    with pytest.raises(TablesError) as caught:
        game(GameId.casino_stud, {"straight": "10"})
    assert "'straight'" in caught.value.message
    assert "four_of_a_kind" in caught.value.message
    assert caught.value.loc == ("pay_table", "straight")


@pytest.mark.parametrize(
    ("game_id", "row", "text"),
    [
        (GameId.singapore_stud, "flush", "50.5"),  # odds are whole "N to 1"
        (GameId.casino_stud, "royal_flush", "1.5"),  # a share is at most 100 %
        (GameId.casino_stud, "flush", "-1"),
        (GameId.casino_stud, "flush", "1e3"),
        (GameId.casino_stud, "flush", "0"),  # a row pays something
        (GameId.western_stud, "straight", "0.00"),
        (GameId.casino_stud, "straight_flush", "0"),
    ],
)
def test_invalid_override_is_refused(game_id: GameId, row: str, text: str) -> None:
    with pytest.raises(TablesError) as caught:
        game(game_id, {row: text})
    assert caught.value.loc == ("pay_table", row)
