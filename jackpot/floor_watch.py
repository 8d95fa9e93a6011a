"""What the operators' floor view and the metrics read of the rounds without walking them:
each table's open rounds and last event, each link's rounds flagged stale (docs/api.md
`GET /v1/floor`). Derived, never stored: built from the floor's rounds when first asked
(so a snapshot's floor and a replayed one give the same answers), then kept as each
command's result is applied (`Floor.apply`)."""

from __future__ import annotations

from collections.abc import Mapping

from jackpot.link import Link
from jackpot.records import OPEN, CorrectionRecord, RoundRecord
from jackpot.results import (
    BetsResult,
    ExpireResult,
    FinalizeResult,
    OutcomeResult,
    Result,
    VoidResult,
)

Key = tuple[str, str]


class FloorWatch:
    """Kept per command in O(what it changed); read in O(what is shown)."""

    __slots__ = ("rounds", "links", "open_by_table", "last_events", "stale", "stale_holding")

    def __init__(self, rounds: Mapping[Key, RoundRecord], links: Mapping[str, Link]) -> None:
        self.rounds, self.links = rounds, links
        self.open_by_table: dict[str, set[str]] = {}
        # table -> (server time, "bets"/"outcome") of its latest event; at equal times the
        # later applied (in the rounds' order when built).
        self.last_events: dict[str, tuple[int, str]] = {}
        # link -> its open rounds flagged stale; and those of them still in the link's
        # `open_rounds` (a partial void can take a round out of it while it stays open).
        self.stale: dict[str, set[Key]] = {}
        self.stale_holding: dict[str, set[Key]] = {}
        for rnd in rounds.values():
            self._seen(rnd, last_of(rnd))
            if rnd.state == OPEN:
                self.open_by_table.setdefault(rnd.table, set()).add(rnd.round)
                if rnd.stale and rnd.link is not None:
                    self._flagged(rnd)

    def applied(self, result: Result) -> None:
        if isinstance(result, BetsResult):
            rnd = result.round
            self.open_by_table.setdefault(rnd.table, set()).add(rnd.round)
            self._seen(rnd, (rnd.received_at, "bets"))
        elif isinstance(result, OutcomeResult):
            self._left(result.round)
            self._seen(result.round, last_of(result.round))
        elif isinstance(result, VoidResult):
            self._left(result.round)
        elif isinstance(result, ExpireResult):
            for rnd in result.rounds:
                self._left(rnd)
        elif isinstance(result, FinalizeResult):
            for rnd in result.stale:
                self._flagged(rnd)
        elif isinstance(result, CorrectionRecord) and result.kind == "void_round":
            assert result.table is not None and result.round is not None
            self._left(self.rounds[(result.table, result.round)])

    def open_count(self, table: str) -> int:
        return len(self.open_by_table.get(table, ()))

    def stale_rounds(self, link: str) -> set[Key]:
        """The link's rounds flagged stale with no outcome, void or expiry yet."""
        return self.stale.get(link, set())

    def stale_holding_rounds(self, link: str) -> set[Key]:
        """Those of them still in the link's `open_rounds`."""
        return self.stale_holding.get(link, set())

    def _seen(self, rnd: RoundRecord, seen: tuple[int, str]) -> None:
        known = self.last_events.get(rnd.table)
        if known is None or seen[0] >= known[0]:
            self.last_events[rnd.table] = seen

    def _flagged(self, rnd: RoundRecord) -> None:
        assert rnd.link is not None  # only a link's open rounds turn stale
        key = (rnd.table, rnd.round)
        self.stale.setdefault(rnd.link, set()).add(key)
        if key in self.links[rnd.link].open_rounds:
            self.stale_holding.setdefault(rnd.link, set()).add(key)

    def _left(self, rnd: RoundRecord) -> None:
        """After an outcome, a void (of some boxes or all) or an expiry of the round."""
        key = (rnd.table, rnd.round)
        if rnd.state != OPEN:
            ids = self.open_by_table.get(rnd.table)
            if ids is not None:
                ids.discard(rnd.round)
        if rnd.stale and rnd.link is not None:
            if rnd.state != OPEN:
                self.stale.get(rnd.link, set()).discard(key)
            if key not in self.links[rnd.link].open_rounds:
                self.stale_holding.get(rnd.link, set()).discard(key)


def last_of(rnd: RoundRecord) -> tuple[int, str]:
    """A round's latest event: its outcome, else its bets."""
    if rnd.outcome_at is not None and rnd.outcome_at >= rnd.received_at:
        return (rnd.outcome_at, "outcome")
    return (rnd.received_at, "bets")
