"""The single entry point for one round: bets closed, draws, hands checked, claims settled."""

from tables.bets import (
    BetDecision,
    BetStatus,
    BoxBet,
    Draws,
    RandomSource,
    TableSettings,
    check_bets,
    draw,
)
from tables.hands import BoxHand, DealerHand, check_hands, hand_size
from tables.settle import Claim, FixedClaim, MeterClaim, settle

__all__ = [
    "BetDecision",
    "BetStatus",
    "BoxBet",
    "BoxHand",
    "Claim",
    "DealerHand",
    "Draws",
    "FixedClaim",
    "MeterClaim",
    "RandomSource",
    "TableSettings",
    "check_bets",
    "check_hands",
    "draw",
    "hand_size",
    "settle",
]
