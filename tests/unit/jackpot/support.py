"""Builders shared by the jackpot tests: a one-link floor and short command constructors."""

from __future__ import annotations

from jackpot.commands import BoxWager, CloseBets, Finalize, MeterClaim, RecordOutcome, VoidRound
from jackpot.config import LinkConfig, MeterConfig, Timing
from jackpot.floor import Floor
from jackpot.money import Money, Rate, parse_money, parse_rate

ROYAL = Rate(10_000)  # 100 % (4.2)
STRAIGHT_FLUSH = Rate(1_000)  # 10 % (4.2)
TIMING = Timing(hold_ms=2_000, round_timeout_ms=180_000, max_clock_skew_ms=2_000)


def m(text: str) -> Money:
    return parse_money(text)


def stud_link(
    seed: str = "10000.00", rate: str = "0.25", reserve: str = "0.05", ceiling: str | None = None
) -> LinkConfig:
    meter = MeterConfig(
        id="major",
        seed=m(seed),
        rate=parse_rate(rate),
        reserve_rate=parse_rate(reserve),
        ceiling=None if ceiling is None else m(ceiling),
    )
    return LinkConfig(id="stud", meters=(meter,))


def floor(**kwargs: str | None) -> Floor:
    return Floor([stud_link(**kwargs)], TIMING)  # type: ignore[arg-type]


def bets(table: str, rnd: str, closed_at: int, now: int, *boxes: tuple[int, str]) -> CloseBets:
    wagers = tuple(BoxWager(box, m(w)) for box, w in boxes)
    return CloseBets(table, rnd, "stud", closed_at, now, wagers)


def outcome(table: str, rnd: str, now: int, *claims: tuple[int, Rate, int]) -> RecordOutcome:
    """claims: (box, share, dealt_at)."""
    hand = {ROYAL: "royal_flush", STRAIGHT_FLUSH: "straight_flush"}
    return RecordOutcome(
        table,
        rnd,
        now,
        tuple(
            MeterClaim(box, "player", hand.get(share, "x"), share, dealt)
            for box, share, dealt in claims
        ),
    )


def void(table: str, rnd: str, now: int, boxes: tuple[int, ...] | None = None) -> VoidRound:
    return VoidRound(table, rnd, now, "test", boxes)


def finalize(now: int) -> Finalize:
    return Finalize(now)
