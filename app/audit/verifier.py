"""The auditor's replay: the journal's hash chain, and every entry re-derived by the rules.

`Verifier` takes journal rows one at a time, in seq order, into a fresh `Service` (no
snapshot, no clock: nothing but the entries and the floor configuration) and checks:

- the chain: seq gapless from 1, `hash = sha256(previous hash || entry text)`, the entry
  text canonical (docs/journal.md), its kind, time, idempotency key and body hash;
- the rules: bets re-decided from the boxes as posted (3.4, 3.8, 5.4), draws well-formed
  (4.3-4.5), outcomes re-evaluated from the recorded cards (claims and fixed awards),
  every entry applied, its answer rebuilt and compared with the one recorded (and given);
- the money (`Settlement`): after every entry each touched meter's ledger balances
  (contributions in = awards out + meter + reserve - house funding), every final award is
  its share of the meter's value at its instant rounded down to the cent and never above
  it (4.2, 4.5.1), awards are final in event order (4.5.2), and every reset funds exactly
  its seed.

Where a recorded derived field (decisions, claims, fixed awards) disagrees with the
rules, the replay goes on with what the rules give, so that one wrong record is named
once instead of corrupting every meter after it. Every disagreement is a `Discrepancy`:
the entry, what was recorded, what the rules give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from app.audit.checkpoint import Checkpoint
from app.audit.report import KEEP, Discrepancy, MeterTotals, Report, first_difference
from app.audit.settlement import Settlement
from app.state.entry_commands import decision_entry
from app.state.floor_state import FloorConfig, Service
from app.state.operator_views import operator_answer
from app.state.views import bets_answer, outcome_answer, void_answer
from app.store.chain import GENESIS, body_sha256, chain_hash
from app.store.journal import JournalRow
from app.store.snapshots import dump_text, load_service
from jackpot.errors import JackpotError
from jackpot.floor import ExpireResult, FinalizeResult, VoidResult
from jackpot.money import Money
from jackpot.records import FINAL, PENDING, VOID, CorrectionRecord
from jackpot.snapshot import UnreadableJson, canonical_json, loads_exact
from tables.bets import BoxBet, TableSettings, check_bets
from tables.cards import DECK
from tables.errors import TablesError

ROUND_KINDS = ("bets", "outcome", "void")  # a table's round events: keyed, with a body hash
CARDS = frozenset(str(card) for card in DECK)

Handler = Callable[[JournalRow, dict[str, Any]], Iterable[str]]


class Verifier:
    """Feed it every row in seq order, then ask for the `report`."""

    def __init__(self, config: FloorConfig, *, keep: int = KEEP) -> None:
        self.service = Service(config)
        self.keep = keep
        self.seq = 0
        self.head = GENESIS
        self.entries = 0
        self.kinds: Counter[str] = Counter()
        self.discrepancies: list[Discrepancy] = []
        self.discrepancy_count = 0
        self.money = Settlement(self.service, self._flag)
        # Settled rounds are pruned from the state after a while (jackpot/floor.py): the
        # counts are kept here, as the entries go by.
        self.rounds = self.void_rounds = self.fixed_awards = self.fixed_total = 0
        self.expired_rounds = 0
        self.first_seq = 1
        self.checkpoint: Checkpoint | None = None
        operator: Handler = self._operator
        self._handlers: dict[str, Handler] = {
            "bets": self._bets,
            "outcome": self._outcome,
            "void": self._void,
            "finalize": self._finalize,
            "expire": self._expire,
            **{kind: operator for kind in ("seed", "reset", "correct")},
            **{kind: operator for kind in ("propose", "approve", "reject")},
        }

    @classmethod
    def resume(cls, config: FloorConfig, snapshot: str) -> Verifier:
        """A verifier that goes on after a stored snapshot's entry, from the state it
        describes: the verification of the entries before it must arrive at exactly that
        state (`check_snapshot`), which is what makes it trustworthy."""
        verifier = cls(config)
        state = loads_exact(snapshot, "the snapshot")
        verifier.service = load_service(config, state)
        verifier.seq, verifier.head = state["seq"], state["head"]
        verifier.first_seq = verifier.seq + 1
        verifier.money = Settlement(verifier.service, verifier._flag)
        verifier.money.resume()
        return verifier

    def check_snapshot(self, snapshot: str) -> bool:
        """The stored snapshot after this verifier's last entry must be the state its
        replay arrived at, byte for byte (a segment after it started from it)."""
        ours = dump_text(self.service, self.seq, self.head)
        if ours == snapshot:
            return True
        try:
            stored = loads_exact(snapshot, f"the snapshot after seq {self.seq}")
            path, was, should = first_difference(stored, loads_exact(ours, "ours"))
            what = f"after seq {self.seq}{path}: stored, and as the entries give it"
        except UnreadableJson as error:
            was, should, what = snapshot, None, f"unreadable ({error})"
        self.note(Discrepancy(self.seq, "snapshot", what, was, should))
        return False

    # -- one row -------------------------------------------------------------------

    def feed(self, row: JournalRow) -> None:
        self.entries += 1
        if row.seq != self.seq + 1:
            self._flag(row, "seq: the journal is gapless from 1", row.seq, self.seq + 1)
        self.seq = row.seq
        digest = chain_hash(self.head, row.entry)
        if digest != row.hash:
            self._flag(
                row,
                "hash: sha256(previous hash || entry) is not the one recorded",
                row.hash,
                digest,
            )
        # Go on from the recorded hash: a changed entry is named once, not every row after.
        self.head = row.hash
        try:
            entry = loads_exact(row.entry, "entry")
        except UnreadableJson as error:
            self._flag(row, str(error), row.entry, None)
            return
        if not isinstance(entry, dict):
            self._flag(row, "entry: not a JSON object", entry, None)
            return
        if canonical_json(entry) != row.entry:
            self._flag(row, "entry: not in canonical form", row.entry, canonical_json(entry))
        kind = entry.get("kind")
        self.kinds[str(kind)] += 1
        if kind != row.kind:
            self._flag(row, "kind: the row's and the entry's differ", row.kind, kind)
        if entry.get("now") != row.recorded_at_ms:
            self._flag(
                row,
                "now: the row's recorded_at and the entry's differ",
                row.recorded_at_ms,
                entry.get("now"),
            )
        handler = self._handlers.get(str(kind))
        if handler is None:
            self._flag(row, "kind: not an entry kind (docs/journal.md)", kind, None)
            return
        try:
            self._check_key(row, entry)
            links = handler(row, entry)
        except (KeyError, TypeError, ValueError, JackpotError, TablesError) as error:
            self._flag(row, f"entry: cannot be replayed ({error!r})", entry, None)
            return
        self.money.check_meters(row, links)

    @property
    def ok(self) -> bool:
        return self.discrepancy_count == 0

    def _flag(self, row: JournalRow, what: str, recorded: Any, expected: Any) -> None:
        self.note(Discrepancy(row.seq, row.kind, what, recorded, expected))

    def note(self, discrepancy: Discrepancy) -> None:
        """Count it; keep the first `keep`."""
        self.discrepancy_count += 1
        if len(self.discrepancies) < self.keep:
            self.discrepancies.append(discrepancy)

    def _check_key(self, row: JournalRow, entry: dict[str, Any]) -> None:
        """A round event's idempotency key and the sha256 of its request body (the body
        rebuilt from the entry: it holds the request as posted)."""
        kind = entry["kind"]
        key = body_sha = None
        if kind in ROUND_KINDS:
            key = f"{entry['table']}|{entry['round']}|{kind}"
            if kind == "bets":
                body = {"closed_at": entry["closed_at"], "boxes": entry["boxes"]}
            elif kind == "outcome":
                body = {"boxes": entry["boxes"], "dealer": entry["dealer"]}
            else:
                body = {"reason": entry["reason"], "boxes": entry["boxes"]}
            body_sha = body_sha256(body)
        if row.idem_key != key:
            self._flag(row, "idem_key: table|round|kind", row.idem_key, key)
        elif key is not None and key in self.service.idem:
            self._flag(row, f"idem_key: a second {kind} of this round", key, None)
        if row.body_sha256 != body_sha:
            self._flag(
                row, "body_sha256: of the request body in the entry", row.body_sha256, body_sha
            )

    # -- entry kinds: each returns the links whose meters it may have changed --------

    def _bets(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        table, round_id = entry["table"], entry["round"]
        settings = self.service.table(table).settings
        decisions = entry["decisions"]
        try:
            bets = [
                BoxBet(
                    b["box"],
                    Money(b["ante"]),
                    Money(b["jackpot"]),
                    Money(b["jackpot_dealer"]),
                    b["player"],
                )
                for b in entry["boxes"]
            ]
            expected = [decision_entry(d) for d in check_bets(settings, bets)]
        except TablesError as error:
            self._flag(row, f"boxes: the rules refuse these bets ({error})", entry["boxes"], None)
        else:
            if expected != decisions:
                self._differ(row, "decisions", decisions, expected)
            decisions = expected
        self._check_draws(row, settings, entry["draws"])
        if self._apply(row, {**entry, "decisions": decisions}) is not None:
            self.rounds += 1
            self._answer(row, bets_answer(self.service, table, round_id))
        return self._links_of(table)

    def _check_draws(self, row: JournalRow, settings: TableSettings, draws: Any) -> None:
        """Draws are random: they cannot be recomputed, only checked to be possible."""
        if not settings.game.draws:
            if draws is not None:
                self._flag(row, f"draws: {settings.game.id} draws nothing", draws, None)
            return
        well_formed = (
            isinstance(draws, dict)
            and set(draws) == {"magic_card", "lucky_box", "lucky_dealer"}
            and draws["magic_card"] in CARDS  # 4.3: a card of the deck
            and type(draws["lucky_box"]) is int  # 4.4: a box of the table
            and 1 <= draws["lucky_box"] <= settings.boxes
            and type(draws["lucky_dealer"]) is bool  # 4.4.1
        )
        if not well_formed:
            self._flag(
                row,
                "draws: a card of the deck, a box of the table, lucky_dealer "
                "true or false (4.3-4.5)",
                draws,
                None,
            )

    def _outcome(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        table, round_id = entry["table"], entry["round"]
        body = {"boxes": entry["boxes"], "dealer": entry["dealer"]}
        applied = entry
        try:
            # Re-evaluates every hand from its recorded cards, on the state at this point
            # (the round's accepted wagers, its voided boxes, its draws).
            expected = self.service.prepare_outcome(table, round_id, body, entry["now"])
        except (TablesError, JackpotError) as error:
            self._flag(row, f"outcome: the rules refuse it ({error})", body, None)
        else:
            for name in ("claims", "fixed"):
                if expected[name] != entry[name]:
                    self._differ(row, name, entry[name], expected[name])
            applied = {**entry, "claims": expected["claims"], "fixed": expected["fixed"]}
        if self._apply(row, applied) is not None:
            self._count_fixed(table, round_id, 1)
            # The answer as it was given: pending awards without amounts, as at that time.
            self._answer(row, outcome_answer(self.service, table, round_id))
        return self._links_of(table)

    def _void(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        table, round_id = entry["table"], entry["round"]
        self._count_fixed(table, round_id, -1)
        result = self._apply(row, entry)
        self._count_fixed(table, round_id, 1)
        if isinstance(result, VoidResult):
            self.void_rounds += result.round.state == VOID
            self._answer(row, void_answer(self.service, table, round_id, list(result.reversed)))
            self.money.expect_reversals(row, table, round_id, dict(result.reversed))
        return self._links_of(table)

    def _finalize(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        before = self.money.reversed_totals()
        withheld_before = self.money.withheld_totals()
        result = self._apply(row, entry)
        if row.answer is not None:
            self._flag(row, "answer: a finalize entry answers no one", row.answer, None)
        if isinstance(result, FinalizeResult):
            self.money.check_finalized(row, result.finalized, result.withheld)
            self.money.check_reversed(row, result.reversed, before)
            self.money.check_withheld(row, result.withheld, result.returned, withheld_before)
        return self.money.all_links

    def _expire(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        result = self._apply(row, entry)
        if row.answer is not None:
            self._flag(row, "answer: an expire entry answers no one", row.answer, None)
        if not isinstance(result, ExpireResult):
            return ()
        self.expired_rounds += len(result.rounds)
        after = self.service.config.timing.expire_after_ms
        for rnd in result.rounds:
            if entry["now"] - rnd.received_at <= after:
                self._flag(
                    row,
                    f"expire: round {rnd.table}/{rnd.round} was open only "
                    f"{entry['now'] - rnd.received_at} ms, not more than expire_after",
                    entry["now"] - rnd.received_at,
                    after,
                )
        return ()

    def _operator(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        inner = entry.get("change", entry)  # dual control: the change proposed
        if entry["kind"] == "approve":
            inner = self.service.proposals.get(entry["id"], {}).get("change", {})
        table, round_id = inner.get("table"), inner.get("round")
        voids = inner.get("correction") == "void_round" and table and round_id
        if voids:
            self._count_fixed(table, round_id, -1)
        result = self._apply(row, entry)
        if voids:
            self._count_fixed(table, round_id, 1)
            self.void_rounds += isinstance(result, CorrectionRecord)
            if isinstance(result, CorrectionRecord):
                self.money.expect_reversals(row, table, round_id, self._box_totals(table, round_id))
        if result is not None:
            self._answer(row, operator_answer(self.service, entry["kind"], result))
        return self.money.all_links

    # -- shared checks -------------------------------------------------------------

    def _apply(self, row: JournalRow, entry: dict[str, Any]) -> Any:
        try:
            result = self.service.apply(entry)
        except (JackpotError, TablesError) as error:  # refused: the state is unchanged
            self._flag(row, f"entry: the state at this point refuses it ({error})", entry, None)
            return None
        # As the writer does: the idempotency index of the rounds in memory
        # (app/state/floor_state.py).
        if row.idem_key is not None and row.body_sha256 is not None:
            self.service.idem[row.idem_key] = row.body_sha256
        return result

    def _box_totals(self, table: str, round_id: str) -> dict[int, int]:
        """Each box's contribution to the link's meters and reserves, as its bets gave it."""
        rnd = self.service.floor.rounds.get((table, round_id))
        if rnd is None:
            return {}
        return {b.box: b.contribution + b.reserve for b in rnd.boxes.values()}

    def _count_fixed(self, table: str, round_id: str, sign: int) -> None:
        """Add (sign 1) or take back (-1) the round's fixed awards that stand."""
        rnd = self.service.floor.rounds.get((table, round_id))
        if rnd is not None:
            amounts = [f.award.amount for f in rnd.fixed if not f.voided]
            self.fixed_awards += sign * len(amounts)
            self.fixed_total += sign * sum(amounts)

    def _answer(self, row: JournalRow, expected: dict[str, Any]) -> None:
        text = canonical_json(expected)
        if text == row.answer:
            return
        recorded = None if row.answer is None else loads_exact(row.answer, "answer")
        path, was, should = first_difference(recorded, expected)
        self._flag(row, f"answer{path}", was, should)

    def _differ(self, row: JournalRow, name: str, recorded: Any, expected: Any) -> None:
        path, was, should = first_difference(recorded, expected)
        self._flag(row, f"{name}{path}: recorded, and as the rules give it", was, should)

    def _links_of(self, table: str) -> tuple[str, ...]:
        link = self.money.table_link.get(table)
        return () if link is None else (link,)

    # -- the result ----------------------------------------------------------------

    def report(self) -> Report:
        floor = self.service.floor
        states = Counter(a.state for a in floor.awards.values())
        return Report(
            entries=self.entries,
            last_seq=self.seq,
            head=self.head,
            kinds=dict(self.kinds),
            rounds=self.rounds,
            void_rounds=self.void_rounds,
            expired_rounds=self.expired_rounds,
            meter_awards=states[FINAL],
            pending_awards=states[PENDING],
            fixed_awards=self.fixed_awards,
            fixed_total=self.fixed_total,
            meters=MeterTotals.of_floor(floor),
            discrepancies=tuple(self.discrepancies),
            discrepancy_count=self.discrepancy_count,
            first_seq=self.first_seq,
            checkpoint=self.checkpoint if self.ok else None,
        )
