"""Bets closed: the table's settings, each box's bets, which jackpot wagers are accepted, draws."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from jackpot.money import CENT, ZERO, Money, format_money, is_whole_cents
from tables.cards import DECK, Card
from tables.errors import InvalidBetError, TablesError
from tables.games import Game, GameId

BetStatus = Literal["accepted", "returned", "none"]


@dataclass(frozen=True, slots=True)
class TableSettings:
    """One table: its game, prescribed jackpot wager (3.3) and number of boxes.

    `fold_keeps_jackpot` is a setting only at singapore_stud, whose rules are silent
    (default False: a fold forfeits the player-hand jackpot wager). Other games fix it
    by rule; a contradicting value is refused. `lucky_dealer_odds` N: singapore_stud's
    Lucky Dealer is drawn with probability 1 in N (the rules are silent, 4.4.1).
    """

    game: Game
    prescribed_wager: Money
    boxes: int
    fold_keeps_jackpot: bool | None = None
    lucky_dealer_odds: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.boxes <= 52:
            raise TablesError(f"a table has 1 to 52 boxes, not {self.boxes}", ("boxes",))
        # western_stud has no prescribed amount: the River bet is anything up to the ante.
        if not self.game.river and (
            self.prescribed_wager <= 0 or not is_whole_cents(self.prescribed_wager)
        ):
            raise TablesError("the prescribed jackpot wager is whole cents above 0 (3.3)",
                              ("jackpot_wager",))  # fmt: skip
        rule = self.game.fold_keeps_jackpot
        if rule is not None and self.fold_keeps_jackpot not in (None, rule):
            raise TablesError(
                f"at {self.game.id} a fold {'keeps' if rule else 'forfeits'} the jackpot wager"
                f" by rule {self.game.rules.fold}: it is not a table setting",
                ("fold_keeps_jackpot",),
            )
        if self.lucky_dealer_odds < 1:
            raise TablesError("lucky_dealer_odds is N in '1 in N', at least 1",
                              ("lucky_dealer_odds",))  # fmt: skip

    @property
    def fold_keeps(self) -> bool:
        """Whether a folded box's (player-hand) jackpot wager stays eligible."""
        if self.game.fold_keeps_jackpot is not None:
            return self.game.fold_keeps_jackpot
        return bool(self.fold_keeps_jackpot)


@dataclass(frozen=True, slots=True)
class BoxBet:
    """A box's bets as closed. `jackpot` is the River bet at western_stud; `jackpot_dealer`
    is the dealer-hand jackpot wager (singapore_stud 3.5 only). `player` groups the boxes
    of one player (3 Card Poker 3.7, 4.7)."""

    box: int
    ante: Money
    jackpot: Money
    jackpot_dealer: Money = ZERO
    player: str | None = None


@dataclass(frozen=True, slots=True)
class BetDecision:
    """What became of a box's jackpot wager. `wager` / `dealer_wager` are the accepted
    amounts (0 unless accepted: a returned wager never contributes). `ante` and `player`
    carry what settle needs for the envy bonus (3 Card Poker 4.7, 4.8)."""

    box: int
    status: BetStatus
    wager: Money
    dealer_wager: Money
    reason: str | None
    ante: Money = ZERO
    player: str | None = None

    @property
    def has_ante(self) -> bool:
        # An accepted jackpot wager always had an ante (3.8, 5.4).
        return self.status == "accepted" or self.ante > 0


class PostedBet(Protocol):
    """A box's bets as a table posts them: a BoxBet, or any record with its fields."""

    @property
    def box(self) -> int: ...
    @property
    def ante(self) -> Money: ...
    @property
    def jackpot(self) -> Money: ...
    @property
    def jackpot_dealer(self) -> Money: ...
    @property
    def player(self) -> str | None: ...


D = TypeVar("D")
# Makes a decision from BetDecision's fields, in its order: BetDecision, or a record the
# caller keeps (the journal's), made once instead of converted from a BetDecision.
MakeDecision = Callable[[int, BetStatus, Money, Money, str | None, Money, str | None], D]


def _amount(value: int, loc: tuple[str | int, ...], what: str) -> None:
    if not isinstance(value, int) or value < 0 or not is_whole_cents(value):
        raise InvalidBetError(f"{what} must be whole cents, 0 or more", loc)


def _check_amounts(settings: TableSettings, bet: PostedBet, i: int) -> None:
    """The jackpot amounts a table can take (3.4: the prescribed amount displayed)."""
    game, prescribed = settings.game, settings.prescribed_wager
    if bet.jackpot_dealer and not game.dealer_wager:
        raise InvalidBetError(
            "a jackpot wager on the dealer's hand exists only at singapore_stud (3.5)",
            ("boxes", i, "jackpot_dealer"),
        )
    if game.dealer_wager:
        # Singapore 3.5: one or more credits on the player's hand, the dealer's, or both.
        for field, value in (("jackpot", bet.jackpot), ("jackpot_dealer", bet.jackpot_dealer)):
            if value % prescribed:
                raise InvalidBetError(
                    f"a jackpot wager here is a whole number of {format_money(prescribed)}"
                    f" credits, not {format_money(value)}: rule 3.5",
                    ("boxes", i, field),
                )
    elif not game.river and bet.jackpot not in (0, prescribed):
        raise InvalidBetError(
            f"the jackpot wager at this table is {format_money(prescribed)}, not"
            f" {format_money(bet.jackpot)}: rule 3.4",
            ("boxes", i, "jackpot"),
        )


def _decide(settings: TableSettings, bet: PostedBet, i: int, make: MakeDecision[D]) -> D:
    _check_amounts(settings, bet, i)
    ante, jackpot, dealer = bet.ante, bet.jackpot, bet.jackpot_dealer
    if jackpot == 0 and dealer == 0:
        return make(bet.box, "none", ZERO, ZERO, None, ante, bet.player)
    game = settings.game
    if ante == 0:
        # 3.8 / singapore 3.5: a jackpot wager needs an ante; 5.4: it is returned.
        reason = f"no ante (rule {game.rules.no_ante})"
        return make(bet.box, "returned", ZERO, ZERO, reason, ante, bet.player)
    if game.river and jackpot > ante:
        raise InvalidBetError(
            f"the River bet ({format_money(jackpot)}) shall not exceed the ante"
            f" ({format_money(ante)}): western stud",
            ("boxes", i, "jackpot"),
        )
    return make(bet.box, "accepted", jackpot, dealer, None, ante, bet.player)


def check_box(
    settings: TableSettings, box: object, i: int, seen: dict[int, int], error: type[TablesError]
) -> None:
    """The box at place `i` of a posted list is one of the table's and not posted twice
    (`seen`: the boxes before it, with their places)."""
    if not isinstance(box, int) or not 1 <= box <= settings.boxes:
        raise error(
            f"box {box} is not a box of this table (1 to {settings.boxes})", ("boxes", i, "box")
        )
    if box in seen:
        raise error(f"box {box} appears twice (also at position {seen[box]})", ("boxes", i, "box"))
    seen[box] = i


def check_bets(settings: TableSettings, bets: Sequence[PostedBet]) -> list[BetDecision]:
    """One decision per bet, in the order given. Raises InvalidBetError for a bet the
    table cannot take (unknown or repeated box, wrong jackpot amount)."""
    return decide_bets(settings, bets, BetDecision)


def decide_bets(
    settings: TableSettings, bets: Sequence[PostedBet], make: MakeDecision[D]
) -> list[D]:
    """`check_bets`, each decision made by `make` from BetDecision's fields."""
    seen: dict[int, int] = {}
    decisions: list[D] = []
    game, prescribed = settings.game, settings.prescribed_wager
    # A table taking only the prescribed player-hand wager (3.4): a box with an ante, that
    # amount and no dealer-hand wager is accepted at once, as `_decide` would accept it.
    plain = not (game.dealer_wager or game.river)
    for i, bet in enumerate(bets):
        check_box(settings, bet.box, i, seen, InvalidBetError)
        ante, jackpot, dealer = bet.ante, bet.jackpot, bet.jackpot_dealer
        # The common case in one test; anything else (a bool, a negative or sub-cent
        # amount) is named by `_amount`, field by field.
        if not (
            type(ante) is int and type(jackpot) is int and type(dealer) is int
            and ante >= 0 and jackpot >= 0 and dealer >= 0
            and not (ante % CENT or jackpot % CENT or dealer % CENT)
        ):  # fmt: skip
            _amount(ante, ("boxes", i, "ante"), "the ante")
            _amount(jackpot, ("boxes", i, "jackpot"), "a jackpot wager")
            _amount(dealer, ("boxes", i, "jackpot_dealer"), "a jackpot wager")
        elif plain and ante and jackpot == prescribed and not dealer:
            decisions.append(make(bet.box, "accepted", jackpot, ZERO, None, ante, bet.player))
            continue
        decisions.append(_decide(settings, bet, i, make))
    return decisions


@dataclass(frozen=True, slots=True)
class Draws:
    """Singapore Stud's system draws for a round (4.3-4.5)."""

    magic_card: Card
    lucky_box: int
    lucky_dealer: bool


class RandomSource(Protocol):
    """What draw needs of a random generator (random.SystemRandom() in the service)."""

    def randrange(self, start: int, stop: int = ..., /) -> int: ...


def draw(settings: TableSettings, rng: RandomSource) -> Draws | None:
    """Singapore Stud's draws when bets close; None at every other game.

    Magic Card: one of the 52 cards, uniformly (4.3). Lucky Player: one box 1..boxes,
    uniformly (4.4). Lucky Dealer: true with probability 1 in `lucky_dealer_odds` (4.4.1;
    the rules do not say how often, so it is a table setting, default 1 in 10).
    """
    if settings.game.id is not GameId.singapore_stud:
        return None
    magic_card = DECK[rng.randrange(len(DECK))]
    lucky_box = rng.randrange(1, settings.boxes + 1)
    lucky_dealer = rng.randrange(settings.lucky_dealer_odds) == 0
    return Draws(magic_card, lucky_box, lucky_dealer)
