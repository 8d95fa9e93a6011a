"""Open rounds in arrival order: which have been open too long, how many a table holds.

A round with bets and never an outcome or void (a table controller that lost it) would
stay in memory, in every snapshot and every replay, and hold its link's open set
forever. The writer's timer expires a round open longer than `expire_after_ms` (a
multiple of round_timeout) with an `expire` entry; a table holds at most a configured
number of open rounds. This index is derived from the floor's rounds, never stored: it
is rebuilt from them after a load.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jackpot.commands import Expire
from jackpot.config import Timing
from jackpot.errors import StateConflictError
from jackpot.money import Money
from jackpot.records import EXPIRED, OPEN, Expiry, RoundRecord
from jackpot.results import ExpireResult

if TYPE_CHECKING:  # the floor's handler table calls these
    from jackpot.floor_shape import FloorShape

Rounds = Mapping[tuple[str, str], RoundRecord]


class OpenRounds:
    """The rounds that were open when their bets were applied, oldest first, and per table.

    Lazy: a round that left the open state (outcome, void, expiry) is dropped when it is
    met, so that keeping the index costs nothing on the hot path. Bounded all the same:
    `arrivals` is popped up to the oldest open round by `oldest` (the writer's timer asks
    it every turn), a table's set is purged whenever a bets request finds it at the limit.
    Not built at all where nothing asks (a replay, `jackpot verify`)."""

    __slots__ = ("arrivals", "by_table")

    def __init__(self, rounds: Rounds) -> None:
        opened = sorted((r.received_at, t, i) for (t, i), r in rounds.items() if r.state == OPEN)
        self.arrivals: deque[tuple[int, str, str]] = deque(opened)
        self.by_table: dict[str, set[str]] = {}
        for _, table, round_id in opened:
            self.by_table.setdefault(table, set()).add(round_id)

    def add(self, rnd: RoundRecord) -> None:
        # received_at is the floor's time, which never goes back: arrivals stay sorted.
        self.arrivals.append((rnd.received_at, rnd.table, rnd.round))
        self.by_table.setdefault(rnd.table, set()).add(rnd.round)

    def oldest(self, rounds: Rounds) -> int | None:
        """received_at of the oldest round still open."""
        arrivals = self.arrivals
        while arrivals:
            _, table, round_id = arrivals[0]
            rnd = rounds.get((table, round_id))
            if rnd is not None and rnd.state == OPEN:
                return rnd.received_at
            arrivals.popleft()
        return None

    def older_than(self, rounds: Rounds, before: int, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` open rounds received before `before`, oldest first."""
        self.oldest(rounds)
        found: list[tuple[str, str]] = []
        for at, table, round_id in self.arrivals:
            if at >= before or len(found) >= limit:
                break
            rnd = rounds.get((table, round_id))
            if rnd is not None and rnd.state == OPEN:
                found.append((table, round_id))
        return found

    def count(self, rounds: Rounds, table: str, at_least: int = 0) -> int:
        """The table's open rounds; exact when the rough count reaches `at_least` (a bets
        request checks its limit in O(1) until the table nears it)."""
        ids = self.by_table.get(table)
        if not ids:
            return 0
        if len(ids) >= at_least:
            ids.difference_update(
                [i for i in ids if (r := rounds.get((table, i))) is None or r.state != OPEN]
            )
        return len(ids)


def expired_error(rnd: RoundRecord, timing: Timing) -> StateConflictError:
    return StateConflictError(
        f"round {rnd.round!r} expired: it was open longer than expire_after "
        f"({timing.expire_after_ms} ms) with no outcome, so it no longer holds the "
        "link's awards back and its outcome cannot be recorded; void it (rule 5.17)"
    )


def expire(floor: FloorShape, cmd: Expire) -> ExpireResult:
    """The rounds leave the open set: they hold no award back, a later outcome is
    refused, and they are pruned after retain_ms like a settled round. Their
    contributions stay on the meters (they were on display, 4.5.1); a void still
    reverses them, at the current position."""
    records: list[RoundRecord] = []
    seen: set[tuple[str, str]] = set()
    for i, (table, round_id) in enumerate(cmd.rounds):
        rnd = floor.round(table, round_id)
        if rnd.state != OPEN or (table, round_id) in seen:
            raise StateConflictError(
                f"round {round_id!r} at table {table!r} is {rnd.state}, not open",
                ("rounds", i),
            )
        records.append(rnd)
        seen.add((table, round_id))
    for rnd in records:
        rnd.state = EXPIRED
        if rnd.link is not None:
            floor.links[rnd.link].open_rounds.pop((rnd.table, rnd.round), None)
        floor.done.append((floor.now, rnd.table, rnd.round))
        floor.expired[rnd.table] = floor.expired.get(rnd.table, 0) + 1
        boxes = [b for b in rnd.boxes.values() if not b.voided]
        floor.recent_expired.append(
            Expiry(
                rnd.table,
                rnd.round,
                rnd.link,
                rnd.closed_at,
                floor.now,
                Money(sum(b.contribution for b in boxes)),
                Money(sum(b.reserve for b in boxes)),
            )
        )
    return ExpireResult(tuple(records))
