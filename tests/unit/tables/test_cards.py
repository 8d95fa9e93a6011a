"""Cards and notation (docs/api.md "Cards"; rule 5.8.1: a card not part of the set)."""

from __future__ import annotations

import pytest

from tables.cards import DECK, Card, Suit, parse_card, parse_cards, parse_hand
from tables.errors import InvalidCardError, TablesError


def test_2_2_1_one_deck_of_52_distinct_cards() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert {card.suit for card in DECK} == set(Suit)
    assert {card.rank for card in DECK} == set(range(2, 15))


@pytest.mark.parametrize(
    ("text", "rank", "suit", "shown"),
    [
        ("AS", 14, Suit.S, "AS"),
        ("as", 14, Suit.S, "AS"),
        ("TD", 10, Suit.D, "TD"),
        ("10D", 10, Suit.D, "TD"),
        ("10d", 10, Suit.D, "TD"),
        ("2c", 2, Suit.C, "2C"),
        ("Kh", 13, Suit.H, "KH"),
        ("qS", 12, Suit.S, "QS"),
        ("jc", 11, Suit.C, "JC"),
        ("9H", 9, Suit.H, "9H"),
    ],
)
def test_parse_card_is_case_insensitive_and_prints_upper_case(
    text: str, rank: int, suit: Suit, shown: str
) -> None:
    card = parse_card(text)
    assert card == Card(rank, suit)
    assert str(card) == shown


def test_every_card_of_the_deck_round_trips() -> None:
    assert [parse_card(str(card)) for card in DECK] == list(DECK)


@pytest.mark.parametrize(
    "text", ["1S", "11S", "AX", "A", "S", "", "ASS", "ZZ", "0D", "1 0D", "AS "]
)
def test_5_8_1_a_card_not_part_of_the_set_is_refused_naming_the_text(text: str) -> None:
    # "AS " is accepted (surrounding space is stripped), the rest are not cards.
    if text == "AS ":
        assert parse_card(text) == Card(14, Suit.S)
        return
    with pytest.raises(InvalidCardError) as caught:
        parse_card(text, ("boxes", 2, "cards", 3))
    assert repr(text) in caught.value.message
    assert "5.8.1" in caught.value.message
    assert caught.value.loc == ("boxes", 2, "cards", 3)
    assert isinstance(caught.value, TablesError)


@pytest.mark.parametrize(("rank", "suit"), [(1, Suit.S), (15, Suit.S), (0, Suit.H)])
def test_5_8_1_a_card_outside_the_deck_cannot_be_built(rank: int, suit: Suit) -> None:
    with pytest.raises(InvalidCardError):
        Card(rank, suit)


def test_a_card_with_a_suit_that_is_not_a_suit_cannot_be_built() -> None:
    with pytest.raises(InvalidCardError):
        Card(14, "X")  # type: ignore[arg-type]


def test_parse_cards_reads_the_rules_notation_and_names_the_position() -> None:
    assert [str(card) for card in parse_cards("AS KS QS JS 10S")] == ["AS", "KS", "QS", "JS", "TS"]
    with pytest.raises(InvalidCardError) as caught:
        parse_cards("AS KS QX")
    assert caught.value.loc == (2,)


@pytest.mark.parametrize("bad", ["QX", 12, None, ["AS"]])
def test_parse_hand_reads_every_spelling_and_names_the_card_under_the_loc(bad: object) -> None:
    assert parse_hand(["AS", "td", "10D", " 9c"]) == parse_cards("AS TD 10D 9C")
    with pytest.raises(InvalidCardError) as caught:
        parse_hand(["AS", "KS", bad], ("boxes", 4, "cards"))  # type: ignore[list-item]
    assert caught.value.loc == ("boxes", 4, "cards", 2)
