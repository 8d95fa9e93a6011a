"""`jackpot verify` checks every payment: it names a final award, with the award's
amount, once. A payment altered or forged (with the chain rewritten to match, so that
only these checks can tell) is named."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from typing import Any

import httpx

from app.audit.replay_check import Verifier
from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.sealing import DEMO_KEY
from app.store.journal import JournalRow
from jackpot.canonical import canonical_json
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, SUPERVISOR, Clock, bets_body

T03 = {"Authorization": "Bearer demo-table-T03"}
TRIPS = "T03/R1/3/player/fixed"


async def paid_history() -> list[JournalRow]:
    """A Three Card Poker round: three of a kind at box 3 (150 for a 1.00 wager, 4.4),
    a straight flush at box 2 (175) paid at the table, box 3 paid by a supervisor."""
    clock, journal = Clock(), KeptJournal()
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"), (3, "10.00", "1.00"))
        await ok(client.post("/v1/tables/T03/rounds/R1/bets", json=bets, headers=T03))
        hands = [["9S", "KD", "QC"], ["2H", "3H", "4H"], ["5D", "5C", "5H"]]
        outcome = {
            "boxes": [
                {"box": i + 1, "dealt_at": clock.at(10 * i), "cards": cards}
                for i, cards in enumerate(hands)
            ]
        }
        await ok(client.post("/v1/tables/T03/rounds/R1/outcome", json=outcome, headers=T03))
        paid = {"boxes": [2]}
        await ok(client.post("/v1/tables/T03/rounds/R1/paid", json=paid, headers=T03))
        body = {"amount": "150.00", "method": "chips"}
        await ok(client.post(f"/v1/awards/{TRIPS}/paid", json=body, headers=SUPERVISOR))
        assert (await client.get("/v1/awards?state=final", headers=OPERATOR)).json()["total"] == 0
    return [row async for row in journal.read(0)]


async def ok(request: Any) -> None:
    r: httpx.Response = await request
    assert r.is_success, r.text


def verified(rows: list[JournalRow]) -> Verifier:
    verifier = Verifier(floor_config(load_floor(DEMO), DEMO_KEY))
    for row in rows:
        verifier.feed(row)
    return verifier


def rechained(rows: list[JournalRow], seq: int, change: Callable[[dict[str, Any]], Any]) -> None:
    """Change one entry and forge every hash from it on, as an insider would."""
    entry = json.loads(rows[seq - 1].entry)
    change(entry)
    rows[seq - 1] = dataclasses.replace(rows[seq - 1], entry=canonical_json(entry))
    head = rows[seq - 2].hash
    for i in range(seq - 1, len(rows)):
        head = hashlib.sha256((head + rows[i].entry).encode()).hexdigest()
        rows[i] = dataclasses.replace(rows[i], hash=head)


def last(rows: list[JournalRow], kind: str) -> int:
    return max(row.seq for row in rows if row.kind == kind)


async def test_a_journal_with_payments_verifies() -> None:
    rows = await paid_history()
    verifier = verified(rows)
    assert verifier.ok, verifier.discrepancies
    assert verifier.report().kinds["paid"] == verifier.report().kinds["table_paid"] == 1
    assert verifier.service.payments[TRIPS]["seq"] == last(rows, "paid")


async def test_an_altered_amount_is_named() -> None:
    rows = await paid_history()
    seq = last(rows, "paid")
    rechained(rows, seq, lambda e: e.update(amount=e["amount"] * 10))
    verifier = verified(rows)
    assert [(d.seq, d.kind) for d in verifier.discrepancies] == [(seq, "paid")]
    assert "1500.00" in verifier.discrepancies[0].what
    assert "150.00" in verifier.discrepancies[0].what


async def test_a_second_payment_of_an_award_is_named() -> None:
    rows = await paid_history()
    seq = last(rows, "paid")
    # The table's entry made to name box 3's award too, paid by the supervisor after:
    # the table's recorded answer no longer matches it, the supervisor's pays it twice.
    table_seq = last(rows, "table_paid")
    award = {"award": TRIPS, "amount": 150_000_000}
    rechained(rows, table_seq, lambda e: e["awards"].append(award))
    verifier = verified(rows)
    found = [(d.seq, d.kind, d.what.partition(":")[0]) for d in verifier.discrepancies]
    assert found == [(table_seq, "table_paid", "answer.paid"), (seq, "paid", "payment")]
    assert "already paid" in verifier.discrepancies[1].what


async def test_a_payment_of_no_award_is_named() -> None:
    rows = await paid_history()
    seq = last(rows, "table_paid")
    nothing = {"award": "T03/R1/9/player/fixed", "amount": 1}
    rechained(rows, seq, lambda e: e["awards"].__setitem__(0, nothing))
    verifier = verified(rows)
    assert [(d.seq, d.kind) for d in verifier.discrepancies] == [(seq, "table_paid")]
    assert "no award" in verifier.discrepancies[0].what
