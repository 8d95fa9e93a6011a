"""The application state: the jackpot Floor plus what the tables tell us, driven by entries.

Every accepted request becomes one journal entry (a JSON-able dict). `prepare` checks a
request against the rules and the state and builds its entry without changing anything;
`apply` applies an entry. The writer calls both; recovery calls only `apply`, so a
replayed entry never re-derives a result from configuration that may since have changed
(the draws, the accepted wagers and the claims are all in the entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.state.entry_commands import (
    decision_entry,
    draws_entry,
    entry_command,
    entry_decision,
    entry_draws,
)
from app.state.operator_audit import OPERATOR_KINDS, decide_change, meter_before, record_audit
from jackpot.commands import (
    SEMANTICS,
)
from jackpot.config import LinkConfig, Timing
from jackpot.errors import ClockSkewError, OpenRoundsLimitError, UnknownError
from jackpot.floor import FinalizeResult, Floor, Result, check_awaits_outcome
from tables.bets import BoxBet, RandomSource, TableSettings, check_bets, draw
from tables.cards import parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


def idempotency_key(table: str, round_id: str, kind: str) -> str:
    """The `idem_key` of a table's round event: unique in the journal (docs/journal.md)."""
    return f"{table}|{round_id}|{kind}"


@dataclass(frozen=True, slots=True)
class TableConfig:
    id: str
    link: str | None
    settings: TableSettings


@dataclass(frozen=True, slots=True)
class FloorConfig:
    currency: str
    timing: Timing
    links: tuple[LinkConfig, ...]
    tables: Mapping[str, TableConfig]
    # A supervisor's change is only a proposal until a different supervisor approves it.
    dual_control: bool = False
    # Settled rounds stay in memory this long (then the journal answers for them).
    retain_ms: int = 900_000
    # A table may hold this many rounds with bets and no outcome or void; beyond it, its
    # bets are refused (409) until some settle, are void or expire (jackpot/expiry.py).
    max_open_rounds: int = 1_000


@dataclass(slots=True)
class RoundExtras:
    """What the service keeps of a round beyond the core's record: for GET and audits."""

    boxes: list[dict[str, Any]]  # the bets as posted (money in micro-units)
    decisions: list[dict[str, Any]]
    draws: dict[str, Any] | None
    hands: dict[str, Any] | None = None


@dataclass(slots=True)
class Service:
    config: FloorConfig
    floor: Floor = field(init=False)
    extras: dict[tuple[str, str], RoundExtras] = field(default_factory=dict)
    # (table|round|kind) -> sha256 of the body, for the rounds in memory; the journal's
    # unique key answers for older ones.
    idem: dict[str, str] = field(default_factory=dict)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    audit: list[dict[str, Any]] = field(default_factory=list)
    # Meter awards made final by a finalize entry that is applied but not yet committed
    # (the writer applies a group while the one before is being committed): answers and
    # views show them pending until it is, so that no table is told a final amount that a
    # failed commit would take back. Kept by the writer; empty in a rebuilt service.
    uncommitted: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.floor = Floor(self.config.links, self.config.timing, self.config.retain_ms)

    def table(self, table: str) -> TableConfig:
        try:
            return self.config.tables[table]
        except KeyError:
            raise UnknownError(f"no table {table!r}", ("table",)) from None

    # -- prepare: check a request, build its entry; changes nothing --------------------

    def prepare_bets(
        self, table: str, round_id: str, body: dict[str, Any], now: int, rng: RandomSource
    ) -> dict[str, Any]:
        settings = self.table(table).settings
        limit = self.config.max_open_rounds
        if self.floor.open_count(table, at_least=limit) >= limit:
            raise OpenRoundsLimitError(
                f"table {table!r} has {limit} open rounds (bets and no outcome or void), "
                f"the floor's max_open_rounds: post their outcomes or void them (a round "
                f"open longer than {self.config.timing.expire_after_ms} ms expires)"
            )
        # The amounts are Money already (BetsRequest.domain parsed them).
        bets = [
            BoxBet(b["box"], b["ante"], b["jackpot"], b["jackpot_dealer"], b["player"])
            for b in body["boxes"]
        ]
        decisions = check_bets(settings, bets)
        # Singapore Stud's Magic Card, Lucky Player and Lucky Dealer are drawn by the
        # server when bets close (4.3-4.5), from the caller's secure generator.
        draws = draw(settings, rng)
        return {
            "kind": "bets",
            "now": now,
            "table": table,
            "round": round_id,
            "closed_at": body["closed_at"],
            "boxes": body["boxes"],
            "decisions": [decision_entry(d) for d in decisions],
            "draws": None if draws is None else draws_entry(draws),
        }

    def prepare_outcome(
        self, table: str, round_id: str, body: dict[str, Any], now: int
    ) -> dict[str, Any]:
        config = self.table(table)
        rnd = self.floor.round(table, round_id)
        check_awaits_outcome(rnd, self.config.timing)
        extras = self.extras[(table, round_id)]
        self._check_dealt_at(body, max(now, self.floor.now))
        hands = [
            BoxHand(
                h["box"],
                parse_hand(h["cards"], ("boxes", i, "cards")),
                h["folded"],
                h["dealt_at"],
            )
            for i, h in enumerate(body["boxes"])
        ]
        dealer = None
        if body.get("dealer") is not None:
            d = body["dealer"]
            dealer = DealerHand(parse_hand(d["cards"], ("dealer", "cards")), d.get("dealt_at"))
        decisions = [entry_decision(d, voided=rnd.boxes[d["box"]].voided) for d in extras.decisions]
        draws = None if extras.draws is None else entry_draws(extras.draws)
        claims = settle(config.settings, decisions, hands, dealer, draws)
        meter_claims = []
        fixed = []
        for claim in claims:
            if isinstance(claim, FixedClaim):
                fixed.append(
                    {
                        "box": claim.box,
                        "kind": claim.kind,
                        "hand": claim.hand,
                        "amount": claim.amount,
                        "for_box": claim.for_box,
                        "target": claim.target,
                    }
                )
            else:
                meter_claims.append(
                    {
                        "box": claim.box,
                        "target": claim.target,
                        "hand": claim.hand,
                        "share": claim.share,
                        "dealt_at": claim.dealt_at,
                    }
                )
        return {
            "kind": "outcome",
            "version": SEMANTICS,
            "now": now,
            "table": table,
            "round": round_id,
            "boxes": body["boxes"],
            "dealer": body.get("dealer"),
            "claims": meter_claims,
            "fixed": fixed,
        }

    def _check_dealt_at(self, body: dict[str, Any], now: int) -> None:
        """DESIGN.md: a time more than max_clock_skew ahead of the server's clock is
        refused: every box's dealt_at and the dealer's, not only a winning hand's."""
        skew = self.config.timing.max_clock_skew_ms
        dealer = body.get("dealer") or {}
        times: list[tuple[str, tuple[str | int, ...], int | None]] = [
            (f"box {h['box']}", ("boxes", i, "dealt_at"), h["dealt_at"])
            for i, h in enumerate(body["boxes"])
        ]
        times.append(("the dealer", ("dealer", "dealt_at"), dealer.get("dealt_at")))
        for who, loc, dealt_at in times:
            if dealt_at is not None and dealt_at > now + skew:
                raise ClockSkewError(
                    f"{who}: dealt_at is {dealt_at - now} ms ahead of the server's clock "
                    f"(max_clock_skew {skew} ms)",
                    loc,
                )

    def prepare_void(
        self, table: str, round_id: str, body: dict[str, Any], now: int
    ) -> dict[str, Any]:
        self.table(table)
        self.floor.round(table, round_id)
        return {
            "kind": "void",
            "version": SEMANTICS,
            "now": now,
            "table": table,
            "round": round_id,
            "reason": body["reason"],
            "boxes": body.get("boxes"),
        }

    # -- apply: the only way state changes (live and on replay) ------------------------

    def apply(self, entry: Mapping[str, Any]) -> Result:
        """Apply one entry. Atomic: a refused entry (JackpotError) changes nothing."""
        kind = entry["kind"]
        if kind in ("propose", "approve", "reject"):
            result: Result = decide_change(self, entry)
            return result
        before = meter_before(self, entry) if kind in OPERATOR_KINDS else None
        command = entry_command(entry, lambda table: self.table(table).link)
        result = self.floor.apply(command)
        if kind in OPERATOR_KINDS:
            record_audit(self, entry, before, result)
        if isinstance(result, FinalizeResult):
            for table, round_id in result.pruned:
                self.extras.pop((table, round_id), None)
                for event in ("bets", "outcome", "void"):
                    self.idem.pop(idempotency_key(table, round_id, event), None)
        if entry["kind"] == "bets":
            self.extras[(entry["table"], entry["round"])] = RoundExtras(
                boxes=list(entry["boxes"]), decisions=list(entry["decisions"]), draws=entry["draws"]
            )
        elif entry["kind"] == "outcome":
            self.extras[(entry["table"], entry["round"])].hands = {
                "boxes": entry["boxes"],
                "dealer": entry["dealer"],
            }
        return result
