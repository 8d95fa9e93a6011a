"""The `past_awards` table (app/store/past_award_book.py): written in the transaction of
the journal rows that carry the awards, read a page at a time in the listing's order with
`GET /v1/awards`'s filters; the memory journal answers the same (docs/design.md, "Past
awards")."""

from __future__ import annotations

import asyncpg
import pytest

from app.state.past_award import PastAward
from app.store.errors import DuplicateEntry
from app.store.journal import Journal, PostgresJournal
from app.store.past_award_book import AwardFilter, PastAwardBook
from tests.integration.app.store.support import row

pytestmark = pytest.mark.integration


def award(
    name: str,
    *,
    table: str = "T03",
    round_id: str = "R1",
    link: str | None = "L1",
    kind: str = "player",
    state: str = "paid",
    box: int = 1,
    dealt_at: int = 1_000,
    sequence: int = 0,
    seq: int = 1,
) -> PastAward:
    """An award named `name` (its id); its row says only its name, so a page read back
    shows which rows came in which order."""
    return PastAward(
        name, link, table, round_id, None, kind, state, box, dealt_at, sequence, 0, seq,
        f'{{"id":"{name}"}}',
    )  # fmt: skip


# Newest dealt first; on equal times the later sequence, then the table, the round and the
# box in code point order, descending ("t02" > "T10": lower case after upper case), then
# the id. Written out by hand in that order.
IN_ORDER = [
    award("a", dealt_at=5_000, state="void"),
    award("b", dealt_at=4_000, sequence=2, table="T01"),
    award("c", dealt_at=4_000, sequence=1, table="t02", link="L2"),
    award("d", dealt_at=4_000, sequence=1, table="T10", round_id="R9", kind="banker"),
    award("e", dealt_at=4_000, sequence=1, table="T10", round_id="R10", box=3),
    award("f", dealt_at=4_000, sequence=1, table="T10", round_id="R10", box=2, state="void"),
    award("h", dealt_at=3_000, link=None),
    award("g", dealt_at=3_000, link=None),
    award("i", dealt_at=2_000, link="L2", state="final"),
]


async def names(journal: Journal, where: AwardFilter, first: int = 100) -> tuple[list[str], int]:
    assert isinstance(journal, PastAwardBook)
    page, total = await journal.past_awards_page(where, first)
    return [a.id for a in page], total


async def test_a_page_in_the_listings_order_with_each_filter(journal: Journal) -> None:
    shuffled = [IN_ORDER[i] for i in (4, 0, 8, 2, 6, 1, 7, 3, 5)]
    await journal.append([row(1, *shuffled[:4]), row(2), row(3, *shuffled[4:])])
    assert await names(journal, AwardFilter()) == (list("abcdefhgi"), 9)
    assert await names(journal, AwardFilter(), first=3) == (list("abc"), 9)  # counts all
    assert await names(journal, AwardFilter(state="void")) == (["a", "f"], 2)
    assert await names(journal, AwardFilter(state="final")) == (["i"], 1)
    assert await names(journal, AwardFilter(table="T10")) == (list("def"), 3)
    assert await names(journal, AwardFilter(link="L2")) == (["c", "i"], 2)
    assert await names(journal, AwardFilter(kind="banker")) == (["d"], 1)
    assert await names(journal, AwardFilter(meter="M1")) == ([], 0)
    # dealt_at in [start, end)
    assert await names(journal, AwardFilter(start=3_000, end=5_000)) == (list("bcdefhg"), 7)
    both = AwardFilter(table="T10", state="paid", start=4_000, end=4_001)
    assert await names(journal, both, first=1) == (["d"], 2)


async def test_an_award_written_twice_is_kept_once(journal: Journal) -> None:
    await journal.append([row(1, IN_ORDER[0])])
    again = award("a", dealt_at=1, state="paid")  # a rebuild never overwrites
    await journal.append([row(2, again)])
    assert isinstance(journal, PastAwardBook)
    page, total = await journal.past_awards_page(AwardFilter(), 10)
    assert (page, total) == ([IN_ORDER[0]], 1)


async def test_a_refused_batch_writes_no_award(journal: Journal) -> None:
    await journal.append([row(1)])
    with pytest.raises(DuplicateEntry):
        await journal.append([row(2, IN_ORDER[0]), row(1, IN_ORDER[1])])
    assert await names(journal, AwardFilter()) == ([], 0)
    assert [r.seq async for r in journal.read(0, 100)] == [1]


async def test_awards_that_cannot_be_written_write_no_journal_row(fresh_dsn: str) -> None:
    journal = await PostgresJournal.connect(fresh_dsn)
    try:
        bad = award("z", table="T\x00")  # PostgreSQL text holds no NUL
        with pytest.raises(asyncpg.PostgresError):
            await journal.append([row(1, IN_ORDER[0]), row(2, bad)])
        assert [r.seq async for r in journal.read(0, 100)] == []
        assert await names(journal, AwardFilter()) == ([], 0)
        await journal.append([row(1, IN_ORDER[0])])  # the journal works on
        assert await names(journal, AwardFilter()) == (["a"], 1)
    finally:
        await journal.close()
