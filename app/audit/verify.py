"""The auditor's replay: the journal's hash chain, and every entry re-derived by the rules.

`Verifier` takes journal rows one at a time, in seq order, into a fresh `Service` (no
snapshot, no clock: nothing but the entries and the floor configuration) and checks:

- the chain: seq gapless from 1, `hash = sha256(previous hash || entry text)`, the entry
  text canonical (docs/journal.md), its kind, time, idempotency key and body hash;
- the rules: bets re-decided from the boxes as posted (3.4, 3.8, 5.4), draws well-formed
  (4.3-4.5), outcomes re-evaluated from the recorded cards (claims and fixed awards),
  every entry applied, its answer rebuilt and compared with the one recorded (and given);
- the money: after every entry each touched meter's ledger balances (contributions in =
  awards out + meter + reserve - house funding), every final award is its share of the
  meter's value at its instant rounded down to the cent and never above it (4.2, 4.5.1),
  awards are final in event order (4.5.2), and every reset funds exactly its seed.

Where a recorded derived field (decisions, claims, fixed awards) disagrees with the
rules, the replay goes on with what the rules give, so that one wrong record is named
once instead of corrupting every meter after it. Every disagreement is a `Discrepancy`:
the entry, what was recorded, what the rules give.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import hashlib
import heapq
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import orjson

from app.config.demo import DEMO_FLOOR
from app.config.floor_file import SHA256_RE
from app.state.floor_state import FloorConfig, Service
from app.state.operator_views import operator_answer
from app.state.views import bets_answer, outcome_answer, void_answer
from app.store.journal import JournalRow, JournalSource, read_only_journal
from app.store.snapshots import dump_text, load_service
from jackpot.errors import JackpotError
from jackpot.floor import ExpireResult, FinalizeResult, VoidResult
from jackpot.meter import Meter
from jackpot.money import CENT, RATE_SCALE, Money, format_exact
from jackpot.records import FINAL, PENDING, VOID, AwardRecord, CorrectionRecord, ResetRecord
from jackpot.snapshot import UnreadableJson, canonical_json, loads_exact
from jackpot.timeline import RETURN, REVERSAL
from tables.bets import BetDecision, BoxBet, TableSettings, check_bets
from tables.cards import DECK
from tables.errors import TablesError

GENESIS = "0" * 64  # the previous hash of entry 1 (docs/journal.md)
ROUND_KINDS = ("bets", "outcome", "void")  # a table's round events: keyed, with a body hash
CARDS = frozenset(str(card) for card in DECK)
ABSENT = "(absent)"
KEEP = 1_000  # discrepancies kept in a report (all are counted)


@dataclass(frozen=True, slots=True)
class Discrepancy:
    seq: int
    kind: str
    what: str
    recorded: Any
    expected: Any  # what the rules (or the chain) give


@dataclass(frozen=True, slots=True)
class MeterTotals:
    link: str
    meter: str
    value: int
    reserve: int
    contributions: int  # to the meter and its reserve, net of voided ones
    awards: int  # paid out of the meter: awards and hand-paid jackpots
    house_funding: int  # first seed, reset shortfalls, reversals no longer held
    corrections: int
    balanced: bool


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a clean run left the journal verified: entry `seq`, its chained hash `head`,
    and the sha256 of the snapshot stored after it, which that run's replay arrived at
    byte for byte. The next run may start there (`jackpot verify --since`) and replay
    only the entries after it: the head commits to every entry up to `seq` (changing
    one changes every hash after it), the sha256 to the state. An auditor keeps the
    line, as they keep the head hash (docs/journal.md, "Checkpoints")."""

    seq: int
    head: str
    snapshot_sha256: str

    def __str__(self) -> str:
        return f"{self.seq}:{self.head}:{self.snapshot_sha256}"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        parts = text.strip().split(":")
        if (
            len(parts) != 3
            or not parts[0].isdigit()
            or int(parts[0]) < 1
            or not all(SHA256_RE.fullmatch(p) for p in parts[1:])
        ):
            raise ValueError(
                f"{text!r} is not a checkpoint: SEQ:HEAD:SNAPSHOT_SHA256 as a clean run of "
                "`jackpot verify` prints it (a seq from 1, two sha256 in lower-case hex)"
            )
        return cls(int(parts[0]), parts[1], parts[2])


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Report:
    entries: int
    last_seq: int
    head: str
    kinds: dict[str, int]
    rounds: int
    void_rounds: int
    meter_awards: int  # final
    pending_awards: int
    fixed_awards: int  # not voided
    fixed_total: int
    meters: tuple[MeterTotals, ...]
    discrepancies: tuple[Discrepancy, ...]  # the first `keep` of them
    discrepancy_count: int
    first_seq: int = 1  # the first entry this run replayed (after a checkpoint: seq + 1)
    checkpoint: Checkpoint | None = None  # where the next run may start (clean runs only)
    expired_rounds: int = 0  # open too long with no outcome (jackpot/expiry.py)

    @property
    def ok(self) -> bool:
        return self.discrepancy_count == 0


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
        self._all_links = tuple(link.id for link in config.links)
        self._table_link = {t.id: t.link for t in config.tables.values()}
        self._sequence = dict.fromkeys(self._all_links, 0)  # meter awards final per link
        self._last_key: dict[str, tuple[int, int, int, str, int, int]] = {}
        # Voided contributions still to leave the meters at the void's position
        # ("table/round/box" -> link, meter + reserve summed over the link's meters).
        self._reversing: dict[str, tuple[str, int]] = {}
        # Voided awards whose RETURN stands on the timeline (checked once, at their void).
        self._returning: set[str] = set()
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
        floor = verifier.service.floor
        for link in floor.links.values():
            verifier._sequence[link.id] = link.sequence
        records: list[AwardRecord | ResetRecord] = [*floor.awards.values()]
        records.extend(floor.resets.values())
        for record in records:
            last = verifier._last_key.get(record.link)
            if record.state == FINAL and (last is None or record.event.key > last):
                verifier._last_key[record.link] = record.event.key
        for link in floor.links.values():
            for _, event in link.timeline.heap:
                if event.kind == REVERSAL and event.award is not None:
                    total = sum(m + r for m, r in event.amounts)
                    verifier._reversing[event.award] = (link.id, total)
                if event.kind == RETURN and event.award is not None:
                    verifier._returning.add(event.award)
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
        digest = hashlib.sha256((self.head + row.entry).encode()).hexdigest()
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
        self._check_meters(row, links)

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
            body_sha = hashlib.sha256(canonical_json(body).encode()).hexdigest()
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
            expected = [_decision(d) for d in check_bets(settings, bets)]
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
            self._expect_reversals(row, table, round_id, dict(result.reversed))
        return self._links_of(table)

    def _expect_reversals(
        self, row: JournalRow, table: str, round_id: str, amounts: dict[int, int]
    ) -> None:
        """A void reverses at the current position (DESIGN.md, voids): each reversal it put
        on the timeline stands at the void's instant and, when final, takes back exactly
        what the void answered for that box."""
        link_id = self._table_link.get(table)
        if link_id is None:
            return
        timeline = self.service.floor.links[link_id].timeline
        prefix = f"{table}/{round_id}/"
        at = max(row.recorded_at_ms, timeline.watermark)
        for _, event in timeline.heap:
            award = event.award
            if event.kind == RETURN and award is not None and award.startswith(prefix):
                # A voided award's amount returns at the void's position too.
                if event.time != at and award not in self._returning:
                    self._flag(row, f"void {award}: returned at the void's instant", event.time, at)
                self._returning.add(award)
            if event.kind != REVERSAL or award is None or not award.startswith(prefix):
                continue
            if award in self._reversing:
                continue
            box = int(award[len(prefix) :])
            self._reversing[award] = (link_id, amounts.get(box, 0))
            if event.time != at:
                self._flag(row, f"void {award}: reversed at the void's instant", event.time, at)

    def _finalize(self, row: JournalRow, entry: dict[str, Any]) -> Iterable[str]:
        before = self._reversed_totals()
        withheld_before = self._withheld_totals()
        result = self._apply(row, entry)
        if row.answer is not None:
            self._flag(row, "answer: a finalize entry answers no one", row.answer, None)
        if isinstance(result, FinalizeResult):
            self._check_finalized(row, result.finalized, result.withheld)
            self._check_reversed(row, result.reversed, before)
            self._check_withheld(row, result.withheld, result.returned, withheld_before)
        return self._all_links

    def _withheld_totals(self) -> dict[str, tuple[int, int]]:
        return {
            link.id: (
                sum(m.awards_withheld for m in link.meters),
                sum(m.awards_returned for m in link.meters),
            )
            for link in self.service.floor.links.values()
        }

    def _check_withheld(
        self,
        row: JournalRow,
        withheld: Iterable[AwardRecord],
        returned: Iterable[str],
        before: dict[str, tuple[int, int]],
    ) -> None:
        """A voided award takes its amount at its place for nobody; what its own reset's
        seed does not use returns to the meter at its void's position, exactly once
        (DESIGN.md, voids)."""
        expected = {link: [0, 0] for link in before}
        for award in withheld:
            if award.state != VOID or award.amount is None:
                self._flag(row, f"award {award.id}: withheld, but not void", award.state, VOID)
                continue
            expected[award.link][0] += award.amount
            expected[award.link][1] += award.amount - _held(award)
        for award_id in returned:
            found = self.service.floor.awards.get(award_id)
            if found is None or found.amount is None or award_id not in self._returning:
                self._flag(row, f"return {award_id}: final, but no void put it there", None, None)
                continue
            self._returning.discard(award_id)
            expected[found.link][1] += _held(found)
        for link, (withheld_total, returned_total) in self._withheld_totals().items():
            got = [withheld_total - before[link][0], returned_total - before[link][1]]
            if got != expected[link]:
                self._flag(
                    row,
                    f"link {link}: voided awards' amounts [withheld, returned] by this finalize",
                    got,
                    expected[link],
                )

    def _reversed_totals(self) -> dict[str, int]:
        return {
            link.id: sum(m.reversed_meter + m.reversed_reserve for m in link.meters)
            for link in self.service.floor.links.values()
        }

    def _check_reversed(self, row: JournalRow, ids: Iterable[str], before: dict[str, int]) -> None:
        """The reversals this finalize made final took back what their voids answered."""
        expected = dict.fromkeys(before, 0)
        for award in ids:
            found = self._reversing.pop(award, None)
            if found is None:
                self._flag(row, f"reversal {award}: final, but no void put it there", None, None)
                continue
            expected[found[0]] += found[1]
        for link, total in self._reversed_totals().items():
            if total - before[link] != expected[link]:
                self._flag(
                    row,
                    f"link {link}: voided contributions reversed by this finalize",
                    total - before[link],
                    expected[link],
                )

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
                self._expect_reversals(row, table, round_id, self._box_totals(table, round_id))
        if result is not None:
            self._answer(row, operator_answer(self.service, entry["kind"], result))
        return self._all_links

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
        link = self._table_link.get(table)
        return () if link is None else (link,)

    def _check_meters(self, row: JournalRow, links: Iterable[str]) -> None:
        """The ledger identity of every meter the entry may have changed (DESIGN.md: money
        is conserved at every instant; a meter never goes negative)."""
        for link_id in links:
            link = self.service.floor.links[link_id]
            for meter in link.meters:
                if not meter.balanced() or meter.value < 0 or meter.reserve < 0:
                    self._flag(
                        row,
                        f"meter {link_id}/{meter.config.id}: [value, reserve] against its flows",
                        [meter.value, meter.reserve],
                        list(by_flows(meter)),
                    )

    def _check_finalized(
        self,
        row: JournalRow,
        records: Iterable[AwardRecord | ResetRecord],
        withheld: Iterable[AwardRecord] = (),
    ) -> None:
        orders: Counter[str] = Counter()
        # Voided awards take their place in event order too, without a number of their own.
        place = {link: i for i, link in enumerate(self._all_links)}  # the floor's link order
        merged = heapq.merge(records, withheld, key=lambda r: (place[r.link], r.event.key))
        for record in merged if withheld else records:
            link, key = record.link, record.event.key
            # 4.5.2: awards (and resets) become final in event order, on every link, ever.
            last = self._last_key.get(link)
            if last is not None and key <= last:
                self._flag(
                    row, f"order: {record.id} final after a later event", list(key), list(last)
                )
            self._last_key[link] = key
            if isinstance(record, ResetRecord):
                self._check_reset(row, record)
                continue
            if record.state == VOID:
                self._check_award(row, record)
                continue
            orders[link] += 1
            self._sequence[link] += 1
            got = [record.order, record.sequence]
            if got != [orders[link], self._sequence[link]]:
                self._flag(
                    row,
                    f"award {record.id}: [order, sequence]",
                    got,
                    [orders[link], self._sequence[link]],
                )
            self._check_award(row, record)

    def _check_award(self, row: JournalRow, award: AwardRecord) -> None:
        value, amount = award.meter_value, award.amount
        if value is None or amount is None:
            self._flag(row, f"award {award.id}: final without value or amount", amount, None)
            return
        # 4.2: the share of the value at its instant, rounded down to the cent (the
        # remainder stays in the meter); never more than the meter holds.
        expected = value * award.share // RATE_SCALE // CENT * CENT
        if amount != expected or not 0 <= amount <= value:
            self._flag(
                row,
                f"award {award.id}: {award.share}/{RATE_SCALE} of the meter's "
                f"value {value} at its instant, in whole cents",
                amount,
                expected,
            )
        f = award.funding
        if f is not None:
            rest = value - amount
            # A 100 % award resets the meter: the remainder counts toward the seed, the
            # reserve and then the house fund the rest; a remainder above the seed stays.
            # A voided award's own amount funds its seed first (DESIGN.md, voids).
            need = max(0, f.seed - rest - (amount if award.state == VOID else 0))
            if (
                f.to_reserve
                or f.from_reserve + f.from_house != need
                or min(f.from_reserve, f.from_house) < 0
            ):
                self._flag(
                    row,
                    f"award {award.id}: reset funding [from_reserve, from_house]",
                    [f.from_reserve, f.from_house],
                    need,
                )

    def _check_reset(self, row: JournalRow, reset: ResetRecord) -> None:
        f, before = reset.funding, reset.value_before
        if f is None or before is None:
            self._flag(row, f"reset {reset.id}: final without funding", None, None)
            return
        # An operator reset: the value goes to the seed; a shortfall comes from the reserve
        # then the house, an excess goes to the reserve.
        if (
            before + f.from_reserve + f.from_house - f.to_reserve != f.seed
            or min(f.from_reserve, f.from_house, f.to_reserve) < 0
        ):
            self._flag(
                row,
                f"reset {reset.id}: value_before + from_reserve + from_house - to_reserve = seed",
                before + f.from_reserve + f.from_house - f.to_reserve,
                f.seed,
            )

    # -- the result ----------------------------------------------------------------

    def report(self) -> Report:
        floor = self.service.floor
        meters = []
        for link in floor.links.values():
            for meter in link.meters:
                meters.append(
                    MeterTotals(
                        link=link.id,
                        meter=meter.config.id,
                        value=meter.value,
                        reserve=meter.reserve,
                        contributions=meter.contributed,
                        awards=meter.awarded,
                        house_funding=meter.house_funded,
                        corrections=meter.corrections,
                        balanced=meter.balanced(),
                    )
                )
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
            meters=tuple(meters),
            discrepancies=tuple(self.discrepancies),
            discrepancy_count=self.discrepancy_count,
            first_seq=self.first_seq,
            checkpoint=self.checkpoint if self.ok else None,
        )


def _held(award: AwardRecord) -> int:
    """What a voided award holds for its void's position: its amount, less what funded
    its own reset's seed (jackpot.meter.Meter.withhold), from its record alone."""
    amount, value, f = award.amount or 0, award.meter_value or 0, award.funding
    if f is None:
        return amount
    return amount - min(amount, max(0, f.seed - (value - amount)))


def _decision(d: BetDecision) -> dict[str, Any]:
    """A decision as the journal records it (docs/journal.md, bets)."""
    return {
        "box": d.box,
        "status": d.status,
        "wager": d.wager,
        "dealer_wager": d.dealer_wager,
        "reason": d.reason,
        "ante": d.ante,
        "player": d.player,
    }


def by_flows(meter: Meter) -> tuple[int, int]:
    """(value, reserve) as the meter's cumulative flows give them (jackpot/meter.py)."""
    value = (
        meter.to_meter
        - meter.reversed_meter
        - meter.awarded
        + meter.reserve_funded
        + meter.house_seed
        + meter.house_cover_meter
        - meter.reset_to_reserve
        + meter.corrections
    )
    reserve = (
        meter.to_reserve
        - meter.reversed_reserve
        - meter.reserve_funded
        + meter.reset_to_reserve
        + meter.house_cover_reserve
    )
    return value, reserve


def first_difference(recorded: Any, expected: Any, path: str = "") -> tuple[str, Any, Any]:
    """Where two JSON values first differ: (path such as '.awards[0].amount', a, b)."""
    if isinstance(recorded, dict) and isinstance(expected, dict):
        for key in sorted(set(recorded) | set(expected)):
            a, b = recorded.get(key, ABSENT), expected.get(key, ABSENT)
            if a != b or type(a) is not type(b):
                return first_difference(a, b, f"{path}.{key}")
    elif isinstance(recorded, list) and isinstance(expected, list):
        for i, (a, b) in enumerate(zip(recorded, expected, strict=False)):
            if a != b or type(a) is not type(b):
                return first_difference(a, b, f"{path}[{i}]")
    return path, recorded, expected


# -- reading a stored journal ---------------------------------------------------------------


class ProgressBar:
    """A textual progress bar on stderr, redrawn at most five times a second."""

    def __init__(self, total: int, out: TextIO, width: int = 30) -> None:
        self.total, self.out, self.width = total, out, width
        self.start = self.shown = time.perf_counter()

    def update(self, done: int, *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.shown < 0.2:
            return
        self.shown = now
        part = done / self.total if self.total else 1.0
        filled = min(self.width, int(self.width * part))
        rate = done / max(now - self.start, 1e-9)
        left = (self.total - done) / rate if rate else 0.0
        bar = "#" * filled + "." * (self.width - filled)
        self.out.write(
            f"\rverifying [{bar}] {part:6.1%}  {done:,}/{self.total:,} entries"
            f"  {rate:,.0f}/s  {left:,.0f} s left "
        )
        self.out.flush()

    def close(self, done: int) -> None:
        self.update(done, force=True)
        self.out.write("\n")
        self.out.flush()


Segment = tuple[int, int, bool, int | None]  # start, stop, ends_on_snapshot, mark


async def verify(
    journal: JournalSource,
    config: FloorConfig,
    *,
    progress: bool,
    out: TextIO | None = None,
    jobs: int = 1,
    dsn: str | None = None,
    since: Checkpoint | None = None,
) -> Report:
    """Replay the journal as it stands now, up to its last entry at the start (the server
    may keep writing meanwhile: what comes after is for the next run).

    With `jobs` > 1 the journal is cut at stored snapshots into segments verified side by
    side (in processes of their own given `dsn`, else one after the other): each segment
    but the first starts from the snapshot at its start, and the segment before it must
    end on exactly that snapshot, so the whole is as strong as one replay from entry 1.

    With `since` (a checkpoint an earlier clean run printed) the replay starts from the
    snapshot there, once the journal is shown to still hold that entry's hash and that
    snapshot's bytes. The latest snapshot the run reaches is checked against its replay
    on the way: a clean run's report carries it as the next checkpoint.
    """
    last = await journal.last()
    end = 0 if last is None else last.seq
    start = 0
    if since is not None:
        refused = await _check_checkpoint(journal, config, since)
        if refused is not None:
            return refused
        start = since.seq
    snapshots = [seq for seq in await journal.snapshot_seqs() if start < seq <= end]
    mark = snapshots[-1] if snapshots else None
    cuts = plan_segments(snapshots, end, jobs, start) if jobs > 1 else []
    segments: list[Segment] = []
    for a, b in zip([start, *cuts], [*cuts, end], strict=True):
        inside = mark is not None and a < mark <= b
        segments.append((a, b, b < end, mark if inside else None))
    bar = ProgressBar(end - start, out or sys.stderr) if progress and end > start else None
    if dsn is not None and len(segments) > 1:
        reports = await _in_processes(dsn, config, segments, jobs, bar)
    else:
        done = 0

        def advance(entries: int) -> None:
            if bar is not None:
                bar.update(done + entries)

        reports = []
        for segment in segments:
            report = await verify_segment(journal, config, *segment, advance=advance)
            reports.append(report)
            done += report.entries
    if bar is not None:
        bar.close(sum(r.entries for r in reports))
    report = merge(reports)
    if since is not None and report.ok and report.checkpoint is None:
        report = dataclasses.replace(report, checkpoint=since)  # no snapshot since: same
    return report


async def _check_checkpoint(
    journal: JournalSource, config: FloorConfig, since: Checkpoint
) -> Report | None:
    """None if the journal still holds the checkpoint's entry, with its hash, and its
    snapshot, byte for byte; else a failed report naming what changed since."""
    verifier = Verifier(config)
    verifier.seq, verifier.head, verifier.first_seq = since.seq, since.head, since.seq + 1
    rows = journal.read(since.seq - 1, batch=1)
    async with contextlib.aclosing(rows):  # type: ignore[type-var]
        row = await anext(rows, None)
    if row is None or row.seq != since.seq:
        what = "checkpoint: its entry is not in the journal"
        verifier.note(Discrepancy(since.seq, "checkpoint", what, None, since.head))
    elif row.hash != since.head:
        what = "hash: not the checkpoint's (an entry up to this one was changed)"
        verifier.note(Discrepancy(since.seq, row.kind, what, row.hash, since.head))
    text = await stored_snapshot(journal, since.seq)
    if text is None:
        what = "checkpoint: its snapshot is not stored"
        verifier.note(Discrepancy(since.seq, "snapshot", what, None, since.snapshot_sha256))
    elif _sha256(text) != since.snapshot_sha256:
        what = "sha256: not the snapshot the checkpoint's run verified"
        verifier.note(
            Discrepancy(since.seq, "snapshot", what, _sha256(text), since.snapshot_sha256)
        )
    return verifier.report() if verifier.discrepancy_count else None


async def stored_snapshot(journal: JournalSource, seq: int) -> str | None:
    """The snapshot stored after entry `seq`; one that cannot even be unpacked comes back
    as its error's text, which is no JSON: the checks name it (unreadable, sha256)."""
    try:
        return await journal.snapshot_at(seq)
    except ValueError as error:
        return f"({error})"


def plan_segments(snapshots: Iterable[int], end: int, jobs: int, start: int = 0) -> list[int]:
    """Up to jobs - 1 snapshot seqs that cut (start, end] into nearly equal segments."""
    seqs = sorted(seq for seq in set(snapshots) if start < seq < end)
    cuts: list[int] = []
    for k in range(1, jobs):
        target = start + (end - start) * k // jobs
        best = min(seqs, key=lambda seq: abs(seq - target), default=None)
        if best is not None and (not cuts or best > cuts[-1]):
            cuts.append(best)
    return cuts


async def verify_segment(
    journal: JournalSource,
    config: FloorConfig,
    start: int,
    stop: int,
    ends_on_snapshot: bool,
    mark: int | None = None,
    advance: Callable[[int], None] | None = None,
) -> Report:
    """Entries start + 1 .. stop: from the empty floor when start is 0, else from the
    snapshot after entry `start`; then, if a segment starts at `stop`, the snapshot there
    is checked against the state reached, and so is the one after entry `mark` (the
    run's latest) when the replay passes it. A snapshot checked clean is the report's
    checkpoint."""
    if start == 0:
        verifier = Verifier(config)
    else:
        snapshot = await stored_snapshot(journal, start)
        try:
            verifier = Verifier.resume(config, snapshot or "")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            # The segment before names the difference too; this one cannot start.
            unread = Verifier(config)
            unread.seq, unread.first_seq = start, start + 1
            what = f"unreadable: no segment can start from it ({error!r})"
            unread.note(Discrepancy(start, "snapshot", what, snapshot, None))
            return unread.report()
    marked = None if mark is None or (mark == stop and ends_on_snapshot) else mark
    mark_text = None if marked is None else await stored_snapshot(journal, marked)

    def reach(text: str | None) -> None:
        if text is None:
            raise ValueError(f"no snapshot after seq {verifier.seq} to check")
        if verifier.check_snapshot(text):
            verifier.checkpoint = Checkpoint(verifier.seq, verifier.head, _sha256(text))

    with without_cyclic_gc():
        if stop > start:
            rows = journal.read(start)
            async with contextlib.aclosing(rows):  # type: ignore[type-var]
                async for row in rows:
                    verifier.feed(row)
                    if advance is not None and not verifier.entries % 2_048:
                        advance(verifier.entries)
                    if row.seq == marked and verifier.ok:
                        # Only for the checkpoint of a clean run: after a discrepancy the
                        # state differs from the writer's, and that was named already.
                        reach(mark_text)
                    if row.seq >= stop:
                        break
        if ends_on_snapshot:
            reach(await stored_snapshot(journal, stop))
    return verifier.report()


def merge(reports: list[Report]) -> Report:
    """One report for consecutive segments: counts add up, the state is the last one's."""
    last = reports[-1]
    kinds: Counter[str] = Counter()
    for report in reports:
        kinds.update(report.kinds)
    found = [d for report in reports for d in report.discrepancies]
    checkpoints = [r.checkpoint for r in reports if r.checkpoint is not None]  # the latest last
    return Report(
        entries=sum(r.entries for r in reports),
        last_seq=last.last_seq,
        head=last.head,
        kinds=dict(kinds),
        rounds=sum(r.rounds for r in reports),
        void_rounds=sum(r.void_rounds for r in reports),
        expired_rounds=sum(r.expired_rounds for r in reports),
        meter_awards=last.meter_awards,
        pending_awards=last.pending_awards,
        fixed_awards=sum(r.fixed_awards for r in reports),
        fixed_total=sum(r.fixed_total for r in reports),
        meters=last.meters,
        discrepancies=tuple(found[:KEEP]),
        discrepancy_count=sum(r.discrepancy_count for r in reports),
        first_seq=reports[0].first_seq,
        checkpoint=checkpoints[-1] if checkpoints and all(r.ok for r in reports) else None,
    )


# Segments in processes of their own: each reads its entries from PostgreSQL itself.
_done: Any = None  # a shared counter of entries verified, in each worker


def _init_worker(counter: Any) -> None:
    global _done
    _done = counter


def _segment_in_process(dsn: str, config: FloorConfig, segment: Segment) -> Report:
    seen = [0]

    def advance(entries: int) -> None:
        with _done.get_lock():
            _done.value += entries - seen[0]
        seen[0] = entries

    async def run() -> Report:
        async with read_only_journal(dsn) as journal:
            return await verify_segment(journal, config, *segment, advance=advance)

    return asyncio.run(run())


async def _in_processes(
    dsn: str,
    config: FloorConfig,
    segments: list[Segment],
    jobs: int,
    bar: ProgressBar | None,
) -> list[Report]:
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # nothing of this process's state
    counter = context.Value("q", 0)
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=(counter,)
    ) as pool:
        futures = [
            asyncio.wrap_future(pool.submit(_segment_in_process, dsn, config, segment))
            for segment in segments
        ]
        waiting = asyncio.gather(*futures)
        while not waiting.done():
            if bar is not None:
                bar.update(counter.value)
            await asyncio.wait([waiting], timeout=0.5)
        return list(await waiting)


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """The replay builds many long-lived objects and almost no garbage cycles (as the
    server's recovery, app/writer/writer.py): the cyclic collector would walk the growing heap
    again and again for nothing."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# -- the command ---------------------------------------------------------------------------


def format_report(report: Report, *, shown: int = 50) -> str:
    lines = []
    after = report.first_seq - 1  # the checkpoint this run started from, if any
    if not report.entries:
        lines.append(f"journal: no entries after seq {after:,}" if after else "journal: empty")
    else:
        lines.append(
            f"journal: {report.entries:,} entries, seq {report.first_seq:,}..{report.last_seq:,}"
        )
        lines.append(f"head hash: {report.head}")
        kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(report.kinds.items()))
        lines.append(f"entries by kind: {kinds}")
    if after:
        lines.append(
            f"from the checkpoint at seq {after:,} (entries up to it verified by an earlier "
            "run): entries, rounds and fixed awards are counted after it; meter awards "
            "and meter totals since the floor began"
        )
    lines.append(
        f"rounds: {report.rounds:,} ({report.void_rounds:,} void, "
        f"{report.expired_rounds:,} expired); meter awards: "
        f"{report.meter_awards:,} final, {report.pending_awards:,} pending; fixed awards: "
        f"{report.fixed_awards:,} totalling {format_exact(report.fixed_total)}"
    )
    for m in report.meters:
        lines.append(
            f"link {m.link} meter {m.meter}: contributions {format_exact(m.contributions)}"
            f"  awards {format_exact(m.awards)}  house funding {format_exact(m.house_funding)}"
            f"  corrections {format_exact(m.corrections)}  value {format_exact(m.value)}"
            f"  reserve {format_exact(m.reserve)}  {'balanced' if m.balanced else 'NOT BALANCED'}"
        )
    if report.ok:
        lines.append("OK: the chain holds and every entry is as the rules give it")
        if report.checkpoint is not None:
            lines.append(
                f"checkpoint: {report.checkpoint}\n"
                f"  (the next run may start there: jackpot verify --since {report.checkpoint})"
            )
        return "\n".join(lines)
    lines.append(f"FAILED: {report.discrepancy_count:,} discrepancies")
    for d in report.discrepancies[:shown]:
        lines.append(f"  seq {d.seq} ({d.kind}): {d.what}")
        lines.append(f"      recorded: {_short(d.recorded)}")
        lines.append(f"      rules:    {_short(d.expected)}")
    if report.discrepancy_count > shown:
        lines.append(f"  ... and {report.discrepancy_count - shown:,} more")
    return "\n".join(lines)


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_config(path: Path | None) -> FloorConfig:
    """The floor file: --config, else JACKPOT_CONFIG, else the demo floor (as `serve`)."""
    from app.config.floor_config import floor_config
    from app.config.floor_file import load_floor
    from app.config.settings import Settings

    config = floor_config(load_floor(path or Settings().config or DEMO_FLOOR))
    return config


def main_verify(args: argparse.Namespace) -> int:
    """`jackpot verify`: 0 when the journal verifies, 1 with discrepancies, 2 on bad input."""
    from app.audit.export import journal_dsn
    from app.config.floor_file import FloorError

    try:
        config = load_config(args.config)
    except FloorError as error:
        print(f"the floor file is not valid:\n{error}", file=sys.stderr)
        return 2
    progress = getattr(args, "progress", None)
    if progress is None:
        progress = sys.stderr.isatty()
    jobs = getattr(args, "jobs", None) or 1
    since = None
    if getattr(args, "since", None):
        try:
            since = Checkpoint.parse(args.since)
        except ValueError as error:
            print(f"--since: {error}", file=sys.stderr)
            return 2

    path = getattr(args, "file", None)
    if path is not None:
        from app.audit.export import ExportFile

        if since is not None:
            print("--since starts from a stored snapshot: not with --file", file=sys.stderr)
            return 2
        try:
            exported = ExportFile(Path(path))
            return _print(asyncio.run(verify(exported, config, progress=progress)))
        except (OSError, ValueError) as error:
            print(f"--file: {error}", file=sys.stderr)
            return 2

    async def run() -> Report:
        async with journal_dsn(args) as dsn, read_only_journal(dsn) as journal:
            return await verify(journal, config, progress=progress, jobs=jobs, dsn=dsn, since=since)

    return _print(asyncio.run(run()))


def _print(report: Report) -> int:
    print(format_report(report))
    return 0 if report.ok else 1
