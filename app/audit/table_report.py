"""The report per table and per property over a period (docs/api.md, reports per table).

What the tables' events were (rounds, wagers, fixed awards, expiries) is counted from the
period's entries; what they did to the meters once final comes from the floor's
per-table ledgers (jackpot/table_ledger.py) at the period's two ends, so that their sums
are the reconciliation's to the micro-unit. Computed away from the writer, as the
reconciliation is (app/audit/reconciliation.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from app.audit.reconciliation import UNBOUNDED, Reports, _Replay
from app.state.floor_state import FloorConfig
from app.state.timefmt import format_time
from app.store.journal import Journal
from jackpot.money import format_exact, format_money
from jackpot.table_ledger import TABLE_FLOWS

# Counted from the entries: rounds (bets recorded), wagers accepted and returned, fixed
# awards by group (as the outcome decided them), rounds expired.
EVENTS = ("rounds", "wagers", "wagered", "wagers_returned", "fixed_awards", "fixed_amount",
          "envy_awards", "envy_amount", "draw_awards", "draw_amount", "expired_rounds")  # fmt: skip
COLUMNS = ("table", "property", "link", *EVENTS, *TABLE_FLOWS)
COUNTS = {"rounds", "wagers", "wagers_returned", "fixed_awards", "envy_awards", "draw_awards",
          "expired_rounds", "meter_awards"}  # fmt: skip
GROUPS = {"envy": "envy", "magic_card": "draw", "lucky_player": "draw", "lucky_dealer": "draw"}


class _Tally:
    """The period's entries, per table."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}

    def of(self, table: str) -> Counter[str]:
        return self.counts.setdefault(table, Counter())

    def __call__(self, entry: dict[str, Any]) -> None:
        kind = entry["kind"]
        if kind == "bets":
            c = self.of(entry["table"])
            c["rounds"] += 1
            for d in entry["decisions"]:
                if d["status"] == "returned":
                    c["wagers_returned"] += 1
                for amount in (d["wager"], d["dealer_wager"]):
                    if amount:  # singapore-stud 3.5: player-hand and dealer-hand are two
                        c["wagers"] += 1
                        c["wagered"] += amount
        elif kind == "outcome":
            c = self.of(entry["table"])
            for award in entry["fixed"]:
                group = GROUPS.get(award["kind"], "fixed")
                c[f"{group}_awards"] += 1
                c[f"{group}_amount"] += award["amount"]
        elif kind == "expire":
            for table, _ in entry["rounds"]:
                self.of(table)["expired_rounds"] += 1


def _row(figures: dict[str, int]) -> tuple[dict[str, Any], dict[str, str]]:
    row: dict[str, Any] = {}
    exact: dict[str, str] = {}
    for name, value in figures.items():
        if name in COUNTS:
            row[name] = value
        else:
            row[name], exact[name] = format_money(value), format_exact(value)
    return row, exact


async def table_report(
    journal: Journal,
    config: FloorConfig,
    start: int,
    end: int,
    link: str | None = None,
    upto_seq: int = 2**62,
) -> dict[str, Any]:
    replay = _Replay.at(config, await journal.snapshot_before(start, upto_seq))
    if start > -UNBOUNDED:
        await replay.until(journal, start, upto_seq)
    opening = {t: list(f) for t, f in replay.service.floor.table_flows.items()}
    tally = _Tally()
    # Every entry of the period is counted: no jump to a later snapshot here.
    await replay.until(journal, end, upto_seq, seen=tally)
    closing = replay.service.floor.table_flows
    tables: list[dict[str, Any]] = []
    properties: dict[str | None, Counter[str]] = {}
    for table in config.tables.values():
        if link is not None and table.link != link:
            continue
        before = opening.get(table.id, [0] * len(TABLE_FLOWS))
        after = closing.get(table.id, [0] * len(TABLE_FLOWS))
        counted = tally.of(table.id)
        figures = {name: counted[name] for name in EVENTS}
        figures.update({n: a - b for n, a, b in zip(TABLE_FLOWS, after, before, strict=True)})
        row, exact = _row(figures)
        tables.append({"table": table.id, "property": table.property, "link": table.link,
                       **row, "exact": exact})  # fmt: skip
        rolled = properties.setdefault(table.property, Counter())
        rolled.update(figures)
    rolled_up = []
    for name, sums in properties.items():
        row, exact = _row({n: sums[n] for n in (*EVENTS, *TABLE_FLOWS)})
        count = sum(1 for t in tables if t["property"] == name)
        rolled_up.append({"property": name, "tables": count, **row, "exact": exact})
    return {
        "from": format_time(start) if start > -UNBOUNDED else None,
        "to": format_time(end) if end < UNBOUNDED else None,
        "journal": {"seq": replay.seq, "entries": replay.seq, "head": replay.head},
        "tables": tables,
        "properties": rolled_up,  # per `property` of the floor file (null: none given)
    }


async def table_report_aside(
    reports: Reports, journal: Journal, start: int, end: int, head: int, link: str | None
) -> dict[str, Any]:
    """The report computed away from the writer (the reconciliation's `Reports.aside`)."""
    config = reports.config

    async def compute(own: Journal) -> tuple[dict[str, Any], bool]:
        return await table_report(own, config, start, end, link, head), False

    async with reports.lock:  # one report at a time
        report, _ = await reports.aside(journal, compute)
    return report
