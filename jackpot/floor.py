"""The floor: every link's meters and timeline, every round, award and reset, and `apply`.

The single writer owns one Floor and calls `apply` in journal order; replaying the same
commands gives the same state (see `jackpot.snapshot`). `apply` finds the command's handler
in `COMMAND_HANDLERS`; each handler is a function of the floor and the command, in its own
module: `contributions` (bets), `outcomes`, `voids`, `watermark`, `expiry`,
`operator_changes`. They import `Floor` for their signatures only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from jackpot import (
    contributions,
    expiry,
    mystery_levels,
    operator_changes,
    outcomes,
    transfers,
    voids,
    watermark,
)
from jackpot.commands import (
    ArmTrigger,
    CloseBets,
    Command,
    Correct,
    Expire,
    Finalize,
    RecordOutcome,
    ResetMeter,
    SetSeed,
    TransferMoney,
    VoidRound,
)
from jackpot.config import LinkConfig, Timing
from jackpot.errors import UnknownError
from jackpot.expiry import OpenRounds
from jackpot.floor_watch import FloorWatch
from jackpot.link import Link
from jackpot.money import Money
from jackpot.records import (
    PENDING,
    VOID,
    AwardRecord,
    CorrectionRecord,
    Expiry,
    PastFixed,
    ResetRecord,
    RoundRecord,
    SeedChangeRecord,
)
from jackpot.results import (
    BetsResult,
    ExpireResult,
    FinalizeResult,
    OutcomeResult,
    Result,
    VoidResult,
)
from jackpot.timeline import WIN

__all__ = [
    "COMMAND_HANDLERS",
    "RECENT_EXPIRED",
    "BetsResult",
    "ExpireResult",
    "FinalizeResult",
    "Floor",
    "OutcomeResult",
    "Result",
    "VoidResult",
]

RECENT_EXPIRED = 1_000  # expirations a floor remembers in detail


class Floor:
    """The floor's state, the lookups and views that change nothing, and `apply`."""

    def __init__(
        self, links: Sequence[LinkConfig], timing: Timing, retain_ms: int = 900_000
    ) -> None:
        self.timing = timing
        # A round is kept this long after it is settled (no pending award) or void, then
        # pruned from memory: the journal keeps it, and the state stays small however long
        # the server runs. Longer than round_timeout, so no event of it can still arrive
        # but a retry (answered from the journal).
        self.retain_ms = max(retain_ms, timing.round_timeout_ms + timing.hold_ms)
        self.done: deque[tuple[int, str, str]] = deque()  # (settled at, table, round)
        self.links: dict[str, Link] = {c.id: Link.new(c) for c in links}
        self.rounds: dict[tuple[str, str], RoundRecord] = {}
        self.awards: dict[str, AwardRecord] = {}
        self.resets: dict[str, ResetRecord] = {}
        self.seed_changes: list[SeedChangeRecord] = []
        self.corrections: list[CorrectionRecord] = []
        # The fixed awards of pruned rounds, in pruning order: like meter awards, every
        # fixed award stays listed (a pruned round can no longer be voided: they are final).
        self.past_fixed: list[PastFixed] = []
        # The meter awards of pruned rounds still in memory, in pruning order: the app
        # lets each leave once void or paid (app/state/past_awards.py).
        self.past_meter: list[str] = []
        # Per "link/meter", the newest meter awards that left memory, kept for what the
        # views show of a level (its last hits, a must-hit-by level's last reveal).
        self.left_hits: dict[str, list[AwardRecord]] = {}
        # How many meter awards left memory, by their state: the totals reports add.
        self.left_awards: dict[str, int] = {}
        self.now = -(2**62)  # the latest server time seen: never goes back
        self.expired: dict[str, int] = {}  # table -> rounds expired there, ever
        # table -> its final events' flows on its link (jackpot/table_ledger.py), ever
        self.table_flows: dict[str, list[int]] = {}
        # The latest expirations, for the reconciliation's list (the count above is exact).
        self.recent_expired: deque[Expiry] = deque(maxlen=RECENT_EXPIRED)
        self._open: OpenRounds | None = None  # derived: built from `rounds` when first asked
        self._watch: FloorWatch | None = None  # derived, likewise (jackpot/floor_watch.py)

    # -- applying a command ------------------------------------------------------------

    def apply(self, command: Command) -> Result:
        # The server's clock may step back (NTP); the core's time never does. A refused
        # command changes nothing, not even the time.
        before = self.now
        self.now = max(self.now, command.now)
        try:
            result = COMMAND_HANDLERS[type(command)](self, command)
        except Exception:
            self.now = before
            raise
        if self._watch is not None:
            self._watch.applied(result)
        return result

    # -- lookups -------------------------------------------------------------------------

    def link(self, link: str) -> Link:
        try:
            return self.links[link]
        except KeyError:
            raise UnknownError(f"no link {link!r}", ("link",)) from None

    def round(self, table: str, round_id: str) -> RoundRecord:
        try:
            return self.rounds[(table, round_id)]
        except KeyError:
            raise UnknownError(
                f"no bets were recorded for round {round_id!r} at table {table!r}"
            ) from None

    def meter_index(self, link: Link, meter: str) -> int:
        """The meter's place on its link; an unknown meter is the operator's error."""
        try:
            return link.meter_index(meter)
        except KeyError:
            raise UnknownError(f"link {link.id!r} has no meter {meter!r}", ("meter",)) from None

    def due_at(self) -> int | None:
        """When the next pending award or reset could become final (server time)."""
        dues = [d for link in self.links.values() if (d := link.due_at(self.timing)) is not None]
        dues += mystery_levels.due_at(self)
        return min(dues) if dues else None

    # -- views ---------------------------------------------------------------------------

    def display_values(self, link: str) -> list[tuple[str, Money]]:
        state = self.link(link)
        values = state.display_values()
        return [(m.id, v) for m, v in zip(state.config.meters, values, strict=True)]

    def pending_count(self, link: str) -> int:
        """Meter awards and operator resets pending, not counting voided awards (paid to
        nobody, 5.20) still waiting for their place; without sorting the timeline."""
        timeline = self.link(link).timeline
        if not timeline.pending_reversals:
            return timeline.pending_awards  # a voided award's RETURN outlasts its WIN
        voided = sum(
            1
            for _, e in timeline.heap
            if e.kind == WIN and not e.cancelled and self.awards[str(e.award)].state == VOID
        )
        return timeline.pending_awards - voided

    def pending_awards(self, link: str) -> list[AwardRecord]:
        # A voided award still waiting for its place is pending for nobody.
        return [
            self.awards[e.award]
            for e in self.link(link).timeline.pending_award_events()
            if e.kind == WIN and e.award is not None and self.awards[e.award].state == PENDING
        ]

    # -- open rounds (jackpot/expiry.py) -------------------------------------------------

    def opened(self, rnd: RoundRecord) -> None:
        """A round just took bets: the open index learns it, if it is built."""
        if self._open is not None:
            self._open.add(rnd)

    def open_index(self) -> OpenRounds:
        if self._open is None:
            self._open = OpenRounds(self.rounds)
        return self._open

    def watch(self) -> FloorWatch:
        """Each table's open rounds and last event, each link's stale rounds: kept as
        commands are applied once first asked for (the floor view, the metrics)."""
        if self._watch is None:
            self._watch = FloorWatch(self.rounds, self.links)
        return self._watch

    def expirable(self, now: int, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` open rounds received more than expire_after before `now`."""
        return self.open_index().older_than(self.rounds, now - self.timing.expire_after_ms, limit)

    def expire_due(self) -> int | None:
        """The server time at which the oldest open round may be expired."""
        oldest = self.open_index().oldest(self.rounds)
        return None if oldest is None else oldest + self.timing.expire_after_ms + 1

    def open_count(self, table: str, at_least: int = 0) -> int:
        """The table's open rounds (exact once the count reaches `at_least`)."""
        return self.open_index().count(self.rounds, table, at_least)


# Each command's handler: a function of the floor and the command, returning its result.
COMMAND_HANDLERS: dict[type[Any], Callable[[Floor, Any], Result]] = {
    CloseBets: contributions.close_bets,
    RecordOutcome: outcomes.record_outcome,
    VoidRound: voids.void_round,
    Finalize: watermark.finalize,
    Expire: expiry.expire,
    SetSeed: operator_changes.set_seed,
    ResetMeter: operator_changes.reset_meter,
    Correct: operator_changes.correct,
    ArmTrigger: mystery_levels.arm,
    TransferMoney: transfers.transfer,
}
