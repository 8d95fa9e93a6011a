"""The floor: every link's meters and timeline, every round, applied one command at a time.

The service's single writer owns one Floor and calls `apply` in journal order; replaying
the same commands gives the same state (see `jackpot.snapshot`). What it holds is
`jackpot.floor_records`; bets and outcomes are applied here, the other commands in
`jackpot.voids`, `jackpot.watermark`, `jackpot.expiry` and `jackpot.operator_changes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from jackpot import expiry, operator_changes, voids, watermark
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
from jackpot.errors import ClockSkewError, InvalidCommandError, StaleRoundError, StateConflictError
from jackpot.expiry import OpenRounds, expired_error
from jackpot.floor_records import RECENT_EXPIRED, FloorRecords
from jackpot.link import Link
from jackpot.money import RATE_SCALE
from jackpot.records import (
    EXPIRED,
    OPEN,
    SETTLED,
    VOID,
    AwardRecord,
    BoxRecord,
    CorrectionRecord,
    FixedRecord,
    ResetRecord,
    RoundRecord,
    SeedChange,
)
from jackpot.results import (
    BetsResult,
    ExpireResult,
    FinalizeResult,
    OutcomeResult,
    Result,
    VoidResult,
)
from jackpot.timeline import CONTRIBUTION, WIN, Event

__all__ = [
    "RECENT_EXPIRED",
    "BetsResult",
    "ExpireResult",
    "FinalizeResult",
    "Floor",
    "check_awaits_outcome",
    "OutcomeResult",
    "Result",
    "VoidResult",
]


def check_awaits_outcome(rnd: RoundRecord, timing: Timing) -> None:
    """Only an open round takes an outcome: not a void, expired or settled one."""
    if rnd.state == VOID:
        raise StateConflictError(f"round {rnd.round!r} is void")
    if rnd.state == EXPIRED:
        raise expired_error(rnd, timing)
    if rnd.state != OPEN:
        raise StateConflictError(f"round {rnd.round!r} already has an outcome")


class Floor(FloorRecords):
    def __init__(
        self, links: Sequence[LinkConfig], timing: Timing, retain_ms: int = 900_000
    ) -> None:
        super().__init__(links, timing, retain_ms)
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
        # Per box total wagered, its per-meter (to_meter, to_reserve) and how many boxes
        # wagered it: a round's boxes mostly wager the same, computed once.
        shares: dict[int, tuple[tuple[tuple[int, int], ...], int]] = {}
        none: tuple[tuple[int, int], ...] = ()
        for w in cmd.wagers:
            box, wager, dealer_wager = w.box, w.wager, w.dealer_wager
            if box in boxes:
                raise InvalidCommandError("a box appears twice", ("boxes",))
            total = wager + dealer_wager
            amounts = none
            if total and rates:
                share = shares.get(total)
                if share is None:
                    # Exact: a whole-cent wager times a four-place rate is whole micro-units.
                    amounts = tuple(
                        [(total * r // RATE_SCALE, total * q // RATE_SCALE) for r, q in rates]
                    )
                    shares[total] = (amounts, 1)
                else:
                    amounts = share[0]
                    shares[total] = (amounts, share[1] + 1)
            boxes[box] = BoxRecord(box, wager, dealer_wager, amounts)
        event = None
        if link is not None and shares:
            # Per meter, the round's (to_meter, to_reserve) summed over its boxes.
            sums = [
                (
                    sum([amounts[i][0] * n for amounts, n in shares.values()]),
                    sum([amounts[i][1] * n for amounts, n in shares.values()]),
                )
                for i in range(len(rates))
            ]
            key = link.timeline.key(effective, CONTRIBUTION, cmd.table, 0)
            event = Event(key, amounts=tuple(sums))
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
        check_awaits_outcome(rnd, timing)
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

    # -- the other commands ----------------------------------------------------------

    def void_round(self, cmd: VoidRound) -> VoidResult:
        return voids.void_round(self, cmd)

    def finalize(self) -> FinalizeResult:
        return watermark.finalize(self)

    def expire(self, cmd: Expire) -> ExpireResult:
        return expiry.expire(self, cmd)

    def set_seed(self, cmd: SetSeed) -> SeedChange:
        return operator_changes.set_seed(self, cmd)

    def reset_meter(self, cmd: ResetMeter) -> ResetRecord:
        return operator_changes.reset_meter(self, cmd)

    def correct(self, cmd: Correct) -> CorrectionRecord:
        return operator_changes.correct(self, cmd)

    # -- open rounds (jackpot/expiry.py) ---------------------------------------------

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
