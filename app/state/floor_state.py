"""The application state: the jackpot Floor plus what the tables tell us, driven by entries.

Every accepted request becomes one journal entry (a JSON-able dict). `prepare` checks a
request against the rules and the state and builds its entry without changing anything;
`apply` applies an entry. The writer calls both; recovery calls only `apply`, so a
replayed entry never re-derives a result from configuration that may since have changed
(the draws, the accepted wagers and the claims are all in the entry).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jackpot.commands import (
    SEMANTICS,
    BoxWager,
    CloseBets,
    Command,
    Correct,
    Expire,
    Finalize,
    FixedAward,
    MeterClaim,
    RecordOutcome,
    ResetMeter,
    SetSeed,
    VoidRound,
)
from jackpot.config import LinkConfig, Timing
from jackpot.errors import ClockSkewError, OpenRoundsLimitError, StateConflictError, UnknownError
from jackpot.expiry import expired_error
from jackpot.floor import FinalizeResult, Floor, Result
from jackpot.money import Money, format_money
from tables.bets import BetDecision, BoxBet, Draws, RandomSource, TableSettings, check_bets, draw
from tables.cards import parse_card, parse_hand
from tables.hands import BoxHand, DealerHand
from tables.settle import FixedClaim, settle


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
            "draws": None if draws is None else _draws(draws),
        }

    def prepare_outcome(
        self, table: str, round_id: str, body: dict[str, Any], now: int
    ) -> dict[str, Any]:
        config = self.table(table)
        rnd = self.floor.round(table, round_id)
        if rnd.state == "void":
            raise StateConflictError(f"round {round_id!r} is void")
        if rnd.state == "expired":
            raise expired_error(rnd, self.config.timing)
        if rnd.state != "open":
            raise StateConflictError(f"round {round_id!r} already has an outcome")
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
        decisions = [_undecision(d, voided=rnd.boxes[d["box"]].voided) for d in extras.decisions]
        draws = None if extras.draws is None else _undraws(extras.draws)
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
            result: Result = self._change(entry)
            return result
        before = self._before(entry) if kind in OPERATOR_KINDS else None
        command = self.command(entry)
        result = self.floor.apply(command)
        if kind in OPERATOR_KINDS:
            self._audit(entry, before, result)
        if isinstance(result, FinalizeResult):
            for table, round_id in result.pruned:
                self.extras.pop((table, round_id), None)
                for event in ("bets", "outcome", "void"):
                    self.idem.pop(f"{table}|{round_id}|{event}", None)
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

    def command(self, entry: Mapping[str, Any]) -> Command:
        kind, now = entry["kind"], entry["now"]
        if kind == "bets":
            table = self.table(entry["table"])
            # The entry's amounts are Money already (integers in the journal's JSON).
            wagers = tuple(
                [BoxWager(d["box"], d["wager"], d["dealer_wager"]) for d in entry["decisions"]]
            )
            return CloseBets(
                entry["table"], entry["round"], table.link, entry["closed_at"], now, wagers
            )
        if kind == "outcome":
            claims = tuple(
                MeterClaim(c["box"], c["target"], c["hand"], c["share"], c["dealt_at"])
                for c in entry["claims"]
            )
            when = _fixed_dealt_at(entry)
            fixed = tuple(
                FixedAward(
                    f["box"], f["kind"], f["hand"], Money(f["amount"]), f["for_box"], f["target"],
                    when(f),
                )
                for f in entry["fixed"]
            )  # fmt: skip
            return RecordOutcome(
                entry["table"], entry["round"], now, claims, fixed, _version(entry)
            )
        if kind == "void":
            boxes = entry["boxes"]
            return VoidRound(
                entry["table"],
                entry["round"],
                now,
                entry["reason"],
                None if boxes is None else tuple(boxes),
                _version(entry),
            )
        if kind == "finalize":
            return Finalize(now)
        if kind == "expire":
            return Expire(now, tuple((str(t), str(r)) for t, r in entry["rounds"]))
        if kind == "seed":
            return SetSeed(
                entry["link"],
                entry["meter"],
                Money(entry["seed"]),
                now,
                entry["by"],
                entry["reason"],
            )
        if kind == "reset":
            return ResetMeter(entry["link"], entry["meter"], now, entry["by"], entry["reason"])
        if kind == "correct":
            return Correct(
                entry["correction"], entry["link"], entry["meter"], now, entry["by"],
                entry["reason"], Money(entry["amount"]), entry["reset"], entry["table"],
                entry["round"], _version(entry),
            )  # fmt: skip
        raise ValueError(f"unknown entry kind {kind!r}")

    # -- operators: audit log and dual control ------------------------------------------

    def _before(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        link = self.floor.link(entry["link"])
        index = _meter_index(link, entry["meter"])
        meter = link.meters[index]
        return {
            "value": format_money(link.display_values()[index]),
            "seed": format_money(meter.next_seed if meter.next_seed is not None else meter.seed),
        }

    def _audit(
        self, entry: Mapping[str, Any], before: dict[str, Any] | None, result: object
    ) -> None:
        """Who, when, what, before, after, why: every operator action, from the journal."""
        assert before is not None
        link = self.floor.link(entry["link"])
        index = _meter_index(link, entry["meter"])
        after = {
            "value": format_money(link.display_values()[index]),
            "seed": format_money(link.meters[index].next_seed or link.meters[index].seed),
        }
        record: dict[str, Any] = {
            "id": len(self.audit) + 1,
            "at": entry["now"],
            "who": entry["by"],
            "action": entry["kind"]
            if entry["kind"] != "correct"
            else f"correct:{entry['correction']}",
            "link": entry["link"],
            "meter": entry["meter"],
            "before": before,
            "after": after,
            "reason": entry["reason"],
        }
        if entry.get("approved_by"):
            record["approved_by"] = entry["approved_by"]
        if entry["kind"] == "correct":
            record["amount"] = format_money(entry["amount"])
            if entry.get("table"):
                record["round"] = f"{entry['table']}/{entry['round']}"
        self.audit.append(record)

    def _change(self, entry: Mapping[str, Any]) -> Any:
        kind = entry["kind"]
        if kind == "propose":
            change = dict(entry["change"])
            # Checked now (unknown link or meter: 404) so that approving cannot fail on it.
            self._before({**change, "now": entry["now"]})
            pid = f"change-{len(self.proposals) + 1}"
            proposal = {
                "id": pid, "state": "proposed", "change": change, "by": entry["by"],
                "at": entry["now"], "reason": change["reason"],
            }  # fmt: skip
            self.proposals[pid] = proposal
            self.audit.append({
                "id": len(self.audit) + 1, "at": entry["now"], "who": entry["by"],
                "action": f"propose:{change['kind']}", "link": change["link"],
                "meter": change["meter"], "before": None, "after": {"change": pid},
                "reason": change["reason"],
            })  # fmt: skip
            return proposal
        found = self.proposals.get(entry["id"])
        if found is None:
            raise UnknownError(f"no change {entry['id']!r}")
        proposal = found
        if proposal["state"] != "proposed":
            raise StateConflictError(f"change {entry['id']} is already {proposal['state']}")
        if entry["by"] == proposal["by"]:
            raise StateConflictError("dual control: a different supervisor must decide this change")
        if kind == "reject":
            proposal.update(state="rejected", decided_by=entry["by"], decided_at=entry["now"])
            self.audit.append({
                "id": len(self.audit) + 1, "at": entry["now"], "who": entry["by"],
                "action": f"reject:{proposal['change']['kind']}",
                "link": proposal["change"]["link"], "meter": proposal["change"]["meter"],
                "before": {"change": proposal["id"]}, "after": None, "reason": entry["reason"],
            })  # fmt: skip
            return proposal
        inner = {
            **proposal["change"], "now": entry["now"], "by": proposal["by"],
            "approved_by": entry["by"],
        }  # fmt: skip
        result = self.apply(inner)
        proposal.update(state="approved", decided_by=entry["by"], decided_at=entry["now"])
        return result


OPERATOR_KINDS = ("seed", "reset", "correct")


def _version(entry: Mapping[str, Any]) -> int:
    """The rules an outcome, void or correct entry replays by (docs/journal.md, versions):
    absent in entries written before issue 16, which replay as they were applied then."""
    version = entry.get("version", 1)
    if type(version) is not int or not 1 <= version <= SEMANTICS:
        raise ValueError(f"entry version {version!r} is not 1 to {SEMANTICS}")
    return version


def _meter_index(link: Any, meter: str) -> int:
    try:
        return int(link.meter_index(meter))
    except KeyError:
        raise UnknownError(f"link {link.id!r} has no meter {meter!r}", ("meter",)) from None


def _fixed_dealt_at(entry: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], int]:
    """When the hand that won a fixed award was dealt, from the outcome entry: the
    dealer's for a dealer-hand award, the hitting box's for an envy bonus (4.7), else
    the box's own; the entry's server time if the entry has none (it always has)."""
    boxes = {b["box"]: b["dealt_at"] for b in entry["boxes"]}
    dealer = (entry.get("dealer") or {}).get("dealt_at")

    def when(f: Mapping[str, Any]) -> int:
        if f["target"] == "dealer":
            at = dealer
        else:
            at = boxes.get(f["box"] if f["for_box"] is None else f["for_box"])
        return int(entry["now"] if at is None else at)

    return when


def decision_entry(d: BetDecision) -> dict[str, Any]:
    """A bet decision as the journal records it (docs/journal.md, bets)."""
    return {
        "box": d.box,
        "status": d.status,
        "wager": d.wager,
        "dealer_wager": d.dealer_wager,
        "reason": d.reason,
        "ante": d.ante,
        "player": d.player,
    }


def _undecision(d: Mapping[str, Any], *, voided: bool) -> BetDecision:
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d["box"], "none", Money(0), Money(0), "void", Money(0), d["player"])
    return BetDecision(
        d["box"],
        d["status"],
        Money(d["wager"]),
        Money(d["dealer_wager"]),
        d["reason"],
        Money(d["ante"]),
        d["player"],
    )


def _draws(draws: Draws) -> dict[str, Any]:
    return {
        "magic_card": str(draws.magic_card),
        "lucky_box": draws.lucky_box,
        "lucky_dealer": draws.lucky_dealer,
    }


def _undraws(data: Mapping[str, Any]) -> Draws:
    return Draws(parse_card(data["magic_card"]), data["lucky_box"], data["lucky_dealer"])
