"""The floor: every link's meters and timeline, every round, applied one command at a time.

The service's single writer owns one Floor and calls `apply` in journal order; replaying
the same commands gives the same state (see `jackpot.snapshot`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from jackpot.commands import (
    CloseBets,
    Command,
    Correct,
    Expire,
    Finalize,
    RecordOutcome,
    ResetMeter,
    SetSeed,
    VoidRound,
)
from jackpot.config import LinkConfig, Timing
from jackpot.errors import (
    ClockSkewError,
    InvalidCommandError,
    StaleRoundError,
    StateConflictError,
    UnknownError,
)
from jackpot.expiry import OpenRounds, expired_error
from jackpot.link import (
    IN_RETURN,
    Link,
    applied_contribution,
    apply_event,
    give_back,
    own_reversals,
    reverse_contribution,
    withhold,
)
from jackpot.money import RATE_SCALE, Money, format_money
from jackpot.records import (
    EXPIRED,
    FINAL,
    OPEN,
    PENDING,
    SETTLED,
    VOID,
    AwardRecord,
    BoxRecord,
    CorrectionRecord,
    Expiry,
    FixedRecord,
    PastFixed,
    ResetRecord,
    RoundRecord,
    SeedChange,
)
from jackpot.timeline import CONTRIBUTION, RESET, RETURN, REVERSAL, WIN, Event


@dataclass(frozen=True, slots=True)
class BetsResult:
    round: RoundRecord


@dataclass(frozen=True, slots=True)
class OutcomeResult:
    round: RoundRecord
    awards: tuple[AwardRecord, ...]


@dataclass(frozen=True, slots=True)
class VoidResult:
    round: RoundRecord
    reversed: tuple[tuple[int, int], ...]  # (box, contribution reversed: meter + reserve)
    cancelled: tuple[str, ...]  # pending meter awards voided (paid to nobody)


@dataclass(frozen=True, slots=True)
class FinalizeResult:
    finalized: tuple[AwardRecord | ResetRecord, ...]
    stale: tuple[RoundRecord, ...]  # rounds that just passed round_timeout
    pruned: tuple[tuple[str, str], ...] = ()  # settled rounds no longer kept in memory
    reversed: tuple[str, ...] = ()  # "table/round/box": voided contributions now reversed
    # Voided awards that took their amount at their place, paid to nobody (DESIGN.md,
    # voids), and the awards whose amount just returned to the meter at the void's position.
    withheld: tuple[AwardRecord, ...] = ()
    returned: tuple[str, ...] = ()


RECENT_EXPIRED = 1_000  # expirations a floor remembers in detail


@dataclass(frozen=True, slots=True)
class ExpireResult:
    rounds: tuple[RoundRecord, ...]


Result = (
    BetsResult
    | OutcomeResult
    | VoidResult
    | FinalizeResult
    | ExpireResult
    | SeedChange
    | ResetRecord
    | CorrectionRecord
)


class Floor:
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
        self._open: OpenRounds | None = None  # derived: built from `rounds` when first asked

    # -- dispatch ------------------------------------------------------------------

    def apply(self, command: Command) -> Result:
        # The server's clock may step back (NTP); the core's time never does. A refused
        # command changes nothing, not even the time.
        before = self.now
        self.now = max(self.now, command.now)
        try:
            return self._dispatch(command)
        except Exception:
            self.now = before
            raise

    def _dispatch(self, command: Command) -> Result:
        if isinstance(command, CloseBets):
            bets = self.close_bets(command)
            if self._open is not None:
                self._open.add(bets.round)
            return bets
        if isinstance(command, Expire):
            return self.expire(command)
        if isinstance(command, RecordOutcome):
            return self.record_outcome(command)
        if isinstance(command, Finalize):
            return self.finalize()
        if isinstance(command, VoidRound):
            return self.void_round(command)
        if isinstance(command, SetSeed):
            return self.set_seed(command)
        if isinstance(command, Correct):
            return self.correct(command)
        return self.reset_meter(command)

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

    # -- bets ------------------------------------------------------------------------

    def close_bets(self, cmd: CloseBets) -> BetsResult:
        now, timing = self.now, self.timing
        if cmd.closed_at > now + timing.max_clock_skew_ms:
            raise ClockSkewError(
                f"closed_at is {cmd.closed_at - now} ms ahead of the server's clock "
                f"(max_clock_skew {timing.max_clock_skew_ms} ms)",
                ("closed_at",),
            )
        if now - cmd.closed_at > timing.round_timeout_ms:
            raise StaleRoundError(
                f"bets closed {now - cmd.closed_at} ms ago, more than round_timeout "
                f"({timing.round_timeout_ms} ms): void the round (rule 5.17)",
                ("closed_at",),
            )
        if (cmd.table, cmd.round) in self.rounds:
            raise StateConflictError(f"round {cmd.round!r} already has bets")
        link = self.link(cmd.link) if cmd.link is not None else None
        # Bets that arrive more than `hold` after they closed are late: they take effect
        # at the current position, never before an award that may already be final.
        late = now - cmd.closed_at > timing.hold_ms
        effective = now if late else cmd.closed_at
        if link is not None:
            effective = max(effective, link.timeline.watermark)
        boxes: dict[int, BoxRecord] = {}
        rates = link.rates if link is not None else ()
        # Per meter, the round's (to_meter, to_reserve) summed over its boxes.
        sums = [[0, 0] for _ in rates]
        contributed = False
        for w in cmd.wagers:
            if w.box in boxes:
                raise InvalidCommandError("a box appears twice", ("boxes",))
            total = w.wager + w.dealer_wager
            amounts: tuple[tuple[int, int], ...] = ()
            if total and rates:
                # Exact: a whole-cent wager times a four-place rate is whole micro-units.
                amounts = tuple(
                    [(total * r // RATE_SCALE, total * q // RATE_SCALE) for r, q in rates]
                )
                for pair, (to_meter, to_reserve) in zip(sums, amounts, strict=True):
                    pair[0] += to_meter
                    pair[1] += to_reserve
                contributed = True
            boxes[w.box] = BoxRecord(w.box, w.wager, w.dealer_wager, amounts)
        event = None
        if link is not None and contributed:
            key = link.timeline.key(effective, CONTRIBUTION, cmd.table, 0)
            event = Event(key, amounts=tuple([(m, q) for m, q in sums]))
            link.timeline.push(event)
        record = RoundRecord(
            table=cmd.table,
            round=cmd.round,
            link=cmd.link,
            closed_at=cmd.closed_at,
            effective_at=effective,
            received_at=now,
            late=late,
            boxes=boxes,
            event=event,
        )
        self.rounds[(cmd.table, cmd.round)] = record
        if event is not None and link is not None:
            link.open_rounds[(cmd.table, cmd.round)] = effective
            link.stale_check_at = min(link.stale_check_at, effective + timing.round_timeout_ms + 1)
        return BetsResult(record)

    # -- outcome ---------------------------------------------------------------------

    def record_outcome(self, cmd: RecordOutcome) -> OutcomeResult:
        now, timing = self.now, self.timing
        rnd = self.round(cmd.table, cmd.round)
        if rnd.state == VOID:
            raise StateConflictError(f"round {cmd.round!r} is void")
        if rnd.state == EXPIRED:
            raise expired_error(rnd, timing)
        if rnd.state == SETTLED:
            raise StateConflictError(f"round {cmd.round!r} already has an outcome")
        link = self.links[rnd.link] if rnd.link is not None else None
        for i, claim in enumerate(cmd.claims):
            self._check_claim(rnd, link, i, claim.box, claim.target, claim.dealt_at, claim.meter)
        if len({(c.box, c.target) for c in cmd.claims}) != len(cmd.claims):
            raise InvalidCommandError("a box claims the same hand twice", ("claims",))
        # An outcome after round_timeout is late; so is a win the watermark has passed.
        # Late wins pay the value at the current position. Only the late event itself
        # takes it: an on-time win of a round whose bets were late keeps its deal-time
        # place (4.5.2, 4.9.1); entries of version 1 demoted it too.
        timed_out = now - rnd.effective_at > timing.round_timeout_ms
        demoted = rnd.late and cmd.version < 2
        awards: list[AwardRecord] = []
        for claim in cmd.claims:
            assert link is not None
            late = timed_out or demoted or claim.dealt_at < link.timeline.watermark
            effective = now if late else claim.dealt_at
            index = link.meter_index(claim.meter)
            key = link.timeline.key(effective, WIN, rnd.table, claim.box)
            award_id = f"{rnd.table}/{rnd.round}/{claim.box}/{claim.target}"
            event = Event(key, award=award_id, meter=index, share=claim.share)
            award = AwardRecord(
                id=award_id,
                link=link.id,
                meter=link.config.meters[index].id,
                table=rnd.table,
                round=rnd.round,
                box=claim.box,
                target=claim.target,
                hand=claim.hand,
                share=claim.share,
                dealt_at=claim.dealt_at,
                effective_at=effective,
                late=late,
                tiebreak=key[2],
                claimed_at=now,
                event=event,
            )
            self.awards[award_id] = award
            link.timeline.push(event)
            awards.append(award)
            rnd.awards.append(award_id)
        rnd.fixed = [FixedRecord(f) for f in cmd.fixed]
        rnd.state, rnd.outcome_at, rnd.outcome_late = SETTLED, now, timed_out
        if not awards:
            self.done.append((now, rnd.table, rnd.round))
        if link is not None:
            link.open_rounds.pop((rnd.table, rnd.round), None)
        return OutcomeResult(rnd, tuple(awards))

    def _check_claim(
        self,
        rnd: RoundRecord,
        link: Link | None,
        i: int,
        box: int,
        target: str,
        dealt_at: int,
        meter: str | None,
    ) -> None:
        loc: tuple[str | int, ...] = ("claims", i)
        record = rnd.boxes.get(box)
        wager = 0
        if record is not None and not record.voided:
            wager = record.dealer_wager if target == "dealer" else record.wager
        if link is None or wager == 0:
            raise InvalidCommandError(f"box {box} has no accepted {target}-hand jackpot wager", loc)
        if dealt_at < rnd.closed_at:
            raise InvalidCommandError(f"box {box} dealt_at is before the round's closed_at", loc)
        if dealt_at > self.now + self.timing.max_clock_skew_ms:
            raise ClockSkewError(f"box {box} dealt_at is ahead of the server's clock", loc)
        try:
            link.meter_index(meter)
        except KeyError:
            raise InvalidCommandError(f"link {link.id!r} has no meter {meter!r}", loc) from None

    # -- void ------------------------------------------------------------------------

    def void_round(self, cmd: VoidRound) -> VoidResult:
        rnd = self.round(cmd.table, cmd.round)
        if rnd.state == VOID:
            raise StateConflictError(f"round {cmd.round!r} is already void")
        boxes = sorted(rnd.boxes) if cmd.boxes is None else list(dict.fromkeys(cmd.boxes))
        for i, box in enumerate(boxes):
            if box not in rnd.boxes:
                raise InvalidCommandError(f"round {cmd.round!r} has no box {box}", ("boxes", i))
        voided = set(boxes)
        for award_id in rnd.awards:
            award = self.awards[award_id]
            if award.box in voided and award.state == FINAL:
                # DESIGN.md: a final major award cannot be voided; that is an audited
                # operator correction (5.24).
                raise StateConflictError(
                    f"the {award.hand} award of box {award.box} is already final: "
                    "ask a supervisor for a correction (rule 5.24)"
                )
        link = self.links[rnd.link] if rnd.link is not None else None
        reversed_: list[tuple[int, int]] = []
        cancelled: list[str] = []
        for box in boxes:
            record = rnd.boxes[box]
            if record.voided:
                continue
            record.voided = True
            if record.contributions and rnd.event is not None and link is not None:
                reversed_.append((box, record.contribution + record.reserve))
                self._reverse(link, rnd, box, cmd.version)
        for award_id in rnd.awards:
            award = self.awards[award_id]
            if award.box in voided and award.state == PENDING and link is not None:
                self._withhold(link, award, cmd.version)
                cancelled.append(award_id)
        for fixed in rnd.fixed:
            if fixed.award.box in voided or fixed.award.for_box in voided:
                fixed.voided = True
        whole = all(b.voided for b in rnd.boxes.values())
        if whole:
            rnd.state, rnd.void_reason = VOID, cmd.reason
            self.done.append((self.now, rnd.table, rnd.round))
        if link is not None and (
            whole or not any(b.contributions and not b.voided for b in rnd.boxes.values())
        ):
            link.open_rounds.pop((rnd.table, rnd.round), None)
        return VoidResult(rnd, tuple(reversed_), tuple(cancelled))

    def _reverse(self, link: Link, rnd: RoundRecord, box: int, version: int) -> None:
        """Take one box's contribution back, at the current position (DESIGN.md, voids).

        No award dealt before the void changes, pending or final (5.20, 4.5.1): the
        reversal is an event at `now` on the timeline, after every event before it, and
        takes effect when the watermark passes it. A contribution that stands after that
        position (closed_at ahead of the server's clock) is simply taken out of its event.
        """
        event, amounts = rnd.event, rnd.boxes[box].contributions
        assert event is not None
        timeline = link.timeline
        at = max(self.now, timeline.watermark)
        if event.applied is None and (version < 2 or event.time > at):
            timeline.take(event, amounts)  # version 1: out of the pending event, in event time
            return
        if version >= 2:
            key = timeline.key(at, REVERSAL, rnd.table, box)
            reversal = Event(key, amounts, award=f"{rnd.table}/{rnd.round}/{box}", source=event)
            timeline.push(reversal)
            return
        # Version 1, already final: out of the final meter at once.
        assert event.applied is not None
        applied = []
        for meter, (m_in, r_in), (m, r) in zip(link.meters, event.applied, amounts, strict=True):
            from_meter = min(m, m_in)
            from_reserve = r + m - from_meter
            meter.reverse(
                from_meter, from_reserve, in_meter=event.key > meter.reset_key, gross=False
            )
            applied.append((m_in - from_meter, r_in - from_reserve))
        event.applied = tuple(applied)

    def _withhold(self, link: Link, award: AwardRecord, version: int) -> None:
        """A voided box's pending award is paid to nobody, at the current position.

        It keeps its place on the timeline, so that no award dealt before the void changes
        (5.20; 4.5.1: each winner takes the value that follows the one before): there it
        takes its amount (a 100 % award resets the meter, its own amount funding the seed
        first), and a RETURN event at the void's position gives the rest back to the
        meter (`Meter.withhold`). One that
        stands after that position (dealt_at ahead of the server's clock), and any voided
        by an entry of version 1, simply leaves the timeline.
        """
        award.state = VOID
        timeline = link.timeline
        at = max(self.now, timeline.watermark)
        if version < 2 or award.event.time > at:
            timeline.cancel(award.event)
            return
        key = timeline.key(at, RETURN, award.table, award.box)
        timeline.push(Event(key, award=award.id, meter=award.event.meter, source=award.event))

    # -- the watermark ---------------------------------------------------------------

    def finalize(self) -> FinalizeResult:
        now, timing = self.now, self.timing
        finalized: list[AwardRecord | ResetRecord] = []
        reversed_: list[str] = []
        withheld: list[AwardRecord] = []
        returned: list[str] = []
        stale: list[RoundRecord] = []
        timeout = timing.round_timeout_ms
        for link in self.links.values():
            if now >= link.stale_check_at:
                next_check = 2**62
                for key, effective_at in link.open_rounds.items():
                    rnd = self.rounds[key]
                    if rnd.stale:
                        continue
                    if now - effective_at > timeout:
                        rnd.stale = True  # flagged to operators; it no longer holds others
                        stale.append(rnd)
                    else:
                        next_check = min(next_check, effective_at + timeout + 1)
                link.stale_check_at = next_check
            order = 0
            for event in link.timeline.pop_until(link.watermark_at(now, timing)):
                if event.kind == CONTRIBUTION:
                    event.applied = applied_contribution(link.meters, event)
                    continue
                if event.kind == REVERSAL:
                    reverse_contribution(link.meters, event)
                    assert event.award is not None
                    reversed_.append(event.award)
                    continue
                if event.kind == RETURN:
                    give_back(link.meters, event)
                    assert event.award is not None
                    returned.append(event.award)
                    continue
                meter = link.meters[event.meter]
                value_before = meter.value
                if event.kind == WIN and self.awards[str(event.award)].state == VOID:
                    if event.share == RATE_SCALE:
                        heap = (e for _, e in link.timeline.heap if not e.cancelled)
                        for reversal in own_reversals(heap, event, link.meters):
                            reversal.share = IN_RETURN
                    withheld.append(self._withheld(link, event, value_before))
                    if event.share == RATE_SCALE:
                        meter.reset_key = event.key  # as for a win (jackpot.link.withhold)
                    continue
                result = apply_event(link.meters, event)
                assert result is not None and event.award is not None
                if event.kind == RESET:
                    meter.reset_key = event.key
                    reset = self.resets[event.award]
                    reset.state, reset.finalized_at = FINAL, now
                    reset.value_before, reset.funding = value_before, result[1]
                    finalized.append(reset)
                    continue
                if event.share == RATE_SCALE:
                    meter.reset_key = event.key
                order += 1
                link.sequence += 1
                award = self.awards[event.award]
                award.state, award.amount, award.funding = FINAL, result[0], result[1]
                award.meter_value = value_before
                award.order, award.sequence, award.finalized_at = order, link.sequence, now
                finalized.append(award)
        for record in finalized:
            if isinstance(record, AwardRecord):
                self.done.append((now, record.table, record.round))
        return FinalizeResult(
            tuple(finalized),
            tuple(stale),
            self._prune(),
            tuple(reversed_),
            tuple(withheld),
            tuple(returned),
        )

    def _withheld(self, link: Link, event: Event, value_before: Money) -> AwardRecord:
        """A voided award at its place (`_withhold`): it takes its amount for nobody."""
        amount, funding, held = withhold(link.meters, event)
        event.applied = ((amount, held),)  # for its RETURN (jackpot.link.give_back)
        award = self.awards[str(event.award)]
        award.amount, award.funding, award.meter_value = amount, funding, value_before
        award.finalized_at = self.now
        return award

    def _prune(self) -> tuple[tuple[str, str], ...]:
        """Drop rounds settled or void more than retain_ms ago (their awards stay)."""
        pruned = []
        while self.done and self.done[0][0] < self.now - self.retain_ms:
            _, table, round_id = self.done.popleft()
            rnd = self.rounds.get((table, round_id))
            if rnd is None or rnd.state == OPEN:
                continue
            if any(self.awards[a].state == PENDING for a in rnd.awards):
                continue  # pushed again when its awards become final
            del self.rounds[(table, round_id)]
            self.past_fixed += [
                PastFixed(table, round_id, rnd.link, f.award, f.voided) for f in rnd.fixed
            ]
            pruned.append((table, round_id))
        return tuple(pruned)

    # -- expiry (jackpot/expiry.py) ---------------------------------------------------

    def expire(self, cmd: Expire) -> ExpireResult:
        """The rounds leave the open set: they hold no award back, a later outcome is
        refused, and they are pruned after retain_ms like a settled round. Their
        contributions stay on the meters (they were on display, 4.5.1); a void still
        reverses them, at the current position."""
        records: list[RoundRecord] = []
        seen: set[tuple[str, str]] = set()
        for i, (table, round_id) in enumerate(cmd.rounds):
            rnd = self.round(table, round_id)
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
                self.links[rnd.link].open_rounds.pop((rnd.table, rnd.round), None)
            self.done.append((self.now, rnd.table, rnd.round))
            self.expired[rnd.table] = self.expired.get(rnd.table, 0) + 1
            boxes = [b for b in rnd.boxes.values() if not b.voided]
            self.recent_expired.append(
                Expiry(
                    rnd.table,
                    rnd.round,
                    rnd.link,
                    rnd.closed_at,
                    self.now,
                    Money(sum(b.contribution for b in boxes)),
                    Money(sum(b.reserve for b in boxes)),
                )
            )
        return ExpireResult(tuple(records))

    def open_index(self) -> OpenRounds:
        if self._open is None:
            self._open = OpenRounds(self.rounds)
        return self._open

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

    def due_at(self) -> int | None:
        """When the next pending award or reset could become final (server time)."""
        dues = [d for link in self.links.values() if (d := link.due_at(self.timing)) is not None]
        return min(dues) if dues else None

    # -- operators -------------------------------------------------------------------

    def check_change(self, cmd: SetSeed | Correct) -> None:
        """Refuse, changing nothing, a seed or a correction that the meter's bounds forbid
        now (dual control checks a proposal so; applying it checks again)."""
        link = self.link(cmd.link)
        meter = link.meters[self._meter(link, cmd.meter)]
        ceiling = meter.config.ceiling
        if isinstance(cmd, SetSeed):
            # The floor file's bound (app/floor.py): a reset never takes the meter beyond
            # its ceiling, beyond which contributions go to the reserve (API.md).
            if ceiling is not None and cmd.seed > ceiling:
                raise InvalidCommandError(
                    f"seed {format_money(cmd.seed)} is above the meter's ceiling "
                    f"{format_money(ceiling)}",
                    ("seed",),
                )
        elif cmd.kind == "adjust":
            if meter.value + cmd.amount < 0:
                raise InvalidCommandError(
                    "a correction cannot take a meter below zero", ("amount",)
                )
            if ceiling is not None and cmd.amount > 0 and meter.value + cmd.amount > ceiling:
                raise InvalidCommandError(
                    f"the correction would take the meter to "
                    f"{format_money(meter.value + cmd.amount)}, above its ceiling "
                    f"{format_money(ceiling)}",
                    ("amount",),
                )
        elif cmd.kind == "hand_paid" and cmd.amount <= 0:
            raise InvalidCommandError("the amount paid must be above zero", ("amount",))

    def set_seed(self, cmd: SetSeed) -> SeedChange:
        self.check_change(cmd)
        link = self.link(cmd.link)
        meter = link.meters[self._meter(link, cmd.meter)]
        before = meter.next_seed if meter.next_seed is not None else meter.seed
        meter.next_seed = cmd.seed  # takes effect at the meter's next reset (API.md)
        change = SeedChange(link.id, cmd.meter, before, cmd.seed, self.now, cmd.by, cmd.reason)
        self.seed_changes.append(change)
        return change

    def reset_meter(self, cmd: ResetMeter) -> ResetRecord:
        link = self.link(cmd.link)
        index = self._meter(link, cmd.meter)
        reset_id = f"reset/{link.id}/{cmd.meter}/{len(self.resets) + 1}"
        # The reset stands at `now` on the timeline: contributions and wins with an
        # earlier event time still arriving within the hold come before it.
        event = Event(link.timeline.key(self.now, RESET, "", 0), award=reset_id, meter=index)
        record = ResetRecord(reset_id, link.id, cmd.meter, self.now, cmd.by, cmd.reason, event)
        self.resets[reset_id] = record
        link.timeline.push(event)
        return record

    def correct(self, cmd: Correct) -> CorrectionRecord:
        link = self.link(cmd.link)
        meter = link.meters[self._meter(link, cmd.meter)]
        before = meter.value
        self.check_change(cmd)
        if cmd.kind == "adjust":
            meter.correct(cmd.amount)
        elif cmd.kind == "hand_paid":
            meter.pay(cmd.amount, reset=cmd.reset)
            meter.reset_key = max(meter.reset_key, link.timeline.key(self.now, RESET, "", 0))
        elif cmd.kind == "void_round":
            self._void_final(cmd)
        else:
            raise InvalidCommandError(f"unknown correction {cmd.kind!r}", ("kind",))
        record = CorrectionRecord(
            id=f"correction/{len(self.corrections) + 1}",
            kind=cmd.kind,
            link=link.id,
            meter=cmd.meter,
            amount=cmd.amount,
            value_before=before,
            value_after=meter.value,
            at=self.now,
            by=cmd.by,
            reason=cmd.reason,
            table=cmd.table,
            round=cmd.round,
        )
        self.corrections.append(record)
        return record

    def _void_final(self, cmd: Correct) -> None:
        """5.24: void a round whose award is final; its awards stand (they were paid)."""
        if cmd.table is None or cmd.round is None:
            raise InvalidCommandError("void_round needs the table and the round", ("round",))
        rnd = self.round(cmd.table, cmd.round)
        if rnd.state == VOID:
            raise StateConflictError(f"round {cmd.round!r} is already void")
        link = self.links[rnd.link] if rnd.link is not None else None
        for record in rnd.boxes.values():
            if not record.voided and record.contributions and rnd.event is not None and link:
                self._reverse(link, rnd, record.box, cmd.version)
            record.voided = True
        for award_id in rnd.awards:
            award = self.awards[award_id]
            if award.state == PENDING and link is not None:
                self._withhold(link, award, cmd.version)
        for fixed in rnd.fixed:
            fixed.voided = True
        rnd.state, rnd.void_reason = VOID, cmd.reason
        self.done.append((self.now, rnd.table, rnd.round))
        if link is not None:
            link.open_rounds.pop((rnd.table, rnd.round), None)

    def _meter(self, link: Link, meter: str) -> int:
        try:
            return link.meter_index(meter)
        except KeyError:
            raise UnknownError(f"link {link.id!r} has no meter {meter!r}", ("meter",)) from None

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
