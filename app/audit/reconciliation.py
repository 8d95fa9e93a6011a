"""Reports for operators and auditors: reconciliation of every meter over a period.

Read from the journal, the only source of truth for money: every meter's ledger at the
period's start and end, from the last snapshot before each and the entries after it,
opening + flows = closing, exact to the micro-unit (sub-cent contributions are carried).
Computed away from the writer, in a forked process (app/store/aside.py `run_aside`)
with a connection of its own, one at a time, and kept by period and journal head.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from app.audit.payment_report import (
    PAYMENT_COLUMNS,
    meter_payments,
    payment_figures,
    payment_totals,
)
from app.audit.reductions import reductions
from app.audit.spreadsheet_csv import to_csv as to_csv  # the operators' routes' CSV
from app.state.floor_state import FloorConfig, FloorState
from app.state.in_play_state import suspension_periods
from app.state.timefmt import format_time
from app.store.aside import run_aside
from app.store.errors import JournalUnavailable
from app.store.journal import GENESIS, Journal, PostgresJournal, read_only_journal
from app.store.packing import unpack_bytes
from app.store.snapshots import load_service
from jackpot.canonical import loads_exact
from jackpot.floor import Floor
from jackpot.money import format_exact, format_money
from jackpot.reconcile import Ledger, reconcile
from jackpot.snapshot import SnapshotWithoutMeters

log = logging.getLogger("jackpot.reports")

# reversed_*: voided contributions taken back at the void's position; awards_withheld:
# what voided awards took at their place for nobody, awards_returned: what came back of
# it to the meter (docs/design.md, voids).
COLUMNS = (
    "link", "meter", "opening_value", "opening_reserve", "contributions_meter",
    "contributions_reserve", "reversed_meter", "reversed_reserve", "awards",
    "awards_withheld", "awards_returned", "seed_from_reserve", "seed_from_house", "house_cover",
    "reset_to_reserve", "corrections", "closing_value", "closing_reserve", "balanced",
    "overflow", "wagers", "wagered", "wagers_voided", "wagered_voided", "hits",
    "overflow_to_house", "overflow_to_meter", "overflow_from_meter",
    *PAYMENT_COLUMNS,
    "transferred_out", "transferred_in", "transferred_out_reserve", "transferred_in_reserve",
)  # fmt: skip
# The regulator's meters, after `balanced` (the columns before keep their places): money
# but for the counts.
COUNTS = ("wagers", "wagers_voided", "hits")
MONEY = tuple(
    c for c in COLUMNS[2:] if c != "balanced" and c not in COUNTS and c not in PAYMENT_COLUMNS
)
UNBOUNDED = 2**61  # `from`/`to` beyond this are no bound (app/api/reading.py `time_range`)


def _ledgers(service: FloorState) -> dict[tuple[str, str], Ledger]:
    return {
        (link.id, config.id): Ledger.of(meter)
        for link in service.floor.links.values()
        for meter, config in zip(link.meters, link.config.meters, strict=True)
    }


@dataclass(slots=True)
class _Replay:
    """The state after entry `seq`."""

    service: FloorState
    seq: int = 0
    head: str = GENESIS

    @classmethod
    def at(cls, config: FloorConfig, snapshot: tuple[int, bytes] | None) -> _Replay:
        if snapshot is None:
            return cls(FloorState(config))
        seq, packed = snapshot
        state = loads_exact(unpack_bytes(packed, seq), f"snapshot {seq}")
        try:
            return cls(load_service(config, state), state["seq"], state["head"])
        except SnapshotWithoutMeters:  # stored before the meters: from the first entry
            return cls(FloorState(config))

    async def until(
        self,
        journal: Journal,
        before_ms: int,
        upto_seq: int,
        seen: Callable[[dict[str, Any]], None] | None = None,
    ) -> bool:
        """Apply the entries after `seq` recorded before `before_ms`, up to `upto_seq`;
        True if it stopped at one recorded at or after `before_ms` (entries are recorded
        in order: the writer's clock). `seen` is shown each entry applied."""
        async with contextlib.aclosing(journal.read(self.seq)) as rows:  # type: ignore[type-var]
            async for row in rows:
                if row.seq > upto_seq:
                    return False
                if row.recorded_at_ms >= before_ms:
                    return True
                entry = loads_exact(row.entry, f"journal entry {row.seq}")
                self.service.apply(entry)
                if seen is not None:
                    seen(entry)
                self.seq, self.head = row.seq, row.hash
        return False


async def reconciliation(
    journal: Journal, config: FloorConfig, start: int, end: int, upto_seq: int = 2**62
) -> tuple[dict[str, Any], bool]:
    """Entries recorded in [start, end), up to entry `upto_seq`, make the period. The
    report, and whether the period ended before `upto_seq` (no later entry changes it).

    Each ledger comes from the last snapshot recorded before its instant plus the entries
    after it: a report of the last hour reads an hour of journal (and up to a snapshot's
    worth of entries), not all of it."""
    replay = _Replay.at(config, await journal.snapshot_before(start, upto_seq))
    if start > -UNBOUNDED:
        await replay.until(journal, start, upto_seq)
    opening = _ledgers(replay.service)
    opening_floor = sum(replay.service.floor.expired.values())
    closer = await journal.snapshot_before(end, upto_seq)
    if closer is not None and closer[0] > replay.seq:
        replay = _Replay.at(config, closer)
    closed = await replay.until(journal, end, upto_seq)
    closing = _ledgers(replay.service)
    paid = payment_figures(replay.service, start, end)
    meters = []
    for (link, meter), close in closing.items():
        report = reconcile(opening[(link, meter)], close)
        # Money on the wire has two places (docs/api.md); contributions carry sub-cent
        # amounts, so the same figures to the micro-unit are in `exact` (and the CSV),
        # where opening + flows = closing holds to the last digit.
        row: dict[str, Any] = {"link": link, "meter": meter}
        exact: dict[str, str] = {}
        for name in MONEY:
            row[name] = format_money(getattr(report, name))
            exact[name] = format_exact(getattr(report, name))
        row["balanced"] = report.balanced
        for name, amount in meter_payments(paid, link, meter):
            row[name] = format_money(amount)  # awards are whole cents: no `exact`
        row.update({name: getattr(report, name) for name in COUNTS})
        row["exact"] = exact
        meters.append(row)
    answer = {
        "from": format_time(start) if start > -UNBOUNDED else None,
        "to": format_time(end) if end < UNBOUNDED else None,
        # Entries are numbered from 1 with no gap: the entries up to `seq` are `seq`.
        "journal": {"seq": replay.seq, "entries": replay.seq, "head": replay.head},
        "meters": meters,
        # Rounds open longer than expire_after with no outcome or void: their
        # contributions stay on the meters (a void by the table would reverse them).
        "expired_rounds": _expired_rounds(opening_floor, replay.service.floor, start, end),
        # Every award's, fixed ones included: paid in the period, unpaid at its end.
        "payments": payment_totals(paid),
        # Every reset and lowering correction of the period, with its listed reason.
        "reductions": reductions(replay.service.audit, start, end),
        # What was out of play in the period (rules 5.17, 5.18.2), per link and table;
        # `until` null: still suspended at its end.
        "suspensions": suspension_periods(replay.service, start, end),
    }
    return answer, closed


@dataclass
class Reports:
    """The reconciliation, computed away from the writer's event loop, one at a time,
    and kept by (period, journal head); a period that ended before the head is kept for
    any later head too (entries after it do not change it). The writer's loop only forks,
    waits and reads the answer (docs/performance.md, bench/bench_outage.py report)."""

    config: FloorConfig
    keep: int = 32
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    cache: OrderedDict[tuple[int, int, int | None], dict[str, Any]] = field(
        default_factory=OrderedDict
    )
    computed: int = 0  # computations run (tests, metrics)

    async def reconciliation(
        self, journal: Journal, start: int, end: int, head: int
    ) -> dict[str, Any]:
        async with self.lock:  # one at a time; the ones that waited find it kept
            report = self._kept(start, end, head)
            if report is None:
                report, closed = await self._compute(journal, start, end, head)
                self.computed += 1
                self._keep((start, end, None if closed else head), report)
            return report

    def _kept(self, start: int, end: int, head: int) -> dict[str, Any] | None:
        for key in ((start, end, None), (start, end, head)):
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        return None

    def _keep(self, key: tuple[int, int, int | None], report: dict[str, Any]) -> None:
        self.cache[key] = report
        while len(self.cache) > self.keep:
            self.cache.popitem(last=False)

    async def _compute(
        self, journal: Journal, start: int, end: int, head: int
    ) -> tuple[dict[str, Any], bool]:
        config = self.config
        return await self.aside(journal, lambda j: reconciliation(j, config, start, end, head))

    async def aside(
        self, journal: Journal, report: Callable[[Journal], Awaitable[tuple[dict[str, Any], bool]]]
    ) -> tuple[dict[str, Any], bool]:
        """`report` of the journal, computed in a forked child with a connection of its own."""
        dsn = journal.dsn if isinstance(journal, PostgresJournal) else None
        if isinstance(journal, PostgresJournal) and dsn is None:
            # No address to connect from another process (a journal built on a pool
            # alone): computed here, from snapshots all the same.
            return await report(journal)

        async def compute() -> tuple[dict[str, Any], bool]:
            if dsn is None:  # the in-memory journal: the child's copy of it
                return await report(journal)
            async with read_only_journal(dsn) as own:
                return await report(own)

        def work() -> bytes:
            # The forked child: a loop of its own (the parent's is not running here).
            try:
                figures, closed = asyncio.run(compute())
            except (JournalUnavailable, OSError, TimeoutError) as error:
                return orjson.dumps({"unavailable": repr(error)})
            return orjson.dumps({"report": figures, "closed": closed})

        answer = orjson.loads(await run_aside(work))
        if "unavailable" in answer:
            raise JournalUnavailable(f"the report cannot read the journal: {answer['unavailable']}")
        return answer["report"], answer["closed"]


def _expired_rounds(opened: int, floor: Floor, start: int, end: int) -> dict[str, Any]:
    """Rounds the period expired: how many (exact), and the latest of them (a floor
    remembers the last RECENT_EXPIRED expirations in detail)."""
    listed = [
        {
            "table": e.table,
            "round": e.round,
            "link": e.link,
            "closed_at": format_time(e.closed_at),
            "expired_at": format_time(e.expired_at),
            "contribution": format_money(e.contribution),
            "reserve": format_money(e.reserve),
        }
        for e in floor.recent_expired
        if start <= e.expired_at < end
    ]
    return {"count": sum(floor.expired.values()) - opened, "rounds": listed}
