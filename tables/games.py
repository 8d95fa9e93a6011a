"""The five games: their hand sizes, fold rules, extras and jackpot pay tables (data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from jackpot.money import MAX_ODDS, Money, MoneyError, Rate, parse_money, parse_rate
from tables.errors import TablesError

DOLLAR = 1_000_000  # micro-units per currency unit (jackpot.money.SCALE)


class GameId(StrEnum):
    casino_stud = "casino_stud"
    multi_link_casino_stud = "multi_link_casino_stud"
    three_card_poker = "three_card_poker"
    singapore_stud = "singapore_stud"
    western_stud = "western_stud"


@dataclass(frozen=True, slots=True)
class MeterShare:
    """A major award: this share of the meter's value (Rate(10000) is 100 %).

    `meter` names the link's level it pays (a tiered link: "major", "minor", "mini");
    None is the link's first meter, as the rules' own pay tables have it."""

    share: Rate
    meter: str | None = None


@dataclass(frozen=True, slots=True)
class FixedAmount:
    """A fixed amount whatever the wager (casino stud 4.2 "$500")."""

    amount: Money


@dataclass(frozen=True, slots=True)
class Odds:
    """ "N to 1": pays N x the wager as the win; the returned stake is not included."""

    multiple: int

    def of(self, wager: int) -> Money:
        return Money(self.multiple * wager)


Pay = MeterShare | FixedAmount | Odds


@dataclass(frozen=True, slots=True)
class PayRow:
    name: str
    pay: Pay


@dataclass(frozen=True, slots=True)
class RuleRefs:
    """Paragraphs of the game's own rules, cited in error messages (numbering differs)."""

    duplicate: str
    hand_size: str
    dealer_size: str
    no_ante: str
    fold: str


@dataclass(frozen=True, slots=True)
class Game:
    """One game variant. `fold_keeps_jackpot` None means the table decides (singapore_stud)."""

    id: GameId
    hand_size: int  # cards in a player's hand
    dealer_cards: int  # cards the dealer holds at most (western: two hands of five)
    pay_table: tuple[PayRow, ...]  # highest row first
    fold_keeps_jackpot: bool | None
    uses_meter: bool
    rules: RuleRefs
    dealer_wager: bool = False  # singapore 3.5: a jackpot wager on the dealer's hand
    draws: bool = False  # singapore 4.3-4.5: Magic Card, Lucky Player, Lucky Dealer
    envy: bool = False  # three card poker 4.7, 4.8
    river: bool = False  # western stud: `jackpot` is the River bet, up to the ante

    def pay(self, row: str) -> Pay | None:
        """The pay of a row of the pay table, or None when the hand pays nothing."""
        for pay_row in self.pay_table:
            if pay_row.name == row:
                return pay_row.pay
        return None


def _fixed(dollars: int) -> FixedAmount:
    return FixedAmount(Money(dollars * DOLLAR))


FULL = MeterShare(Rate(10_000))  # 100 % of the meter
TENTH = MeterShare(Rate(1_000))  # 10 % of the meter

_RWS = RuleRefs(duplicate="5.8.3", hand_size="5.15", dealer_size="5.8.7", no_ante="5.4",
                fold="3.12.1")  # fmt: skip

_GAMES: dict[GameId, Game] = {
    # casino-stud-poker-rws-v5 4.2; 3.12.1: a folded hand's jackpot bet is not eligible.
    GameId.casino_stud: Game(
        GameId.casino_stud, 5, 5,
        (PayRow("royal_flush", FULL), PayRow("straight_flush", TENTH),
         PayRow("four_of_a_kind", _fixed(500)), PayRow("full_house", _fixed(200)),
         PayRow("flush", _fixed(100))),
        fold_keeps_jackpot=False, uses_meter=True, rules=_RWS,
    ),
    # multi-link v2 4.2; 3.12.1 and 4.3: a folded hand's jackpot bet is still eligible.
    GameId.multi_link_casino_stud: Game(
        GameId.multi_link_casino_stud, 5, 5,
        (PayRow("royal_flush", FULL), PayRow("straight_flush", TENTH),
         PayRow("four_of_a_kind", _fixed(2_000)), PayRow("full_house", _fixed(200)),
         PayRow("flush", _fixed(100))),
        fold_keeps_jackpot=True, uses_meter=True, rules=_RWS,
    ),
    # three-card-poker-rws-v3 4.4 (progressive ranking 3.17, envy bonus 4.7); fold 3.12.1.
    GameId.three_card_poker: Game(
        GameId.three_card_poker, 3, 3,
        (PayRow("akq_spades", FULL), PayRow("akq", _fixed(1_250)),
         PayRow("straight_flush", _fixed(175)), PayRow("three_of_a_kind", _fixed(150)),
         PayRow("straight", _fixed(15)),
         PayRow("envy_akq_spades", _fixed(250)), PayRow("envy_akq", _fixed(50))),
        fold_keeps_jackpot=False, uses_meter=True, rules=_RWS, envy=True,
    ),
    # singapore-stud-poker-mbs-v4 4.2 and 4.5; fold is a table setting (rules silent).
    GameId.singapore_stud: Game(
        GameId.singapore_stud, 5, 5,
        (PayRow("royal_flush", FULL), PayRow("straight_flush", TENTH),
         PayRow("four_of_a_kind", Odds(500)), PayRow("full_house", Odds(100)),
         PayRow("flush", Odds(50)),
         PayRow("magic_card", Odds(5)), PayRow("lucky_player", Odds(5)),
         PayRow("lucky_dealer", Odds(5))),
        fold_keeps_jackpot=None, uses_meter=True,
        rules=RuleRefs(duplicate="5.5", hand_size="5.2", dealer_size="5.3", no_ante="3.5",
                       fold="3.9"),
        dealer_wager=True, draws=True,
    ),
    # western-stud: River bet pay schedule; a folded hand (four cards) loses the River bet.
    GameId.western_stud: Game(
        GameId.western_stud, 5, 10,
        (PayRow("royal_flush", Odds(25)), PayRow("straight_flush", Odds(15)),
         PayRow("four_of_a_kind", Odds(5)), PayRow("full_house", Odds(5)),
         PayRow("flush", Odds(2)), PayRow("straight", Odds(2)),
         PayRow("eight_or_better_low", Odds(1))),
        fold_keeps_jackpot=False, uses_meter=False,
        rules=RuleRefs(duplicate="western stud: a single deck",
                       hand_size="western stud: five cards, four when folded",
                       dealer_size="western stud: two dealer hands of five",
                       no_ante="western stud: each player must place an ante",
                       fold="western stud: a folded hand is collected"),
        river=True,
    ),
}  # fmt: skip


_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _is_meter_id(text: str) -> bool:
    """A meter id as the floor file spells one (app/config/floor_file.py)."""
    return 0 < len(text) <= 64 and text[0] in _ALNUM and set(text) <= _ALNUM | set("_.-")


# Rows that are not a hand (an envy bonus, singapore's draws) stay fixed or odds awards.
_NOT_HANDS = ("envy_akq_spades", "envy_akq", "magic_card", "lucky_player", "lucky_dealer")


def _level(game_id: GameId, row: str, text: str) -> MeterShare:
    """ "major:1.00": the hand pays this share of the link's meter `major`."""
    loc = ("pay_table", row)
    meter, _, share_text = text.partition(":")
    if game_id == GameId.western_stud:
        raise TablesError(f"{game_id} pays no meter: {row} cannot pay {meter!r}", loc)
    if row in _NOT_HANDS:
        raise TablesError(f"{game_id} {row} is not a hand: it cannot pay a meter", loc)
    if not meter:
        raise TablesError(f'{game_id} {row}: {text!r} names no meter, as in "major:1.00"', loc)
    if not _is_meter_id(meter):
        raise TablesError(f"{game_id} {row}: {meter!r} is not a meter id", loc)
    try:
        share = parse_rate(share_text)
    except MoneyError as error:
        if str(error).endswith("is more than 1"):
            error = MoneyError(
                f"a hand's share of meter {meter!r} is at most 1.00 (100 %), not {share_text}"
            )
        raise TablesError(f"{game_id} {row}: {error}", loc) from None
    if share <= 0:
        raise TablesError(f"{game_id} {row} must pay more than 0, not {text!r}", loc)
    return MeterShare(share, meter)


def _override(game_id: GameId, row: str, old: Pay, text: str) -> Pay:
    loc = ("pay_table", row)
    if ":" in text:
        return _level(game_id, row, text)
    try:
        if isinstance(old, MeterShare):
            share = parse_rate(text)
            new: Pay = MeterShare(share)
            positive = share > 0
        elif isinstance(old, FixedAmount):
            amount = parse_money(text)
            new = FixedAmount(amount)
            positive = amount > 0
        else:
            amount = parse_money(text)
            if amount % DOLLAR:
                raise TablesError(f'{game_id} {row} pays "N to 1": {text!r} is not whole', loc)
            if amount // DOLLAR > MAX_ODDS:  # keeps every award exact (jackpot.money)
                raise TablesError(f'{game_id} {row} pays "N to 1": N is at most {MAX_ODDS}', loc)
            new = Odds(amount // DOLLAR)
            positive = amount > 0
    except MoneyError as error:
        raise TablesError(f"{game_id} {row}: {error}", loc) from None
    if not positive:
        raise TablesError(f"{game_id} {row} must pay more than 0, not {text!r}", loc)
    return new


def game(game_id: GameId | str, overrides: Mapping[str, str] | None = None) -> Game:
    """The game with the rules' pay table, some rows replaced by a table's configuration.

    `overrides` maps a row name ("four_of_a_kind", "envy_akq_spades") to a decimal string:
    an amount ("2000.00"), an odds multiple ("500" for 500 to 1) or a meter share ("0.10"),
    or a hand's level and share ("minor:1.00": that meter of the table's link).
    """
    try:
        base = _GAMES[GameId(game_id)]
    except ValueError:
        known = ", ".join(GameId)
        raise TablesError(f"unknown game {game_id!r}: one of {known}", ("game",)) from None
    if not overrides:
        return base
    names = [row.name for row in base.pay_table]
    for row in overrides:
        if row not in names:
            raise TablesError(
                f"{base.id} has no pay-table row {row!r}: its rows are {', '.join(names)}",
                ("pay_table", row),
            )
    rows = tuple(
        PayRow(row.name, _override(base.id, row.name, row.pay, overrides[row.name]))
        if row.name in overrides
        else row
        for row in base.pay_table
    )
    return replace(base, pay_table=rows)
