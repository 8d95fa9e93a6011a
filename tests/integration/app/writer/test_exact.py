"""Exact at every edge: one money bound (jackpot.money.MAX_MONEY) for
the wire, the floor file and operator changes; every reader of journal and snapshot JSON
exact for every integer (or refusing, the entry named); the largest amounts survive a
restart with the same state and answers, and verify clean."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.audit.export import export_line
from app.audit.verify_run import verify
from app.config.floor_config import floor_config
from app.config.floor_file import FloorError, load_floor, parse_floor
from app.state.sealing import DEMO_KEY
from app.store.journal import GENESIS, Journal, JournalRow, PostgresJournal, chain_hash
from app.writer.writer import Writer
from jackpot.canonical import UnreadableJson, canonical_json, loads_exact
from jackpot.money import MAX_MONEY, MAX_ODDS, SCALE, Money, MoneyError, parse_money
from tests.integration.app.support import KeptJournal, build_server
from tests.support import DEMO, H1, HEADER, Clock, as_command, table, table_command

T05 = {"Authorization": "Bearer demo-table-T05"}
SUPERVISOR = {"Authorization": "Bearer demo-supervisor"}
ROYAL = ["AH", "KH", "QH", "JH", "TH"]
STRAIGHT_FLUSH = ["9S", "8S", "7S", "6S", "5S"]
INT64 = 2**63 - 1


Opener = Callable[[], Awaitable[Journal]]


@pytest.fixture(params=["memory", "postgres"])
def opener(request: pytest.FixtureRequest) -> Opener:
    """Opens the same journal for each server start (the server closes it when it stops):
    kept in memory, or a real PostgreSQL database (entries as TEXT: docs/journal.md)."""
    if request.param == "memory":
        kept = KeptJournal()

        async def same() -> Journal:
            return kept

        return same
    dsn = request.getfixturevalue("fresh_dsn")

    async def connect() -> Journal:
        return await PostgresJournal.connect(dsn)

    return connect


@asynccontextmanager
async def serving(
    journal: Journal, clock: Clock, snapshot_every: int = 20_000
) -> AsyncIterator[tuple[httpx.AsyncClient, Writer]]:
    server = build_server(
        journal=journal, clock=clock, outcome_wait_s=0.2, snapshot_every=snapshot_every
    )
    app, writer = server.app, server.writer
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        yield c, writer


async def rows(journal: Journal) -> list[JournalRow]:
    return [row async for row in journal.read(0)]


@asynccontextmanager
async def reopened(open_journal: Opener) -> AsyncIterator[Journal]:
    journal = await open_journal()
    try:
        yield journal
    finally:
        await journal.close()


async def journal_rows(open_journal: Opener) -> list[JournalRow]:
    async with reopened(open_journal) as journal:
        return await rows(journal)


async def verify_clean(open_journal: Opener) -> None:
    config = floor_config(load_floor(DEMO), DEMO_KEY)
    async with reopened(open_journal) as journal:
        report = await verify(journal, config)
        assert report.ok, report.discrepancies


# -- the bound -----------------------------------------------------------------------


def test_the_bound_keeps_every_derived_amount_within_64_bits_and_itself_within_a_double() -> None:
    assert MAX_MONEY == 999_999_999_990_000  # "999999999.99", in micro-units
    assert MAX_MONEY < 2**53  # a float64 reader (JavaScript, jq) holds any amount sent exactly
    assert 25 * MAX_MONEY <= INT64 // 300  # the River bet's royal flush (western stud)
    assert MAX_ODDS * MAX_MONEY <= INT64 // 9  # the largest "N to 1" a pay table may set
    assert 500 * MAX_MONEY <= INT64  # singapore stud 4.2: four of a kind 500 to 1
    # A meter's lifetime totals: 3.7e9 wagers a year (1,000 tables x 7 boxes x 60 rounds
    # an hour) at an average 10 units stay within 64 bits for more than 200 years.
    assert 200 * 3_700_000_000 * 10 * SCALE <= INT64


def test_parse_money_accepts_the_bound_and_refuses_a_cent_more_naming_it() -> None:
    assert parse_money("999999999.99") == MAX_MONEY
    with pytest.raises(MoneyError, match=r"1000000000\.00 is more than 999999999\.99"):
        parse_money("1000000000.00")
    with pytest.raises(MoneyError, match="999999999.99"):
        parse_money("999999999999999.99")


@pytest.mark.parametrize(
    ("table", "box", "field"),
    [
        ("T05", {"ante": "1000000000.00", "jackpot": "1.00"}, "ante"),
        ("T05", {"ante": "999999999999999.99", "jackpot": "1.00"}, "ante"),
        ("T04", {"ante": "10.00", "jackpot": "1000000000.00"}, "jackpot"),
        (
            "T04",
            {"ante": "10.00", "jackpot": "1.00", "jackpot_dealer": "1000000000"},
            "jackpot_dealer",
        ),
    ],
)
async def test_bets_beyond_the_bound_are_422_naming_the_field_and_the_bound(
    table: str, box: dict[str, str], field: str
) -> None:
    journal, clock = KeptJournal(), Clock()
    headers = {"Authorization": f"Bearer demo-table-{table}"}
    async with serving(journal, clock) as (client, _):
        body = {"closed_at": clock.at(), "boxes": [{"box": 1, **box}]}
        r = await client.post(f"/v1/tables/{table}/rounds/R1/bets", json=body, headers=headers)
        assert r.status_code == 422, r.text
        assert r.headers["content-type"] == "application/problem+json"
        [error] = r.json()["errors"]
        assert error["loc"] == ["body", "boxes", 0, field]
        assert "999999999.99" in error["msg"] and "largest" in error["msg"]
        r = await client.get(f"/v1/tables/{table}/rounds/R1", headers=headers)
        assert r.status_code == 404
    # The start's only: the parameters and the must-hit-by level's first draw.
    assert [row.kind for row in await rows(journal)] == ["config", "arm"]


async def test_operator_changes_beyond_the_bound_are_422_and_change_nothing() -> None:
    journal, clock = KeptJournal(), Clock()
    async with serving(journal, clock) as (client, _):
        url = "/v1/links/stud/meters/major"
        r = await client.put(
            f"{url}/seed", json={"seed": "1000000000.00", "reason": "r"}, headers=SUPERVISOR
        )
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["loc"] == ["body", "seed"]
        assert "999999999.99" in r.json()["errors"][0]["msg"]
        for amount in ("1000000000.00", "-1000000000.00"):
            body = {"kind": "adjust", "amount": amount, "reason": "r"}
            r = await client.post(f"{url}/corrections", json=body, headers=SUPERVISOR)
            assert r.status_code == 422, r.text
            assert r.json()["errors"][0]["loc"] == ["body", "amount"]
        # The bound itself is accepted (on a meter with no ceiling: tcp's).
        r = await client.put(
            "/v1/links/tcp/meters/major/seed",
            json={"seed": "999999999.99", "reason": "r"},
            headers=SUPERVISOR,
        )
        assert r.status_code == 200, r.text
    assert [row.kind for row in await rows(journal)] == ["config", "arm", "seed"]


def test_the_floor_file_refuses_money_beyond_the_bound_and_odds_beyond_max_odds() -> None:
    big_seed = HEADER.replace('seed = "10000.00"', 'seed = "1000000000.00"')
    with pytest.raises(FloorError) as caught:
        parse_floor(big_seed + table("T01", token=H1))
    assert any("seed" in p and "999999999.99" in p for p in caught.value.problems)
    wager = table("T01", token=H1, jackpot_wager='"1000000000.00"')
    with pytest.raises(FloorError) as caught:
        parse_floor(HEADER + wager)
    assert any("jackpot_wager" in p and "999999999.99" in p for p in caught.value.problems)
    odds = table("T01", token=H1, game='"western_stud"', link="-", jackpot_wager="-")
    odds += 'pay_table = {royal_flush = "1001"}\n'
    with pytest.raises(FloorError) as caught:
        parse_floor(HEADER + odds)
    assert any("royal_flush" in p and f"at most {MAX_ODDS}" in p for p in caught.value.problems)
    parse_floor(HEADER + odds.replace('"1001"', '"1000"'))  # the bound itself is accepted


# -- the largest amounts survive a restart -------------------------------------------


@pytest.mark.parametrize("snapshot_every", [20_000, 2], ids=["journal", "snapshot"])
async def test_the_largest_amounts_survive_a_restart_with_the_same_state_and_answers(
    snapshot_every: int, opener: Opener
) -> None:
    """Bets of the largest amount at a western_stud table, a royal flush (25 to
    1) and a straight flush (15 to 1) on them; then a restart (from the journal alone, or
    from a snapshot) answers the round and every retry as before."""
    clock = Clock()
    bets = {
        "closed_at": clock.at(),
        "boxes": [
            {"box": 1, "ante": "999999999.99", "jackpot": "999999999.99"},
            {"box": 2, "ante": "999999999.99", "jackpot": "999999999.98"},
        ],
    }
    outcome = {
        "boxes": [
            {"box": 1, "dealt_at": clock.at(5), "cards": ROYAL},
            {"box": 2, "dealt_at": clock.at(6), "cards": STRAIGHT_FLUSH},
        ]
    }
    url = "/v1/tables/T05/rounds/BIG"
    async with serving(await opener(), clock, snapshot_every) as (client, _):
        first_bets = await client.post(f"{url}/bets", json=bets, headers=T05)
        assert first_bets.status_code == 200, first_bets.text
        first_outcome = await client.post(f"{url}/outcome", json=outcome, headers=T05)
        assert first_outcome.status_code == 200, first_outcome.text
        amounts = {a["box"]: a["amount"] for a in first_outcome.json()["awards"]}
        # 25 x 999,999,999.99 and 15 x 999,999,999.98, by hand.
        assert amounts == {1: "24999999999.75", 2: "14999999999.70"}
        before = (await client.get(url, headers=T05)).json()
    entries = [loads_exact(row.entry, "test") for row in await journal_rows(opener)]
    fixed = [f["amount"] for e in entries if e["kind"] == "outcome" for f in e["fixed"]]
    assert fixed == [24_999_999_999_750_000, 14_999_999_999_700_000]
    clock.now += 1_000
    async with serving(await opener(), clock, snapshot_every) as (client, writer):
        if snapshot_every == 2:
            assert await writer.journal.latest_snapshot() is not None
        r = await client.get(url, headers=T05)
        assert r.status_code == 200, r.text
        assert r.json() == before
        again = await client.post(f"{url}/bets", json=bets, headers=T05)
        assert (again.status_code, again.json()) == (200, first_bets.json())
        again = await client.post(f"{url}/outcome", json=outcome, headers=T05)
        assert (again.status_code, again.json()) == (200, first_outcome.json())
    await verify_clean(opener)


# -- readers: exact for every integer --------------------------------------------------


async def test_a_journal_with_integers_beyond_64_bits_replays_exactly(opener: Opener) -> None:
    """The issue's journal: bets of 999,999,999,999,999.99 (accepted before the bound) at
    a western_stud table and a royal flush on them: 2.5e22 micro-units in the entry.
    After a restart the round answers 200 with every micro-unit; verify and export too."""
    clock = Clock()
    huge = Money(999_999_999_999_999 * SCALE + 990_000)
    async with serving(await opener(), clock) as (_, writer):
        # Handed to the writer as the routes did before the bound (past the schema).
        box = {"box": 1, "ante": huge, "jackpot": huge, "jackpot_dealer": 0, "player": None}
        body = {"closed_at": clock.now, "boxes": [box]}
        status, _ = await writer.submit("bets", "T05", "OLD", as_command("bets", body))
        assert status == 201
        hand = {"box": 1, "dealt_at": clock.at(5), "cards": ROYAL}
        outcome = table_command("outcome", {"boxes": [hand]})
        status, _ = await writer.submit("outcome", "T05", "OLD", outcome)
        assert status == 201
    texts = [row.entry for row in await journal_rows(opener)]
    assert any("24999999999999999750000" in text for text in texts)  # beyond 64 bits
    clock.now += 1_000
    async with serving(await opener(), clock) as (client, _):
        r = await client.get("/v1/tables/T05/rounds/OLD", headers=T05)
        assert r.status_code == 200, r.text
        view = r.json()
        assert view["boxes"][0]["ante"] == "999999999999999.99"
        assert [a["amount"] for a in view["awards"]] == ["24999999999999999.75"]
    await verify_clean(opener)
    outcome_row = (await journal_rows(opener))[-1]
    line = loads_exact(export_line(outcome_row, "0" * 64), "export")
    assert line["entry"]["fixed"][0]["amount"] == 24_999_999_999_999_999_750_000
    assert canonical_json(line["entry"]) == outcome_row.entry  # the hash chain's bytes


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(data=JSON)
def test_loads_exact_gives_back_every_integer_canonical_json_wrote(data: Any) -> None:
    read = loads_exact(canonical_json(data), "test")
    assert read == data
    assert _types(read) == _types(data)  # 2**64 is not read back as 1.8446744073709552e19


def _types(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _types(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_types(v) for v in data]
    return type(data)


@pytest.mark.parametrize(
    "text",
    ['{"amount":1.5}', '{"amount":1e21}', '{"amount":-Infinity}', '{"big":1e400}'],
)
def test_loads_exact_refuses_a_number_that_is_not_an_integer_naming_the_entry(
    text: str,
) -> None:
    with pytest.raises(UnreadableJson, match="^journal entry 7: "):
        loads_exact(text, "journal entry 7")


async def test_recovery_refuses_an_entry_with_a_float_naming_it() -> None:
    journal = KeptJournal()
    good = canonical_json({"kind": "finalize", "now": 1})
    bad = '{"kind":"finalize","now":1.5}'
    await journal.append(
        [
            JournalRow(
                1, 1, "finalize", None, None, good, None, first := chain_hash(GENESIS, good)
            ),
            JournalRow(2, 1, "finalize", None, None, bad, None, chain_hash(first, bad)),
        ]
    )
    writer = build_server(journal=journal).writer
    with pytest.raises(UnreadableJson, match="journal entry 2: 1.5 is not an integer"):
        await writer.recover()
