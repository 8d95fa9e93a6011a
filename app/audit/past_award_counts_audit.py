"""`jackpot verify` checks the counts a page's total is summed from (`past_award_counts`,
app/store/past_award_counts.py) against the `past_awards` rows they count: a count that
differs is a discrepancy naming its span and key (docs/design.md, "Past awards")."""

from __future__ import annotations

import dataclasses

from app.audit.findings import Discrepancy, Report
from app.store.journal import JournalSource
from app.store.past_award_counts import PastAwardCounts


async def with_count_check(journal: JournalSource, report: Report) -> Report:
    """The report with the counts that differ from the rows added first (seq 0: they are
    the table's as it stands, not an entry's); a run that finds any prints no checkpoint."""
    if not isinstance(journal, PastAwardCounts):
        return report
    found, differing = await journal.past_award_count_differences()
    if not differing:
        return report
    named = tuple(Discrepancy(0, "past_award_counts", d.what(), d.stored, d.rows) for d in found)
    return dataclasses.replace(
        report,
        discrepancies=(*named, *report.discrepancies),
        discrepancy_count=report.discrepancy_count + differing,
        checkpoint=None,
    )
