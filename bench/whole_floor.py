"""The pure parts of bench_whole_floor.py: the floor it plays, the requests of a round,
percentiles, and the matching of screens' meter values to acknowledged bets.

No I/O, no clock: times are parameters (microseconds of the wall clock, the same on
every process of the machine), so that tests feed them by hand.
"""

from __future__ import annotations

import hashlib
import random
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from app.cli.simulated_rounds import (
    DEAL_GAP_MS,
    RoundPlan,
    TableSpec,
    bets_body,
    outcome_body,
    plan_round,
)
from tables.games import GameId

# The demo floor's five games in turn, so that every game's rules are exercised.
GAMES = (
    GameId.casino_stud,
    GameId.multi_link_casino_stud,
    GameId.three_card_poker,
    GameId.singapore_stud,
    GameId.western_stud,
)
METER = "major"  # each link's one meter, the value a screen is timed on
VOID_REASON = "bench: misdeal, round void (5.8)"


def table_id(i: int, tables: int) -> str:
    return f"T{i + 1:0{max(3, len(str(tables)))}d}"


def table_token(table: str) -> str:
    """The simulator's token convention (app/cli/simulated_rounds.read_tables)."""
    return f"demo-table-{table}"


def link_of(game_id: GameId, group: int) -> str | None:
    """Western stud has no link (its River bet pays fixed odds); 3 Card Poker has its own
    links, the stud games share theirs, `group` tables of a kind to a link."""
    if game_id is GameId.western_stud:
        return None
    family = "tcp" if game_id is GameId.three_card_poker else "stud"
    return f"{family}{group + 1:02d}"


def floor_links(tables: int, tables_per_link: int) -> dict[str, str | None]:
    """Every table id of the floor with its link (None: no link)."""
    return {
        table_id(i, tables): link_of(GAMES[i % len(GAMES)], i // tables_per_link)
        for i in range(tables)
    }


def floor_text(tables: int, tables_per_link: int = 10) -> str:
    """A floor file of `tables` tables, `tables_per_link` of them (all games) to a link.

    Each link has one meter whose rate (0.10) makes every accepted jackpot wager (at least
    1.00) raise it by at least a cent, the unit screens show: a bets event that takes a
    wager always shows as a new value.
    """
    links = floor_links(tables, tables_per_link)
    lines = [
        'currency = "SGD"',
        "hold_ms = 2000",
        "round_timeout_ms = 180000",
        "max_clock_skew_ms = 2000",
        "dual_control = false",
    ]
    for link_id in sorted({link for link in links.values() if link is not None}):
        lines += [
            "",
            "[[links]]",
            f'id = "{link_id}"',
            f'name = "Bench {link_id}"',
            "  [[links.meters]]",
            f'  id = "{METER}"',
            '  name = "Major"',
            '  seed = "10000.00"',
            '  rate = "0.10"',
            '  reserve_rate = "0.02"',
        ]
    for i, (table, link) in enumerate(links.items()):
        game_id = GAMES[i % len(GAMES)]
        digest = hashlib.sha256(table_token(table).encode()).hexdigest()
        lines += ["", "[[tables]]", f'id = "{table}"', f'game = "{game_id}"', "boxes = 7"]
        if link is not None:
            lines += [f'link = "{link}"', 'jackpot_wager = "1.00"']
        if game_id is GameId.singapore_stud:
            lines.append("fold_keeps_jackpot = false")
        lines.append(f'token_sha256 = "{digest}"')
    return "\n".join(lines) + "\n"


# -- a round's requests -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Request:
    kind: str  # bets, outcome, void
    path: str
    body: dict[str, Any]


def bets_request(spec: TableSpec, round_id: str, plan: RoundPlan, closed_at: int) -> Request:
    """A planned round's bets as docs/api.md has them, bets closed at `closed_at` (ms)."""
    path = f"/v1/tables/{spec.id}/rounds/{round_id}/bets"
    return Request("bets", path, bets_body(plan, closed_at))


def settle_request(spec: TableSpec, round_id: str, plan: RoundPlan, dealt_at: int) -> Request:
    """Its outcome, the first box's hand complete at `dealt_at` (ms), or its void."""
    path = f"/v1/tables/{spec.id}/rounds/{round_id}"
    if plan.void:
        return Request("void", f"{path}/void", {"reason": VOID_REASON})
    return Request("outcome", f"{path}/outcome", outcome_body(plan, dealt_at))


def dealt_at_for(plan: RoundPlan, closed_at: int, now: int) -> int:
    """The first hand's time: the deal's gaps before `now` (never ahead of the table's
    clock), and not before bets closed."""
    return max(closed_at, now - DEAL_GAP_MS * (len(plan.hands) + 1))


def next_round(spec: TableSpec, rng: random.Random, void_odds: int) -> RoundPlan:
    """A round as `jackpot simulate` deals it: real cards from one shuffled deck."""
    return plan_round(spec, rng, 1.0, void_odds)


def cents(value: str) -> int:
    """A money string of an answer or a screen message ("10234.50") in cents."""
    return int(Decimal(value) * 100)


def meter_value(meters: Sequence[dict[str, Any]], link: str) -> int | None:
    """METER's value on `link` in an answer's or a message's `meters`, in cents."""
    for m in meters:
        if m.get("meter") == METER and m.get("link", link) == link:
            return cents(str(m["value"]))
    return None


# -- statistics ---------------------------------------------------------------------------


def timed_screens(count: int, timed: int) -> set[int]:
    """Which of a link's `count` screens (in connection order) are timed: `timed` of them
    spread from the first to the last, so that the end of the fan-out is among them."""
    if count <= 0 or timed <= 0:
        return set()
    if timed >= count:
        return set(range(count))
    if timed == 1:
        return {0}
    return {k * (count - 1) // (timed - 1) for k in range(timed)}


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile (p in 0..100) of `values`; None if there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil(n p / 100), at least the first
    return float(ordered[int(rank) - 1])


# -- event-to-screen ------------------------------------------------------------------------


@dataclass
class Matched:
    """Event-to-screen delays (µs) at one screen, and the acknowledgements left out."""

    delays_us: list[int] = field(default_factory=list)
    untimed: int = 0  # near a lowering of the meter: which message carried it is unknown
    unseen: int = 0  # no message of the screen carried it by the end


def match_screen(
    acks: Sequence[tuple[int, int]],
    lowerings: Sequence[int],
    messages: Sequence[tuple[int, int]],
    blackout_us: int,
) -> Matched:
    """Event-to-screen delays at one screen of one link (bench_whole_floor.py's docstring).

    `acks`: (time the bets acknowledgement arrived, the meter's value it answered), for
    bets that raised the meter; `lowerings`: times the acknowledgement of an event that
    lowered the meter arrived (a void taking contributions back); `messages`: (arrival
    time, value) of the screen's `snapshot` and `meters` messages. Times in µs.

    Between lowerings the meter only rises, so the first message showing at least an
    acknowledged value is the first that carries that bets event. Its delay is that
    message's arrival less the acknowledgement's (negative when the screen heard first).
    A lowering makes that rule unsafe for the events not yet shown and for those
    acknowledged within `blackout_us` after it (the same commit's answers): they are left
    out. A lowering is an acknowledged void, or a message lower than the one before that
    no acknowledged void explains (an award reset the meter). Messages before a lowering
    never time the events after it.
    """
    stream: list[tuple[int, int, int]] = []  # (time, order at equal times, value)
    stream += [(t, 0, v) for t, v in messages]
    stream += [(t, 1, -1) for t in lowerings]
    stream += [(t, 2, v) for t, v in acks]
    stream.sort()
    result = Matched()
    pending: list[tuple[int, int]] = []  # (value, ack time)
    shown_at: list[int] = []  # since the last lowering: arrival times and running maxima
    shown_max: list[int] = []
    last: int | None = None
    blackout_until = -1
    explained = False  # a void acknowledged that no message has shown lower yet

    def lowered(at: int) -> None:
        nonlocal blackout_until
        result.untimed += len(pending)
        pending.clear()
        shown_at.clear()
        shown_max.clear()
        blackout_until = max(blackout_until, at + blackout_us)

    for at, order, value in stream:
        if order == 1:
            lowered(at)
            explained = True
        elif order == 2:
            if at < blackout_until:
                result.untimed += 1
            elif shown_max and shown_max[-1] >= value:
                first = bisect_left(shown_max, value)
                result.delays_us.append(shown_at[first] - at)
            else:
                pending.append((value, at))
        else:
            if last is not None and value < last:
                if explained:  # that void shown: what is pending came after it
                    shown_at.clear()
                    shown_max.clear()
                else:  # an award's reset, which no answer announced
                    lowered(at)
                explained = False
            last = value
            shown_at.append(at)
            shown_max.append(max(value, shown_max[-1]) if shown_max else value)
            if pending:
                result.delays_us += [at - t for v, t in pending if v <= value]
                pending[:] = [(v, t) for v, t in pending if v > value]
    result.unseen = len(pending)
    return result
