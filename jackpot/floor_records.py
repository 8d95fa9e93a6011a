"""What the floor holds: every link's meters and timeline, every round, award and reset."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from jackpot.config import LinkConfig, Timing
from jackpot.errors import UnknownError
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
    SeedChange,
)
from jackpot.timeline import WIN

RECENT_EXPIRED = 1_000  # expirations a floor remembers in detail


class FloorRecords:
    """The floor's state and the lookups and views that change nothing; `Floor` applies
    commands to it (jackpot.floor)."""

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
        self.seed_changes: list[SeedChange] = []
        self.corrections: list[CorrectionRecord] = []
        # The fixed awards of pruned rounds, in pruning order: like meter awards, every
        # fixed award stays listed (a pruned round can no longer be voided: they are final).
        self.past_fixed: list[PastFixed] = []
        self.now = -(2**62)  # the latest server time seen: never goes back
        self.expired: dict[str, int] = {}  # table -> rounds expired there, ever
        # The latest expirations, for the reconciliation's list (the count above is exact).
        self.recent_expired: deque[Expiry] = deque(maxlen=RECENT_EXPIRED)

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
        return min(dues) if dues else None

    # -- views -----------------------------------------------------------------------

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
            for e in self.link(link).timeline.pending()
            if e.kind == WIN and e.award is not None and self.awards[e.award].state == PENDING
        ]
