"""What the floor view, the metrics and the watermark read without walking every round
(jackpot/floor_watch.py, jackpot/holding_order.py) answers exactly what a scan of every
round answers (docs/design.md "The watermark"), through random bets, outcomes, voids,
corrections, expiries and finalizes with the clock stepping past round_timeout; and so
does the floor rebuilt from a snapshot or by replaying its commands.

The expected answers are the scans the code used to make, written out here."""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import replace

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from jackpot.canonical import canonical_json
from jackpot.commands import CloseBets, Command, Correct, Expire, Finalize, ResetMeter
from jackpot.config import LinkConfig, Timing
from jackpot.errors import JackpotError
from jackpot.floor import FinalizeResult, Floor
from jackpot.holds import Hold, holding
from jackpot.link import Link, Replay, applied_contribution, contribute
from jackpot.money import Money
from jackpot.records import OPEN, PENDING, RoundRecord
from jackpot.snapshot import dump, load
from jackpot.timeline import CONTRIBUTION, RESET, WIN
from tests.unit.jackpot.support import ROYAL, STRAIGHT_FLUSH, bets, m, outcome, stud_link, void

# Short enough that rounds turn stale and expire within a few steps.
TIMING = Timing(
    hold_ms=2_000, round_timeout_ms=20_000, max_clock_skew_ms=2_000, expire_after_ms=60_000
)
RETAIN = 40_000
TABLES = ["T1", "T2", "T3"]


def new_floor(link: LinkConfig) -> Floor:
    return Floor([link], TIMING, retain_ms=RETAIN)


# -- the scans: every round, every open round ------------------------------------------


def scan_open_counts(floor: Floor) -> dict[str, int]:
    counts = Counter(rnd.table for rnd in floor.rounds.values() if rnd.state == OPEN)
    return {t: counts[t] for t in TABLES}


def scan_last_events(rounds: list[RoundRecord], last: dict[str, tuple[int, str]]) -> None:
    for rnd in rounds:
        seen = (rnd.received_at, "bets")
        if rnd.outcome_at is not None and rnd.outcome_at >= rnd.received_at:
            seen = (rnd.outcome_at, "outcome")
        known = last.get(rnd.table)
        if known is None or seen[0] > known[0]:
            last[rnd.table] = seen


def scan_stale(floor: Floor, link: str) -> set[tuple[str, str]]:
    return {k for k, r in floor.rounds.items() if r.link == link and r.state == OPEN and r.stale}


def scan_stale_holding(floor: Floor, link: Link) -> set[tuple[str, str]]:
    return {k for k in link.open_rounds if floor.rounds[k].stale}


def scan_watermark(link: Link, now: int) -> int:
    bound = now - TIMING.hold_ms
    for at in link.open_rounds.values():
        if now - at <= TIMING.round_timeout_ms and at < bound:
            bound = at
    return bound


def scan_holding(link: Link, at: int, now: int) -> list[Hold]:
    return sorted(
        Hold(a, t, r, a + TIMING.round_timeout_ms)
        for (t, r), a in link.open_rounds.items()
        if a <= at and now - a <= TIMING.round_timeout_ms
    )


def scan_held_until(link: Link, t: int) -> int:
    due = t + TIMING.hold_ms + 1
    for at in link.open_rounds.values():
        if at <= t:
            due = max(due, at + TIMING.round_timeout_ms + 1)
    return due


def scan_provisional(link: Link) -> list[tuple[Money, Money]]:
    copies = [replace(m) for m in link.meters]
    pending = list(link.timeline.pending())
    replay = Replay(copies, pending)
    for pending_event in pending:
        if pending_event.kind == CONTRIBUTION:
            applied_contribution(copies, pending_event)
        else:
            replay.step(pending_event)
    return [(m.value, m.reserve) for m in copies]


def scan_display(link: Link) -> list[Money]:
    copies = [replace(m) for m in link.meters]
    held = [0] * len(copies)
    pending = link.timeline.pending()
    replay = Replay(copies, pending)
    for pending_event in pending:
        if pending_event.kind == CONTRIBUTION:
            held = [h + m for h, (m, _) in zip(held, pending_event.amounts, strict=True)]
            continue
        contribute(copies, [(h, 0) for h in held])
        held = [0] * len(copies)
        replay.step(pending_event)
    contribute(copies, [(h, 0) for h in held])
    return [m.value for m in copies]


class WatchMachine(RuleBasedStateMachine):
    LINK = stud_link()

    def __init__(self) -> None:
        super().__init__()
        self.floor = new_floor(self.LINK)
        self.commands: list[Command] = []
        self.now = 1_000_000
        self.rounds = 0
        self.last: dict[str, tuple[int, str]] = {}
        self.built = False

    def apply(self, command: Command) -> object:
        result = self.floor.apply(command)
        self.commands.append(command)
        # The old view looked at every round in memory each time it was built; a round
        # leaves memory only retain_ms after it settles, so looking after each command
        # misses none.
        scan_last_events(list(self.floor.rounds.values()), self.last)
        return result

    def step(self, ms: int) -> None:
        self.now += ms + 1  # every event at its own time: the latest is the last

    @rule(ask=st.booleans())
    def ask(self, ask: bool) -> None:
        # The derived indexes, built now (then kept as commands apply) or later from the
        # rounds as they then stand.
        if ask and not self.built:
            self.floor.watch()
            self.floor.links["stud"].order()
            self.built = True

    @rule(
        table=st.sampled_from(TABLES),
        boxes=st.lists(
            st.tuples(st.integers(1, 4), st.sampled_from(["1.00", "0.50", "0"])),
            min_size=1,
            max_size=3,
            unique_by=lambda b: b[0],
        ),
        age=st.one_of(st.integers(0, 2_500), st.integers(2_501, 19_000)),  # late or not
        linked=st.booleans(),
        ms=st.integers(0, 3_000),
    )
    def close_bets(
        self, table: str, boxes: list[tuple[int, str]], age: int, linked: bool, ms: int
    ) -> None:
        self.step(ms)
        self.rounds += 1
        command = bets(table, f"R{self.rounds}", self.now - age, self.now, *boxes)
        if not linked:  # a table with no link (no jackpot wager at all)
            command = CloseBets(table, f"R{self.rounds}", None, self.now - age, self.now, ())
        self.apply(command)

    @precondition(lambda self: any(r.state == OPEN for r in self.floor.rounds.values()))
    @rule(data=st.data(), ms=st.integers(0, 3_000))
    def post_outcome(self, data: st.DataObject, ms: int) -> None:
        self.step(ms)
        keys = sorted(k for k, r in self.floor.rounds.items() if r.state == OPEN)
        table, round_id = data.draw(st.sampled_from(keys))
        rnd = self.floor.rounds[(table, round_id)]
        claims = []
        for box in sorted(b for b, rec in rnd.boxes.items() if rec.wager and not rec.voided):
            share = data.draw(st.sampled_from([None, None, ROYAL, STRAIGHT_FLUSH]))
            if share is not None and rnd.link is not None:
                # Up to the clock skew ahead: voided before the clock reaches it, it leaves
                # the timeline (jackpot/voids.py `withhold_award`).
                dealt = data.draw(st.integers(rnd.closed_at, self.now + 1_500))
                claims.append((box, share, dealt))
        with contextlib.suppress(JackpotError):  # refused: nothing changed
            self.apply(outcome(table, round_id, self.now, *claims))

    @precondition(lambda self: bool(self.floor.rounds))
    @rule(data=st.data(), ms=st.integers(0, 3_000))
    def void_round(self, data: st.DataObject, ms: int) -> None:
        self.step(ms)
        key = data.draw(st.sampled_from(sorted(self.floor.rounds)))
        rnd = self.floor.rounds[key]
        some = st.lists(st.sampled_from(sorted(rnd.boxes)), min_size=1, unique=True)
        boxes = data.draw(st.one_of(st.none(), some)) if rnd.boxes else None
        with contextlib.suppress(JackpotError):  # refused: nothing changed
            self.apply(void(key[0], key[1], self.now, None if boxes is None else tuple(boxes)))

    @precondition(lambda self: bool(self.partly_wagered()))
    @rule(data=st.data(), ms=st.integers(0, 3_000))
    def void_its_jackpot_boxes(self, data: st.DataObject, ms: int) -> None:
        # The round stays open with only boxes that contributed nothing: it leaves the
        # link's open rounds (it holds nothing) but is still listed stale if it was.
        self.step(ms)
        table, round_id = data.draw(st.sampled_from(self.partly_wagered()))
        rnd = self.floor.rounds[(table, round_id)]
        boxes = tuple(b for b, rec in rnd.boxes.items() if rec.contributions and not rec.voided)
        self.apply(void(table, round_id, self.now, boxes))

    def partly_wagered(self) -> list[tuple[str, str]]:
        return sorted(
            k
            for k, r in self.floor.rounds.items()
            if r.state == OPEN
            and any(not b.contributions for b in r.boxes.values())
            and any(b.contributions and not b.voided for b in r.boxes.values())
        )

    @precondition(lambda self: bool(self.floor.rounds))
    @rule(data=st.data(), ms=st.integers(0, 3_000))
    def void_final_round(self, data: st.DataObject, ms: int) -> None:
        self.step(ms)
        table, round_id = data.draw(st.sampled_from(sorted(self.floor.rounds)))
        command = Correct(
            "void_round", "stud", "major", self.now, "sue", "5.24", table=table, round=round_id
        )
        with contextlib.suppress(JackpotError):  # refused: nothing changed
            self.apply(command)

    @rule(ms=st.one_of(st.integers(0, 5_000), st.integers(15_000, 70_000)))
    def finalize(self, ms: int) -> None:
        self.step(ms)
        link = self.floor.links["stud"]
        due = {
            k
            for k, at in link.open_rounds.items()
            if not self.floor.rounds[k].stale and self.now - at > TIMING.round_timeout_ms
        }
        result = self.apply(Finalize(self.now))
        assert isinstance(result, FinalizeResult)
        assert {(r.table, r.round) for r in result.stale} == due
        if due:
            event("rounds turned stale")

    @rule(ms=st.integers(0, 3_000))
    def reset(self, ms: int) -> None:
        self.step(ms)
        self.apply(ResetMeter("stud", "major", self.now, "sam", "test"))

    @rule(ms=st.integers(0, 70_000))
    def expire(self, ms: int) -> None:
        self.step(ms)
        rounds = self.floor.expirable(self.now, 5)
        if rounds:
            self.apply(Expire(self.now, tuple(rounds)))
            event("rounds expired")

    @rule()
    def from_a_snapshot(self) -> None:
        state = canonical_json(dump(self.floor))
        self.floor = load(dump(self.floor), [self.LINK], TIMING, RETAIN)
        assert canonical_json(dump(self.floor)) == state
        self.reload()

    @rule()
    def by_replay(self) -> None:
        state = canonical_json(dump(self.floor))
        self.floor = new_floor(self.LINK)
        for command in self.commands:
            self.floor.apply(command)
        assert canonical_json(dump(self.floor)) == state
        self.reload()

    def reload(self) -> None:
        # A new floor knows the last events of the rounds it holds: what the console's
        # view remembers of the others stays in the app (app/state/live_views.py).
        self.last = {}
        scan_last_events(list(self.floor.rounds.values()), self.last)
        self.built = False

    @invariant()
    def each_table_s_open_rounds_and_last_event(self) -> None:
        watch = self.floor.watch()
        assert {t: watch.open_count(t) for t in TABLES} == scan_open_counts(self.floor)
        assert watch.last_events == self.last

    @invariant()
    def the_link_s_stale_rounds(self) -> None:
        watch, link = self.floor.watch(), self.floor.links["stud"]
        assert watch.stale_rounds("stud") == scan_stale(self.floor, "stud")
        assert watch.stale_holding_rounds("stud") == scan_stale_holding(self.floor, link)

    @invariant()
    def the_watermark_holds_and_due_times(self) -> None:
        link = self.floor.links["stud"]
        # At the floor's time, later ones and an earlier one (a view's clock may be ahead
        # of the floor's or have stepped back).
        for now in (self.floor.now, self.now + 10_000, self.now + 25_000, self.now - 15_000):
            assert link.watermark_at(now, TIMING) == scan_watermark(link, now)
            times = [a.effective_at for a in self.floor.pending_awards("stud")]
            for at in [*times, now - 30_000, now - 5_000, now]:
                assert holding(link, at, now, TIMING) == scan_holding(link, at, now)
                if times and scan_holding(link, times[0], now):
                    event("a pending award held")
        if scan_stale(self.floor, "stud") != scan_stale_holding(self.floor, link):
            event("a stale round out of open_rounds, still open")
        times = [
            e.time for _, e in link.timeline.heap if e.kind in (WIN, RESET) and not e.cancelled
        ]
        t = min(times) if times else None
        assert link.timeline.earliest_award_time() == t
        expected = None if t is None else scan_held_until(link, t)
        assert link.due_at(TIMING) == expected
        if link.timeline.heap:
            earliest = link.timeline.heap[0][0][0]
            assert link.held_until(earliest, TIMING) == scan_held_until(link, earliest)

    @invariant()
    def the_meters_as_if_every_pending_event_were_final(self) -> None:
        link = self.floor.links["stud"]
        assert link.provisional() == scan_provisional(link)
        assert link.display_values() == scan_display(link)
        pending = [
            self.floor.awards[e.award]
            for e in link.timeline.pending()
            if e.kind == WIN and e.award is not None
        ]
        assert self.floor.pending_awards("stud") == [a for a in pending if a.state == PENDING]


WatchMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=80, deadline=None)
test_the_indexes_answer_as_the_scans_do = WatchMachine.TestCase


def capped(overflow_to: str) -> LinkConfig:
    meter = replace(stud_link().meters[0], ceiling=m("10000.50"), overflow_to=overflow_to)
    return LinkConfig("stud", (meter,))


class ReserveMachine(WatchMachine):
    """A ceiling reached within a few rounds; beyond it, to the reserve."""

    LINK = capped("reserve")


class HouseMachine(WatchMachine):
    """The same ceiling; beyond it, to the house."""

    LINK = capped("house")


ReserveMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=60, deadline=None)
HouseMachine.TestCase.settings = ReserveMachine.TestCase.settings
test_past_a_ceiling_to_the_reserve = ReserveMachine.TestCase
test_past_a_ceiling_to_the_house = HouseMachine.TestCase


def test_an_award_voided_before_its_time_no_longer_counts_as_the_earliest() -> None:
    # Dealt ahead of the server's clock, then voided: it leaves the timeline
    # (jackpot/voids.py `withhold_award`) though its event waits in the heap; a straight
    # flush after it is the earliest pending, and takes its share of a meter the royal
    # flush never reset.
    f = new_floor(stud_link())
    link = f.links["stud"]
    t = 1_000_000
    f.apply(bets("T1", "R1", t, t, (1, "1.00")))
    f.apply(bets("T2", "R2", t, t, (1, "1.00")))  # open: holds the watermark at t
    f.apply(outcome("T1", "R1", t + 10, (1, ROYAL, t + 1_500)))
    assert link.timeline.earliest_award_time() == t + 1_500
    f.apply(void("T1", "R1", t + 20))
    f.apply(outcome("T2", "R2", t + 30))
    f.apply(Finalize(t + 2_100))  # the void's reversal is final; the royal's place is not
    f.apply(bets("T3", "R3", t + 2_200, t + 2_200, (1, "1.00")))
    f.apply(outcome("T3", "R3", t + 3_000, (1, STRAIGHT_FLUSH, t + 3_000)))
    assert link.timeline.pending_reversals == 0
    assert any(e.cancelled for _, e in link.timeline.heap)
    assert link.timeline.earliest_award_time() == t + 3_000
    assert link.provisional() == scan_provisional(link)
    assert link.display_values() == scan_display(link)
