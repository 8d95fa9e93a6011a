"""A round's cards are one deck: duplicates, hand sizes, the dealer's hand (5.8, 5.15)."""

from __future__ import annotations

import pytest

from tables.cards import parse_cards
from tables.errors import InvalidHandError
from tables.games import GameId
from tables.hands import BoxHand, DealerHand, check_hands

from .rounds import dealer, hand, table


def test_a_round_from_one_deck_passes() -> None:
    check_hands(
        table(GameId.casino_stud),
        [hand(1, "AS KS QS JS 10S"), hand(4, "2H 2D 2S 2C 9H", folded=True)],
        dealer("3C 5D 9S JC KD"),
    )


def test_5_8_3_duplicate_card_between_boxes_names_card_box_and_place() -> None:
    with pytest.raises(InvalidHandError) as caught:
        check_hands(
            table(GameId.casino_stud),
            [hand(1, "AS KS QS JS 10S"), hand(3, "2H 3H 4H AS 9C")],
            None,
        )
    assert caught.value.message == "duplicate card AS (also in box 1): rule 5.8.3"
    assert caught.value.loc == ("boxes", 1, "cards", 3)


def test_5_8_3_duplicate_card_within_one_hand() -> None:
    with pytest.raises(InvalidHandError) as caught:
        check_hands(table(GameId.casino_stud), [hand(2, "AS KS AS JS 10S")], None)
    assert caught.value.message == "duplicate card AS (also in box 2): rule 5.8.3"
    assert caught.value.loc == ("boxes", 0, "cards", 2)


def test_5_8_3_duplicate_card_in_the_dealers_hand() -> None:
    with pytest.raises(InvalidHandError) as caught:
        check_hands(
            table(GameId.multi_link_casino_stud),
            [hand(1, "AS KS QS JS 10S"), hand(2, "2H 3H 4H 5C 9C")],
            dealer("3C 5D 9C JC KD"),
        )
    assert caught.value.message == "duplicate card 9C (also in box 2): rule 5.8.3"
    assert caught.value.loc == ("dealer", "cards", 2)


def test_5_5_singapore_cites_its_own_rule_for_an_excess_card() -> None:
    with pytest.raises(InvalidHandError, match=r"rule 5\.5$"):
        check_hands(
            table(GameId.singapore_stud), [hand(1, "AS KS QS JS 10S")], dealer("AS 5D 9C JC KD")
        )


@pytest.mark.parametrize(
    ("game_id", "cards", "folded"),
    [
        (GameId.casino_stud, "AS KS QS JS", False),
        (GameId.casino_stud, "AS KS QS JS 10S 9S", False),
        (GameId.casino_stud, "AS KS QS JS", True),  # a casino stud fold keeps five cards
        (GameId.multi_link_casino_stud, "AS KS QS", False),
        (GameId.three_card_poker, "AS KS QS JS 10S", False),
        (GameId.three_card_poker, "AS KS", True),
        (GameId.singapore_stud, "AS KS QS JS", False),
        (GameId.western_stud, "AS KS QS JS", False),  # a hand still in play has five
        (GameId.western_stud, "AS KS QS JS 10S", True),  # a folded hand has four
    ],
)
def test_5_15_a_hand_of_the_wrong_size_is_refused(
    game_id: GameId, cards: str, folded: bool
) -> None:
    dealer_hand = dealer("2C 3C 4C 5C 7D") if game_id is GameId.singapore_stud else None
    good = hand(5, "2D 3D 4D" if game_id is GameId.three_card_poker else "2D 3D 4D 5D 7H")
    with pytest.raises(InvalidHandError) as caught:
        check_hands(table(game_id), [good, hand(6, cards, folded)], dealer_hand)
    assert caught.value.loc == ("boxes", 1, "cards")
    assert caught.value.message.startswith(f"box 6 has {len(cards.split())} cards")


@pytest.mark.parametrize(
    ("game_id", "cards", "folded"),
    [
        (GameId.three_card_poker, "AS KS QS", False),
        (GameId.three_card_poker, "AS KS QS", True),
        (GameId.western_stud, "AS KS QS JS 10S", False),
        (GameId.western_stud, "AS KS QS JS", True),
    ],
)
def test_hand_sizes_by_game(game_id: GameId, cards: str, folded: bool) -> None:
    check_hands(table(game_id), [hand(1, cards, folded)], None)


def test_singapore_requires_the_dealers_hand_and_its_dealt_at() -> None:
    settings = table(GameId.singapore_stud)
    with pytest.raises(InvalidHandError) as caught:
        check_hands(settings, [hand(1, "AS KS QS JS 10S")], None)
    assert caught.value.loc == ("dealer",)
    with pytest.raises(InvalidHandError) as caught:
        check_hands(settings, [], DealerHand(parse_cards("2C 3C 4C 5C 7D"), None))
    assert caught.value.loc == ("dealer", "dealt_at")


@pytest.mark.parametrize("cards", ["2C 3C 4C 5C", "2C 3C 4C 5C 7D 8D", ""])
def test_5_3_singapore_dealer_hand_of_the_wrong_size_is_refused(cards: str) -> None:
    with pytest.raises(InvalidHandError, match="rule 5.3") as caught:
        check_hands(table(GameId.singapore_stud), [], dealer(cards))
    assert caught.value.loc == ("dealer", "cards")


@pytest.mark.parametrize(
    ("game_id", "cards"),
    [
        (GameId.casino_stud, "2C 3C 4C 5C 7D 8D"),
        (GameId.three_card_poker, "2C 3C 4C 5C"),
        (GameId.western_stud, "2C 3C 4C 5C 7D 8D 9D 10D JD QD KD"),
    ],
)
def test_5_8_7_dealer_hand_with_too_many_cards_is_refused(game_id: GameId, cards: str) -> None:
    with pytest.raises(InvalidHandError) as caught:
        check_hands(table(game_id), [], dealer(cards))
    assert caught.value.loc == ("dealer", "cards")


def test_dealer_cards_are_optional_outside_singapore_and_western_has_two_hands() -> None:
    check_hands(table(GameId.casino_stud), [hand(1, "AS KS QS JS 10S")], None)
    check_hands(table(GameId.casino_stud), [], dealer("KD"))
    check_hands(table(GameId.western_stud), [], dealer("2C 3C 4C 5C 7D 8D 9D 10D JD QD"))


def test_a_hand_for_a_box_that_is_not_at_the_table_is_refused() -> None:
    with pytest.raises(InvalidHandError) as caught:
        check_hands(table(GameId.casino_stud, boxes=5), [hand(6, "AS KS QS JS 10S")], None)
    assert caught.value.loc == ("boxes", 0, "box")


def test_5_8_6_two_hands_for_one_box_are_refused() -> None:
    with pytest.raises(InvalidHandError, match="box 2 appears twice") as caught:
        check_hands(
            table(GameId.casino_stud), [hand(2, "AS KS QS JS 10S"), hand(2, "2H 3H 4H 5C 9C")], None
        )
    assert caught.value.loc == ("boxes", 1, "box")


def test_5_8_1_a_foreign_object_among_the_cards_is_refused() -> None:
    bad = BoxHand(1, ("AS", "KS", "QS", "JS", "TS"), False, 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidHandError, match="5.8.1") as caught:
        check_hands(table(GameId.casino_stud), [bad], None)
    assert caught.value.loc == ("boxes", 0, "cards", 0)
