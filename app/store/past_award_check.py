"""The `past_awards` table against the journal's replay: replaying the journal makes the
same awards leave memory at the same entries (app/state/past_awards.py), so the table can
be checked, and rebuilt where rows are missing (written before the table existed, or
deleted by hand). Recovery inserts what is missing and says so loudly, and refuses to lead
on a row that differs; `jackpot verify` names both (docs/design.md, "Past awards"). Having
written rows back, recovery also checks the counts the listing's totals are summed from
(app/store/past_award_counts.py) and makes them again from the rows if they differ."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.state.past_award import PastAward
from app.store.past_award_book import PastAwardBook
from app.store.past_award_counts import PastAwardCounts

log = logging.getLogger("jackpot.writer")

BATCH = 1_000  # awards compared per read of the table


class PastAwardsDiffer(Exception):
    """A `past_awards` row differs from what the journal's replay gives."""


@dataclass(frozen=True, slots=True)
class Finding:
    award: PastAward  # as the replay gives it
    stored: PastAward | None  # the table's row (None: missing)


async def compare(book: PastAwardBook, awards: Sequence[PastAward]) -> list[Finding]:
    """The awards the table lacks or holds otherwise than the replay gives them."""
    stored = await book.past_awards_by_id([a.id for a in awards])
    return [Finding(a, stored.get(a.id)) for a in awards if stored.get(a.id) != a]


@dataclass
class Rebuild:
    """Fed the awards each replayed entry makes leave; writes the missing ones back."""

    book: object
    pending: list[PastAward] = field(default_factory=list)
    restored: int = 0

    async def add(self, awards: Sequence[PastAward]) -> None:
        self.pending += awards
        if len(self.pending) >= BATCH:
            await self.flush()

    async def flush(self) -> None:
        awards, self.pending = self.pending, []
        if not awards or not isinstance(self.book, PastAwardBook):
            return
        findings = await compare(self.book, awards)
        differ = [f for f in findings if f.stored is not None]
        if differ:
            f = differ[0]
            raise PastAwardsDiffer(
                f"past_awards row {f.award.id!r} differs from the journal's replay "
                f"(entry {f.award.seq}): stored {f.stored!r}, replay gives {f.award!r}"
            )
        missing = [f.award for f in findings]
        if missing:
            await self.book.restore_past_awards(missing)
            self.restored += len(missing)
            log.error(
                "past_awards lacked %d awards the journal's replay makes leave memory "
                "(the first: %s, entry %d): written back",
                len(missing),
                missing[0].id,
                missing[0].seq,
            )

    async def finish(self) -> None:
        """The last batch; then, if rows were written back, the counts checked: rows
        missing may have gone without their counts (a trigger disabled by hand)."""
        await self.flush()
        if not self.restored or not isinstance(self.book, PastAwardCounts):
            return
        found, differing = await self.book.past_award_count_differences()
        if differing:
            rows = await self.book.rebuild_past_award_counts()
            log.error(
                "past_award_counts differed from the past_awards rows in %d counts (the "
                "first: %s): made again from the %d rows",
                differing,
                found[0].what(),
                rows,
            )
