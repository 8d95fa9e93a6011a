"""The writer's work per bets event was cut with every byte it records and answers
unchanged. `data/bets_issue21.jsonl` is the journal the code before that work (34ad679)
wrote for the bets below, with a seeded generator and a fixed clock: every game of the
demo floor, accepted, returned and absent wagers, players, Singapore Stud's dealer-hand
wager and draws, the River bet. The writer writes the same rows and answers the same text."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from app.state.timefmt import format_time
from app.store.journal import JournalRow, MemoryJournal
from app.writer.group import Reply, Submission
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, journal_rows, service
from tests.support import table_command

KEPT = Path(__file__).parent / "data" / "bets_issue21.jsonl"


def box(number: int, ante: str, jackpot: str | None = None, **more: str) -> dict[str, Any]:
    return {"box": number, "ante": ante, "jackpot": jackpot, **more}


POSTS: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("T01", "R1", [box(1, "10.00", "1.00"), box(2, "0", "1.00"), box(3, "5.00"),
                   box(4, "25.00", "1.00", player="p1")]),
    ("T02", "R1", [box(7, "10.00", "1.00"), box(1, "10.00", "1.00"), box(3, "10.00", "1.00")]),
    ("T03", "R1", [box(1, "10.00", "1.00", player="p1"), box(2, "10.00", "1.00", player="p1")]),
    ("T04", "R1", [box(1, "10.00", "2.00", jackpot_dealer="1.00"),
                   box(2, "0", jackpot_dealer="1.00"), box(3, "10.00", "3.00")]),
    ("T05", "R1", [box(1, "10.00", "7.50"), box(2, "10.00")]),
    ("T01", "R2", [box(5, "10.00", "1.00")]),
]  # fmt: skip


async def test_issue_21_bets_rows_and_answers_are_byte_for_byte_those_kept() -> None:
    kept = [JournalRow(**json.loads(line)) for line in KEPT.read_text().splitlines()]
    journal = MemoryJournal()
    writer = Writer(service(), journal, WriterSettings(clock=lambda: NOW, rng=random.Random(21)))
    loop = asyncio.get_running_loop()
    answers: list[tuple[int, Reply]] = []
    for table, round_id, boxes in POSTS:
        posted = [{k: v for k, v in b.items() if v is not None} for b in boxes]
        body = table_command("bets", {"closed_at": format_time(NOW - 10), "boxes": posted})
        sub = Submission("bets", table, round_id, body, None, loop.create_future())
        await writer.process([sub])
        answers.append(sub.future.result())
    assert await journal_rows(journal) == kept  # entries, body hashes, answers, chain hashes
    recorded = {row.idem_key: row.answer for row in kept}
    assert answers == [(201, recorded[f"{t}|{r}|bets"]) for t, r, _ in POSTS]
    assert '"draws":{"lucky_box"' in str(recorded["T04|R1|bets"])  # Singapore's draws kept
