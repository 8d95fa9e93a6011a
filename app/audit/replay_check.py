"""The auditor's replay: the journal's hash chain, and every entry re-derived by the rules.

`Verifier` takes journal rows in seq order into a fresh `FloorState` (no snapshot, no clock:
the entries and the floor configuration alone) and checks the chain, the rules and, with
`Settlement`, the money after every entry. Each disagreement is a `Discrepancy`: the
entry, what was recorded, what the rules give. A wrong derived field is replaced by what
the rules give, so that it is named once instead of corrupting every meter after it.
What is checked: docs/architecture.md "The auditor's replay".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from msgspec import structs, to_builtins

from app.audit.checkpoint import Checkpoint
from app.audit.findings import KEEP, Discrepancy, MeterTotals, Report, first_difference
from app.audit.settlement import Settlement
from app.state.commands import OutcomeCommand
from app.state.entries import (
    ApproveEntry,
    BetsEntry,
    ConfigApproveEntry,
    ConfigEntry,
    Decision,
    Drawn,
    Entry,
    ExpireEntry,
    FinalizeEntry,
    OutcomeEntry,
    PaidConfirmEntry,
    PaidEntry,
    StartEntry,
    TablePaidEntry,
    VoidEntry,
    entry_dict,
    entry_from_dict,
    idempotency_key,
)
from app.state.floor_state import FloorConfig, FloorState
from app.state.in_play_state import NotInPlayError, check_in_play_bets
from app.state.kinds import KINDS, prepare_outcome
from app.state.payments import check_payment, claims_of
from app.store.journal import GENESIS, JournalRow, body_sha256, chain_hash
from app.store.snapshots import dump_text, load_service
from jackpot.canonical import UnreadableJson, canonical_json, loads_exact
from jackpot.errors import JackpotError
from jackpot.floor import ExpireResult, FinalizeResult, VoidResult
from jackpot.money import Money
from jackpot.records import FINAL, PENDING, VOID, CorrectionRecord
from tables.bets import BoxBet, TableSettings, check_bets
from tables.cards import DECK
from tables.errors import TablesError

CARDS = frozenset(str(card) for card in DECK)

# A kind's own checks: the core's result (None: refused) and the links it may have changed.
Handler = Callable[[JournalRow, Any], tuple[Any, Iterable[str]]]


class Verifier:
    """Feed it every row in seq order, then ask for the `report`."""

    def __init__(self, config: FloorConfig, *, keep: int = KEEP) -> None:
        self.service = FloorState(config)
        self.keep = keep
        self.seq = 0
        self.head = GENESIS
        self.entries = 0
        self.kinds: Counter[str] = Counter()
        self.discrepancies: list[Discrepancy] = []
        self.discrepancy_count = 0
        self.money = Settlement(self.service, self._flag)
        # Settled rounds are pruned from the state after a while (jackpot/watermark.py): the
        # counts are kept here, as the entries go by.
        self.rounds = self.void_rounds = self.fixed_awards = self.fixed_total = 0
        self.expired_rounds = 0
        self.first_seq = 1
        self.checkpoint: Checkpoint | None = None
        # The checks of the kinds that have their own; the operators' kinds share one.
        self._handlers: dict[type, Handler] = {
            BetsEntry: self._bets,
            OutcomeEntry: self._outcome,
            VoidEntry: self._void,
            FinalizeEntry: self._finalize,
            ExpireEntry: self._expire,
            PaidEntry: self._payment,
            PaidConfirmEntry: self._payment,
            TablePaidEntry: self._payment,
            ConfigEntry: self._config,
            ConfigApproveEntry: self._config,
            StartEntry: self._start,
        }
        self.starts: list[dict[str, Any]] = []  # each start's seq, time, software, parameters

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
        """Check one row: its place in the chain, its entry as written, then its replay."""
        self.entries += 1
        self._check_chain(row)
        entry = self._read_entry(row)
        if entry is None:
            return
        kind = entry.get("kind")
        self.kinds[str(kind)] += 1
        self._check_row_columns(row, entry)
        spec = KINDS.get(str(kind))
        if spec is None:
            self._flag(row, "kind: not an entry kind (docs/journal.md)", kind, None)
            return
        try:
            typed = entry_from_dict(entry, f"seq {row.seq}")
            self._check_key(row, typed)
            checks: Handler = self._handlers.get(type(typed), self._operator)
            result, links = checks(row, typed)
        except (KeyError, TypeError, ValueError, JackpotError, TablesError) as error:
            # EntryError (a ValueError) names the field docs/journal.md does not specify.
            self._flag(row, f"entry: cannot be replayed ({error!r})", entry, None)
            return
        if spec.answer is None:
            if row.answer is not None:
                self._flag(row, f"answer: a {kind} entry answers no one", row.answer, None)
        elif result is not None:
            self._answer(row, spec.answer(self.service, typed, result))
        self.money.check_meters(row, links)

    def _check_chain(self, row: JournalRow) -> None:
        """The row follows the one before: the next seq, and the hash over the previous."""
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

    def _read_entry(self, row: JournalRow) -> dict[str, Any] | None:
        """The row's entry as a JSON object (None: flagged, not replayed), canonical or
        flagged."""
        try:
            entry = loads_exact(row.entry, "entry")
        except UnreadableJson as error:
            self._flag(row, str(error), row.entry, None)
            return None
        if not isinstance(entry, dict):
            self._flag(row, "entry: not a JSON object", entry, None)
            return None
        if canonical_json(entry) != row.entry:
            self._flag(row, "entry: not in canonical form", row.entry, canonical_json(entry))
        return entry

    def _check_row_columns(self, row: JournalRow, entry: dict[str, Any]) -> None:
        """The row's kind and recorded time are the entry's."""
        kind = entry.get("kind")
        if kind != row.kind:
            self._flag(row, "kind: the row's and the entry's differ", row.kind, kind)
        if entry.get("now") != row.recorded_at_ms:
            self._flag(
                row,
                "now: the row's recorded_at and the entry's differ",
                row.recorded_at_ms,
                entry.get("now"),
            )

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

    def _check_key(self, row: JournalRow, entry: Entry) -> None:
        """A round event's idempotency key and the sha256 of its request body (the body
        rebuilt from the entry: it holds the request as posted)."""
        key = body_sha = None
        if isinstance(entry, BetsEntry | OutcomeEntry | VoidEntry | TablePaidEntry):
            key = idempotency_key(entry.table, entry.round, entry.kind)
            body_sha = body_sha256(entry.body())
        if row.idem_key != key:
            self._flag(row, "idem_key: table|round|kind", row.idem_key, key)
        elif key is not None and key in self.service.idem:
            self._flag(row, f"idem_key: a second {entry.kind} of this round", key, None)
        if row.body_sha256 != body_sha:
            self._flag(
                row, "body_sha256: of the request body in the entry", row.body_sha256, body_sha
            )

    # -- a kind's own checks: each returns the core's result and the links it touched --

    def _bets(self, row: JournalRow, entry: BetsEntry) -> tuple[Any, Iterable[str]]:
        settings = self.service.table(entry.table).settings
        decisions = entry.decisions
        try:
            bets = [
                BoxBet(b.box, Money(b.ante), Money(b.jackpot), Money(b.jackpot_dealer), b.player)
                for b in entry.boxes
            ]
            expected = [Decision.of(d) for d in check_bets(settings, bets)]
        except TablesError as error:
            boxes = to_builtins(entry.boxes)
            self._flag(row, f"boxes: the rules refuse these bets ({error})", boxes, None)
        else:
            if expected != decisions:
                self._differ(row, "decisions", to_builtins(decisions), to_builtins(expected))
            decisions = expected
        self._check_draws(row, settings, entry.draws)
        self._check_in_play(row, entry)
        result = self._apply(row, structs.replace(entry, decisions=decisions))
        self.rounds += result is not None
        return result, self._links_of(entry.table)

    def _check_in_play(self, row: JournalRow, entry: BetsEntry) -> None:
        """5.18.2: no jackpot wager was accepted where a suspension was in force."""
        wagers = ((b.box, b.jackpot > 0 or b.jackpot_dealer > 0) for b in entry.boxes)
        try:
            check_in_play_bets(self.service, entry.table, wagers)
        except NotInPlayError as error:
            self._flag(row, f"bets: {error.message}", to_builtins(entry.boxes), None)

    def _check_draws(self, row: JournalRow, settings: TableSettings, draws: Drawn | None) -> None:
        """Draws are random: they cannot be recomputed, only checked to be possible."""
        if not settings.game.draws:
            if draws is not None:
                what = f"draws: {settings.game.id} draws nothing"
                self._flag(row, what, to_builtins(draws), None)
            return
        well_formed = (
            draws is not None
            and draws.magic_card in CARDS  # 4.3: a card of the deck
            and 1 <= draws.lucky_box <= settings.boxes  # 4.4: a box of the table
        )
        if not well_formed:
            self._flag(
                row,
                "draws: a card of the deck, a box of the table, lucky_dealer "
                "true or false (4.3-4.5)",
                to_builtins(draws),
                None,
            )

    def _outcome(self, row: JournalRow, entry: OutcomeEntry) -> tuple[Any, Iterable[str]]:
        table, round_id = entry.table, entry.round
        body = entry.body()
        applied = entry
        try:
            # Re-evaluates every hand from its recorded cards, on the state at this point
            # (the round's accepted wagers, its voided boxes, its draws).
            command = OutcomeCommand(entry.boxes, entry.dealer)
            expected = prepare_outcome(self.service, table, round_id, command, entry.now)
        except (TablesError, JackpotError) as error:
            self._flag(row, f"outcome: the rules refuse it ({error})", body, None)
        else:
            for name in ("claims", "fixed"):
                was, should = getattr(entry, name), getattr(expected, name)
                if was != should:
                    self._differ(row, name, to_builtins(was), to_builtins(should))
            applied = structs.replace(entry, claims=expected.claims, fixed=expected.fixed)
        # The answer as it was given: pending awards without amounts, as at that time.
        result = self._apply(row, applied)
        if result is not None:
            self._count_fixed(table, round_id, 1)
        return result, self._links_of(table)

    def _void(self, row: JournalRow, entry: VoidEntry) -> tuple[Any, Iterable[str]]:
        table, round_id = entry.table, entry.round
        self._count_fixed(table, round_id, -1)
        result = self._apply(row, entry)
        self._count_fixed(table, round_id, 1)
        if isinstance(result, VoidResult):
            self.void_rounds += result.round.state == VOID
            self.money.expect_reversals(row, table, round_id, dict(result.reversed))
        return result, self._links_of(table)

    def _finalize(self, row: JournalRow, entry: FinalizeEntry) -> tuple[Any, Iterable[str]]:
        before = self.money.reversed_totals()
        withheld_before = self.money.withheld_totals()
        result = self._apply(row, entry)
        if isinstance(result, FinalizeResult):
            self.money.check_finalized(row, result.finalized, result.withheld)
            self.money.check_reversed(row, result.reversed, before)
            self.money.check_withheld(row, result.withheld, result.returned, withheld_before)
        return None, self.money.all_links

    def _expire(self, row: JournalRow, entry: ExpireEntry) -> tuple[Any, Iterable[str]]:
        result = self._apply(row, entry)
        if not isinstance(result, ExpireResult):
            return None, ()
        self.expired_rounds += len(result.rounds)
        after = self.service.config.timing.expire_after_ms
        for rnd in result.rounds:
            if entry.now - rnd.received_at <= after:
                self._flag(
                    row,
                    f"expire: round {rnd.table}/{rnd.round} was open only "
                    f"{entry.now - rnd.received_at} ms, not more than expire_after",
                    entry.now - rnd.received_at,
                    after,
                )
        return None, ()

    def _payment(
        self, row: JournalRow, entry: PaidEntry | PaidConfirmEntry | TablePaidEntry
    ) -> tuple[Any, Iterable[str]]:
        """Every payment names a final award, with its amount, once (docs/api.md
        "Payments"); one that does not is named and not counted as paid."""
        self.service.seq = row.seq - 1  # a payment records its entry's seq
        wrong = False
        for award, amount in claims_of(entry):
            try:
                check_payment(self.service, award, amount)
            except JackpotError as error:
                self._flag(row, f"payment: {error}", {"award": award, "amount": amount}, None)
                wrong = True
        if wrong:
            return None, ()
        return self._apply(row, entry), ()

    def _config(self, row: JournalRow, entry: Entry) -> tuple[Any, Iterable[str]]:
        """Parameters put in force: the links and tables checked from here are theirs."""
        result = self._apply(row, entry)
        self.money.follow_config()
        return result, self.money.all_links

    def _start(self, row: JournalRow, entry: Entry) -> tuple[Any, Iterable[str]]:
        """A writer began leading: listed with its software and the parameters in force."""
        assert isinstance(entry, StartEntry)
        in_force = self.service.parameters.sha256
        if entry.params_sha256 != in_force:
            self._flag(row, "start: params_sha256 is not the parameters in force",
                       entry.params_sha256, in_force)  # fmt: skip
        self.starts.append({"seq": row.seq, "at": entry.now, "host": entry.host,
                            "params_sha256": entry.params_sha256, **entry.software})  # fmt: skip
        return self._apply(row, entry), ()

    def _operator(self, row: JournalRow, entry: Entry) -> tuple[Any, Iterable[str]]:
        fields = entry_dict(entry)
        inner = fields.get("change", fields)  # dual control: the change proposed
        if isinstance(entry, ApproveEntry):
            inner = self.service.proposals.get(entry.id, {}).get("change", {})
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
        return result, self.money.all_links

    # -- shared checks -------------------------------------------------------------

    def _apply(self, row: JournalRow, entry: Entry) -> Any:
        try:
            result = self.service.apply(entry)
        except (JackpotError, TablesError) as error:  # refused: the state is unchanged
            what = f"entry: the state at this point refuses it ({error})"
            self._flag(row, what, entry_dict(entry), None)
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
            meter_awards=states[FINAL] + floor.left_awards.get(FINAL, 0),  # paid, left
            pending_awards=states[PENDING],
            fixed_awards=self.fixed_awards,
            fixed_total=self.fixed_total,
            meters=MeterTotals.of_floor(floor),
            discrepancies=tuple(self.discrepancies),
            discrepancy_count=self.discrepancy_count,
            first_seq=self.first_seq,
            checkpoint=self.checkpoint if self.ok else None,
            parameters=self._parameters(),
            starts=tuple(self.starts),
        )

    def _parameters(self) -> dict[str, Any] | None:
        recorded = self.service.parameters
        if recorded.params is None:
            return None
        return {"seq": recorded.seq, "sha256": recorded.sha256, "params": recorded.params}
