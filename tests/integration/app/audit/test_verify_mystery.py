"""`jackpot verify` and must-hit-by levels: a journal with hits verifies; an altered
trigger, commitment or reveal is a discrepancy at its entry (docs/design.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from typing import Any

from app.audit.replay_check import Verifier
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.sealing import seal
from app.store.journal import JournalRow
from jackpot.canonical import canonical_json
from tests.integration.app.api.test_mystery_level import FLOOR, KEY, NOTHING, TABLE
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock, bets_body

CONFIG = floor_config(parse_floor(FLOOR), KEY)


async def history() -> list[JournalRow]:
    """Rounds of two 1.00 wagers until the level has been hit twice."""
    clock, journal = Clock(), KeptJournal()
    server = build_server(
        parse_floor(FLOOR), journal=journal, clock=clock, outcome_wait_s=0.2, mystery_key=KEY
    )
    async with running(server.app) as client:
        for n in range(1, 4):
            bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"))
            await client.post(f"/v1/tables/T01/rounds/R{n}/bets", json=bets, headers=TABLE)
            hands = [
                {"box": b, "dealt_at": clock.at(10 * b), "cards": NOTHING[b - 1]} for b in (1, 2)
            ]
            clock.now += 100
            await client.post(
                f"/v1/tables/T01/rounds/R{n}/outcome", json={"boxes": hands}, headers=TABLE
            )
            clock.now += 5_000
            await asyncio.sleep(2.2)  # the writer's timer: finalise, draw again
    return [row async for row in journal.read(0)]


def verify(rows: list[JournalRow]) -> set[int]:
    verifier = Verifier(CONFIG)
    for row in rows:
        verifier.feed(row)
    return {d.seq for d in verifier.report().discrepancies}


def tamper(rows: list[JournalRow], seq: int, change: Any) -> list[JournalRow]:
    """An insider rewrote one entry and every hash after it: only the rules can tell."""
    rows = list(rows)
    i = seq - 1
    entry = json.loads(rows[i].entry)
    change(entry)
    rows[i] = dataclasses.replace(rows[i], entry=canonical_json(entry))
    head = rows[i - 1].hash if i else "0" * 64
    for j in range(i, len(rows)):
        head = hashlib.sha256((head + rows[j].entry).encode()).hexdigest()
        rows[j] = dataclasses.replace(rows[j], hash=head)
    return rows


def arms(rows: list[JournalRow]) -> list[tuple[int, dict[str, Any]]]:
    return [(r.seq, e) for r in rows if (e := json.loads(r.entry))["kind"] == "arm"]


async def test_a_journal_with_hits_verifies_and_an_altered_trigger_or_reveal_does_not() -> None:
    rows = await history()
    drawn = arms(rows)
    assert len(drawn) >= 3 and "revealed" in drawn[1][1]
    assert verify(rows) == set()

    first_seq, first = drawn[0]

    def moved(entry: dict[str, Any]) -> None:
        # Another trigger under the same commitment: it does not open to it.
        entry["sealed"] = seal(KEY, entry["commitment"], "50.01|" + "00" * 16)

    assert first_seq in verify(tamper(rows, first_seq, moved))

    def recommitted(entry: dict[str, Any]) -> None:
        # A consistent commitment for a trigger outside [from, by): the range refuses it.
        text = "50.10|" + "00" * 16
        entry["commitment"] = hashlib.sha256(text.encode()).hexdigest()
        entry["sealed"] = seal(KEY, entry["commitment"], text)

    assert first_seq in verify(tamper(rows, first_seq, recommitted))

    second_seq, second = drawn[1]

    def revealed(entry: dict[str, Any]) -> None:
        trigger, nonce = entry["revealed"].split("|")
        entry["revealed"] = f"{'50.09' if trigger != '50.09' else '50.08'}|{nonce}"

    assert second_seq in verify(tamper(rows, second_seq, revealed))
    assert first["commitment"] != second["commitment"]
