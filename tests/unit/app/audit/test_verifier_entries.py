"""`jackpot verify` reads every entry as its typed kind (app/state/entries): a field
docs/journal.md does not specify, or one of the wrong type, is a discrepancy naming the
entry, its kind and the field, even in a journal whose hashes were all recomputed; the
replay goes on after it."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.audit.replay_check import Verifier
from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.floor_state import FloorConfig, FloorState
from app.state.sealing import DEMO_KEY
from app.store.journal import JournalRow, MemoryJournal
from app.writer.group import Submission
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from jackpot.canonical import canonical_json
from tests.support import as_command

DEMO = Path(__file__).resolve().parents[4] / "app" / "demo" / "floor.toml"
NOW = 1_800_000_000_000


def config() -> FloorConfig:
    return floor_config(load_floor(DEMO), DEMO_KEY)


async def journal_of_a_round() -> list[JournalRow]:
    """T01's bets, outcome and a finalize, and a seed change: written by the writer."""
    clock = [NOW]
    writer = Writer(FloorState(config()), MemoryJournal(), WriterSettings(clock=lambda: clock[0]))
    loop = asyncio.get_running_loop()
    box = {"box": 1, "ante": 10_000_000, "jackpot": 1_000_000, "jackpot_dealer": 0,
           "player": None}  # fmt: skip
    hand = {"box": 1, "dealt_at": NOW, "cards": ["AS", "KS", "QS", "JS", "9S"], "folded": False}
    seed = {"link": "stud", "meter": "major", "seed": 20_000_000_000, "reason": "promo",
            "version": 3}  # fmt: skip
    for kind, table, body, by in (
        ("bets", "T01", {"closed_at": NOW, "boxes": [box]}, None),
        ("outcome", "T01", {"boxes": [hand], "dealer": None}, None),
        ("seed", None, seed, "sam"),
    ):
        clock[0] += 10_000
        future = loop.create_future()
        command = as_command(kind, body)
        await writer.process([Submission(kind, table, table and "R1", command, by, future)])
        assert (await future)[0] in (200, 201)
    return [row async for row in writer.journal.read(0)]


def tampered(rows: list[JournalRow], kind: str, change: Callable[[Any], None]) -> list[JournalRow]:
    """One entry of `kind` changed, every hash from it on recomputed (an insider who
    rewrote the chain): only reading the entry can tell."""
    rows = list(rows)
    i = next(i for i, row in enumerate(rows) if row.kind == kind)
    entry = json.loads(rows[i].entry)
    change(entry)
    rows[i] = dataclasses.replace(rows[i], entry=canonical_json(entry))
    head = rows[i - 1].hash if i else "0" * 64
    for j in range(i, len(rows)):
        head = hashlib.sha256((head + rows[j].entry).encode()).hexdigest()
        rows[j] = dataclasses.replace(rows[j], hash=head)
    return rows


def verified(rows: list[JournalRow]) -> Verifier:
    verifier = Verifier(config())
    for row in rows:
        verifier.feed(row)
    return verifier


def _tip(entry: dict[str, Any]) -> None:
    entry["tips"] = 5  # not a field of a bets entry: the old replay ignored it


def _seed_text(entry: dict[str, Any]) -> None:
    entry["seed"] = "20000.00"  # money is an integer of micro-units (docs/journal.md)


def _folded(entry: dict[str, Any]) -> None:
    entry["boxes"][0]["folded"] = "no"


@pytest.mark.parametrize(
    ("kind", "change", "what"),
    [
        ("bets", _tip, "(bets): Object contains unknown field `tips`"),
        ("seed", _seed_text, "(seed): Expected `int`, got `str` - at `$.seed`"),
        ("outcome", _folded, "(outcome): Expected `bool`, got `str` - at `$.boxes[0].folded`"),
    ],
)
async def test_a_malformed_entry_is_a_discrepancy_naming_its_seq_kind_and_field(
    kind: str, change: Callable[[Any], None], what: str
) -> None:
    rows = await journal_of_a_round()
    assert verified(rows).ok  # the journal as written verifies clean
    forged = tampered(rows, kind, change)
    seq = next(row.seq for row in forged if row.kind == kind)
    report = verified(forged).report()
    named = [d.what for d in report.discrepancies if d.seq == seq]
    assert any(w.startswith("entry: cannot be replayed") and f"seq {seq} {what}" in w
               for w in named), named  # fmt: skip
    assert report.entries == len(rows)  # the replay went on to the last entry
