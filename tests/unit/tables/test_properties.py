"""Invariants over random hands and rounds (hypothesis)."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from jackpot.money import parse_money
from tables.bets import BoxBet, Draws, TableSettings, check_bets
from tables.cards import DECK, Card, parse_cards
from tables.errors import InvalidHandError
from tables.evaluate import (
    FIVE_CARD_RANKING,
    THREE_CARD_RANKING,
    HandValue,
    evaluate,
    evaluate_three,
)
from tables.games import GameId, game
from tables.hands import BoxHand, DealerHand, check_hands, hand_size
from tables.settle import ShareClaim, settle

five_cards = st.lists(st.sampled_from(DECK), min_size=5, max_size=5, unique=True)
three_cards = st.lists(st.sampled_from(DECK), min_size=3, max_size=3, unique=True)


@given(five_cards, st.data())
def test_evaluation_ignores_card_order(cards: list[Card], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(cards))
    assert evaluate(shuffled) == evaluate(cards)
    assert evaluate(shuffled) is evaluate(cards)  # the same precomputed value


@given(three_cards, st.data())
def test_three_card_evaluation_ignores_card_order(cards: list[Card], data: st.DataObject) -> None:
    assert evaluate_three(data.draw(st.permutations(cards))) == evaluate_three(cards)


def check_total_order(
    a: HandValue, b: HandValue, c: HandValue, ranking: tuple[object, ...]
) -> None:
    # Exactly one of <, ==, >, and the two directions agree.
    assert [a < b, a == b, a > b].count(True) == 1
    assert (a < b) == (b > a) and (a <= b) == (b >= a)
    # Transitive.
    if a <= b and b <= c:
        assert a <= c
    # Consistent with the categories: a higher category always wins (3.1.2).
    if ranking.index(a.category) != ranking.index(b.category):
        assert (a < b) == (ranking.index(a.category) < ranking.index(b.category))
    # Equal values are equal in category and every tie-break rank (3.1.3, 3.16).
    assert (a == b) == ((a.category, a.ranks) == (b.category, b.ranks))


@given(five_cards, five_cards, five_cards)
def test_five_card_comparison_is_a_total_order_consistent_with_categories(
    a: list[Card], b: list[Card], c: list[Card]
) -> None:
    check_total_order(evaluate(a), evaluate(b), evaluate(c), FIVE_CARD_RANKING)


@given(three_cards, three_cards, three_cards)
def test_three_card_comparison_is_a_total_order_consistent_with_categories(
    a: list[Card], b: list[Card], c: list[Card]
) -> None:
    check_total_order(evaluate_three(a), evaluate_three(b), evaluate_three(c), THREE_CARD_RANKING)


@dataclass(frozen=True)
class Round:
    settings: TableSettings
    bets: list[BoxBet]
    hands: list[BoxHand]
    dealer: DealerHand | None
    draws: Draws | None


JACKPOTS = {
    GameId.casino_stud: ["0", "1.00"],
    GameId.multi_link_casino_stud: ["0", "1.00"],
    GameId.three_card_poker: ["0", "1.00"],
    GameId.singapore_stud: ["0", "1.00", "2.00", "5.00"],
    GameId.western_stud: ["0", "0.25", "1.00", "10.00"],
}


MADE_HANDS = {
    5: [
        parse_cards(text)
        for text in ["AS KS QS JS TS", "9H 8H 7H 6H 5H", "QC QD QH QS 2C", "JC JD JH 3S 3C",
                     "KD 9D 7D 4D 2D", "8C 7D 6S 5H 4C", "AH 2D 3C 4S 6D", "AD 2D 3D 4D 5D"]
    ],
    3: [parse_cards(text) for text in ["AS KS QS", "AH KH QH", "AC KC QC", "5D 6D 7D", "9C 9D 9H",
                                       "TC JD QS", "KC JC 9C"]],
}  # fmt: skip


@st.composite
def rounds(draw: st.DrawFn) -> Round:
    """A valid round: bets the table accepts or returns, hands dealt from one shuffled deck."""
    game_id = draw(st.sampled_from(GameId))
    singapore = game_id is GameId.singapore_stud
    boxes = draw(st.integers(1, 7))
    keeps = draw(st.booleans()) if singapore else None
    table = TableSettings(game(game_id), parse_money("1.00"), boxes, keeps)
    money = st.sampled_from(JACKPOTS[game_id]).map(parse_money)
    bets = [
        BoxBet(
            box,
            draw(st.sampled_from(["0", "10.00", "25.00"]).map(parse_money)),
            draw(money),
            draw(money) if singapore else parse_money("0"),
            draw(st.sampled_from([None, "p1", "p2"])),
        )
        for box in draw(st.lists(st.integers(1, boxes), unique=True))
    ]
    deck = list(draw(st.permutations(DECK)))

    def deal(size: int) -> tuple[Card, ...]:
        # Often a paying hand (when its cards are still in the deck), else the deck's top.
        made = draw(st.sampled_from(MADE_HANDS[3 if size == 3 else 5] + [()]))[:size]
        if len(made) == size and all(card in deck for card in made):
            for card in made:
                deck.remove(card)
            return made
        return tuple(deck.pop() for _ in range(size))

    hands = []
    for box in draw(st.lists(st.integers(1, boxes), unique=True)):
        folded = draw(st.booleans())
        hands.append(BoxHand(box, deal(hand_size(table, folded)), folded, 1_000 + box))
    dealer = None
    if singapore or draw(st.booleans()):
        # 3 cards at 3 Card Poker, 5, or two hands of five at Western Stud.
        size = table.game.dealer_cards
        cards = deal(3) if size == 3 else sum((deal(5) for _ in range(size // 5)), ())
        dealer = DealerHand(cards, 2_000)
    draws = None
    if singapore:
        draws = Draws(draw(st.sampled_from(DECK)), draw(st.integers(1, boxes)), draw(st.booleans()))
    return Round(table, bets, hands, dealer, draws)


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_settle_never_pays_a_box_without_an_accepted_wager(r: Round) -> None:
    decisions = check_bets(r.settings, r.bets)
    dealt = {hand.box for hand in r.hands}
    # Every accepted wager's box must have a hand: keep only those decisions (the others
    # are refused by settle, tested elsewhere).
    decisions = [d for d in decisions if d.status != "accepted" or d.box in dealt]
    claims = settle(r.settings, decisions, r.hands, r.dealer, r.draws)
    accepted = {d.box: d for d in decisions if d.status == "accepted"}
    folded = {hand.box for hand in r.hands if hand.folded}
    for claim in claims:
        assert claim.box in accepted
        bet = accepted[claim.box]
        wager = bet.dealer_wager if claim.target == "dealer" else bet.wager
        assert wager > 0
        if isinstance(claim, ShareClaim):
            assert r.settings.game.uses_meter and claim.share > 0
        else:
            assert claim.amount > 0
            assert claim.for_box != claim.box
        # A fold forfeits the player's-hand claims unless the game or table keeps them.
        if claim.box in folded and claim.target == "player":
            assert r.settings.fold_keeps
    assert claims == sorted(claims, key=lambda c: c.box)


@settings(max_examples=300, deadline=None)
@given(rounds(), st.data())
def test_deck_checks_reject_any_duplicated_card(r: Round, data: st.DataObject) -> None:
    check_hands(r.settings, r.hands, r.dealer)  # a round from one deck passes
    holders: list[list[Card]] = [list(hand.cards) for hand in r.hands]
    if r.dealer is not None:
        holders.append(list(r.dealer.cards))
    slots = [(h, j) for h, cards in enumerate(holders) for j in range(len(cards))]
    if len(slots) < 2:
        return
    source, target = data.draw(
        st.lists(st.sampled_from(slots), min_size=2, max_size=2, unique=True)
    )
    card = holders[source[0]][source[1]]
    holders[target[0]][target[1]] = card
    hands = [
        BoxHand(hand.box, tuple(cards), hand.folded, hand.dealt_at)
        for hand, cards in zip(r.hands, holders, strict=False)
    ]
    dealer = None if r.dealer is None else DealerHand(tuple(holders[-1]), r.dealer.dealt_at)
    try:
        check_hands(r.settings, hands, dealer)
    except InvalidHandError as error:
        assert error.message.startswith(f"duplicate card {card} (also in ")
    else:
        raise AssertionError(f"duplicate {card} was not refused")
