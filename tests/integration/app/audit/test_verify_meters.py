"""`jackpot verify` recomputes the regulator's meters and catches an altered one."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from app.audit.findings import format_report
from app.audit.segments import plan_segments
from app.audit.verify_run import verify
from app.store.packing import pack
from jackpot.canonical import canonical_json
from tests.integration.app.audit.test_verify import (
    CONFIG,
    _history_with_snapshots,
    rows_of,
)


async def test_verify_recomputes_the_meters_as_the_entries_count_them() -> None:
    floor = await _history_with_snapshots(steps=600)
    rows = await rows_of(floor.journal)
    # An independent count from the entries: accepted wagers per link from each bets
    # entry's decisions, and the boxes the voids name whose wager was accepted, once each.
    link_of = {t.id: t.link for t in CONFIG.tables.values()}
    wagers: Counter[str] = Counter()
    wagered: Counter[str] = Counter()
    accepted: dict[tuple[str, str, int], tuple[int, int]] = {}  # box -> (wagers, amount)
    voided: dict[tuple[str, str, int], tuple[int, int]] = {}
    for row in rows:
        entry: dict[str, Any] = json.loads(row.entry)
        link = link_of[entry["table"]] if row.kind == "bets" else None
        if link is not None:
            for d in entry["decisions"]:
                for amount in (d["wager"], d["dealer_wager"]):
                    if amount:
                        wagers[link] += 1
                        wagered[link] += amount
                n = (d["wager"] > 0) + (d["dealer_wager"] > 0)
                accepted[(entry["table"], entry["round"], d["box"])] = (
                    n,
                    d["wager"] + d["dealer_wager"],
                )
        if row.kind == "void" or (row.kind == "correct" and entry["correction"] == "void_round"):
            boxes = entry.get("boxes")
            for key, (n, amount) in accepted.items():
                ours = key[:2] == (entry["table"], entry["round"])
                if ours and amount and (boxes is None or key[2] in boxes):
                    voided.setdefault(key, (n, amount))
    report = await verify(floor.journal, CONFIG)
    assert report.ok, format_report(report)
    for m in report.meters:
        assert (m.wagers, m.wagered) == (wagers[m.link], wagered[m.link])
        gone = [w for k, w in voided.items() if link_of[k[0]] == m.link]
        assert m.wagers_voided == sum(n for n, _ in gone)
        assert m.wagered_voided == sum(a for _, a in gone)
    hits = sum(m.hits for m in report.meters)
    assert hits >= report.meter_awards > 0  # and the jackpots paid by hand
    assert "wagers" in format_report(report)


async def test_an_altered_counter_in_a_snapshot_is_caught() -> None:
    floor = await _history_with_snapshots()
    journal = floor.journal
    cut = plan_segments(await journal.snapshot_seqs(), floor.writer.seq, 2)[0]
    stored = await journal.snapshot_at(cut)
    assert stored is not None
    state = json.loads(stored)
    state["floor"]["links"]["stud"]["meters"][0]["hits"] += 1
    journal._snapshots[cut] = (0, pack(canonical_json(state)))
    report = await verify(journal, CONFIG, jobs=2)
    assert not report.ok
    assert (report.discrepancies[0].kind, report.discrepancies[0].seq) == ("snapshot", cut)
    assert "hits" in report.discrepancies[0].what
