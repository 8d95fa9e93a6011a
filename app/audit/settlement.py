"""The money checks of the replay: every meter's ledger, every final award's amount and
reset funding, awards final in event order, and voids' reversals and returns at their
position (4.2, 4.5.1, 4.5.2; docs/design.md, voids)."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from app.state.floor_state import FloorState
from app.store.journal import JournalRow
from jackpot.meter import Meter
from jackpot.money import CENT, RATE_SCALE
from jackpot.records import FINAL, VOID, AwardRecord, ResetRecord
from jackpot.timeline import RETURN, REVERSAL

Flag = Callable[[JournalRow, str, Any, Any], None]  # row, what, recorded, expected


class Settlement:
    """What the replay remembers between entries to check the money as it moves."""

    def __init__(self, service: FloorState, flag: Flag) -> None:
        self.service = service
        self._flag = flag
        config = service.config
        self.all_links = tuple(link.id for link in config.links)
        self.table_link = {t.id: t.link for t in config.tables.values()}
        self._sequence = dict.fromkeys(self.all_links, 0)  # meter awards final per link
        self._last_key: dict[str, tuple[int, int, int, str, int, int]] = {}
        # Voided contributions still to leave the meters at the void's position
        # ("table/round/box" -> link, meter + reserve summed over the link's meters).
        self._reversing: dict[str, tuple[str, int]] = {}
        # Voided awards whose RETURN stands on the timeline (checked once, at their void).
        self._returning: set[str] = set()

    def follow_config(self) -> None:
        """The links and tables of the parameters now in force (a `config` entry)."""
        config = self.service.config
        self.all_links = tuple(link.id for link in config.links)
        self.table_link = {t.id: t.link for t in config.tables.values()}
        for link_id in self.all_links:
            self._sequence.setdefault(link_id, 0)

    def resume(self) -> None:
        """Take up the state of a stored snapshot: what its floor says is final, reversing
        and returning."""
        floor = self.service.floor
        for link in floor.links.values():
            self._sequence[link.id] = link.sequence
        records: list[AwardRecord | ResetRecord] = [*floor.awards.values()]
        records.extend(a for kept in floor.left_hits.values() for a in kept)  # the newest left
        records.extend(floor.resets.values())
        for record in records:
            last = self._last_key.get(record.link)
            if record.state == FINAL and (last is None or record.event.key > last):
                self._last_key[record.link] = record.event.key
        for link in floor.links.values():
            for _, event in link.timeline.heap:
                if event.kind == REVERSAL and event.award is not None:
                    total = sum(m + r for m, r in event.amounts)
                    self._reversing[event.award] = (link.id, total)
                if event.kind == RETURN and event.award is not None:
                    self._returning.add(event.award)

    def expect_reversals(
        self, row: JournalRow, table: str, round_id: str, amounts: dict[int, int]
    ) -> None:
        """A void reverses at the current position (docs/design.md, voids): each reversal it put
        on the timeline stands at the void's instant and, when final, takes back exactly
        what the void answered for that box."""
        link_id = self.table_link.get(table)
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

    def withheld_totals(self) -> dict[str, tuple[int, int]]:
        return {
            link.id: (
                sum(m.awards_withheld for m in link.meters),
                sum(m.awards_returned for m in link.meters),
            )
            for link in self.service.floor.links.values()
        }

    def check_withheld(
        self,
        row: JournalRow,
        withheld: Iterable[AwardRecord],
        returned: Iterable[str],
        before: dict[str, tuple[int, int]],
    ) -> None:
        """A voided award takes its amount at its place for nobody; what its own reset's
        seed does not use returns to the meter at its void's position, exactly once
        (docs/design.md, voids)."""
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
        for link, (withheld_total, returned_total) in self.withheld_totals().items():
            got = [withheld_total - before[link][0], returned_total - before[link][1]]
            if got != expected[link]:
                self._flag(
                    row,
                    f"link {link}: voided awards' amounts [withheld, returned] by this finalize",
                    got,
                    expected[link],
                )

    def reversed_totals(self) -> dict[str, int]:
        return {
            link.id: sum(m.reversed_meter + m.reversed_reserve for m in link.meters)
            for link in self.service.floor.links.values()
        }

    def check_reversed(self, row: JournalRow, ids: Iterable[str], before: dict[str, int]) -> None:
        """The reversals this finalize made final took back what their voids answered."""
        expected = dict.fromkeys(before, 0)
        for award in ids:
            found = self._reversing.pop(award, None)
            if found is None:
                self._flag(row, f"reversal {award}: final, but no void put it there", None, None)
                continue
            expected[found[0]] += found[1]
        for link, total in self.reversed_totals().items():
            if total - before[link] != expected[link]:
                self._flag(
                    row,
                    f"link {link}: voided contributions reversed by this finalize",
                    total - before[link],
                    expected[link],
                )

    def check_meters(self, row: JournalRow, links: Iterable[str]) -> None:
        """The ledger identity of every meter the entry may have changed (docs/design.md: money
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

    def check_finalized(
        self,
        row: JournalRow,
        records: Iterable[AwardRecord | ResetRecord],
        withheld: Iterable[AwardRecord] = (),
    ) -> None:
        orders: Counter[str] = Counter()
        # Voided awards take their place in event order too, without a number of their own.
        place = {link: i for i, link in enumerate(self.all_links)}  # the floor's link order
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
            # A voided award's own amount funds its seed first (docs/design.md, voids).
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


def _held(award: AwardRecord) -> int:
    """What a voided award holds for its void's position: its amount, less what funded
    its own reset's seed (jackpot.meter.Meter.withhold), from its record alone."""
    amount, value, f = award.amount or 0, award.meter_value or 0, award.funding
    if f is None:
        return amount
    return amount - min(amount, max(0, f.seed - (value - amount)))


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
        - meter.transferred_out
        + meter.transferred_in
    )
    reserve = (
        meter.to_reserve
        - meter.reversed_reserve
        - meter.reserve_funded
        + meter.reset_to_reserve
        + meter.house_cover_reserve
        - meter.transferred_out_reserve
        + meter.transferred_in_reserve
    )
    return value, reserve
