"""Pay-table rows that name the level (meter) they pay: "major:1.00" (docs/operations.md)."""

from __future__ import annotations

import pytest

from jackpot.money import Rate
from tables.errors import TablesError
from tables.games import FixedAmount, GameId, MeterShare, game
from tables.settle import FixedClaim, ShareClaim

from .rounds import bet, dealt_at, hand, m, play, table

MULTI = GameId.multi_link_casino_stud
TIERED = {
    "royal_flush": "major:1.00",
    "straight_flush": "minor:1.00",
    "four_of_a_kind": "mini:1.00",
}


def test_a_row_names_its_meter_and_share() -> None:
    pays = {row.name: row.pay for row in game(MULTI, TIERED).pay_table}
    assert pays["royal_flush"] == MeterShare(Rate(10_000), "major")
    assert pays["straight_flush"] == MeterShare(Rate(10_000), "minor")
    # a fixed row may become a level of the link: the mini of a tiered link
    assert pays["four_of_a_kind"] == MeterShare(Rate(10_000), "mini")
    assert pays["full_house"] == FixedAmount(m("200"))


def test_a_share_without_a_meter_is_the_link_s_first_meter_as_before() -> None:
    pays = {row.name: row.pay for row in game(MULTI, {"straight_flush": "0.20"}).pay_table}
    assert pays["straight_flush"] == MeterShare(Rate(2_000))
    assert getattr(pays["straight_flush"], "meter", "absent") is None


def test_4_5_each_hand_claims_its_own_level_in_deal_order() -> None:
    claims = play(
        table(MULTI, overrides=TIERED),
        [bet(1), bet(2), bet(3), bet(4)],
        [
            hand(1, "AD KD QD JD 10D"),
            hand(2, "QC JC 10C 9C 8C"),
            hand(3, "6H 6C 6S 6D 2H"),
            hand(4, "3S 3C 5H 7S 9D"),
        ],
    )
    one = m("1.00")
    assert claims == [
        ShareClaim(1, "player", "royal_flush", Rate(10_000), dealt_at(1), one, "major"),
        ShareClaim(2, "player", "straight_flush", Rate(10_000), dealt_at(2), one, "minor"),
        ShareClaim(3, "player", "four_of_a_kind", Rate(10_000), dealt_at(3), one, "mini"),
    ]


def test_the_default_pay_tables_claim_no_named_meter() -> None:
    claims = play(
        table(MULTI), [bet(1), bet(2)], [hand(1, "AD KD QD JD 10D"), hand(2, "6H 6C 6S 6D 2H")]
    )
    assert claims == [
        ShareClaim(1, "player", "royal_flush", Rate(10_000), dealt_at(1), m("1.00")),
        FixedClaim(2, "fixed", "four_of_a_kind", m("2000")),
    ]


@pytest.mark.parametrize(
    ("game_id", "row", "text", "says"),
    [
        (MULTI, "royal_flush", "major:1.50", "share of meter 'major' is at most 1.00"),
        (MULTI, "royal_flush", "major:0", "must pay more than 0"),
        (MULTI, "royal_flush", "major:", "not a rate"),
        (MULTI, "royal_flush", ":1.00", "names no meter"),
        (MULTI, "royal_flush", "ma jor:1.00", "is not a meter id"),
        (GameId.western_stud, "royal_flush", "major:1.00", "western_stud pays no meter"),
        (GameId.three_card_poker, "envy_akq", "mini:1.00", "not a hand"),
        (GameId.singapore_stud, "magic_card", "mini:1.00", "not a hand"),
    ],
)
def test_a_bad_level_row_is_refused_naming_the_row(
    game_id: GameId, row: str, text: str, says: str
) -> None:
    with pytest.raises(TablesError) as caught:
        game(game_id, {row: text})
    assert says in caught.value.message
    assert caught.value.loc == ("pay_table", row)
