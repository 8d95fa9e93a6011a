"""Meter awards leave the writer's memory as fixed ones do (app/state/past_awards.py): a
pruned round's meter award that is void or paid is listed from the `past_awards` table,
a final unpaid one stays in memory until its payment; `GET /v1/awards`, the floor's last
hits and an archived round show the same either way (docs/design.md "Past awards").
A K Q of spades at Three Card Poker wins 100 % of the tcp meter (rules 4.5)."""

from __future__ import annotations

from typing import Any

import httpx

from app.store.journal import Journal, MemoryJournal
from app.store.past_award_book import AwardFilter, PastAwardBook
from app.store.snapshots import dump_text
from tests.integration.app.support import build_server, running
from tests.support import OPERATOR, SUPERVISOR, Clock, bets_body

T03 = {"Authorization": "Bearer demo-table-T03"}
RETAIN_MS = 900_000  # the demo floor's retain_ms (the default)
HOLD_MS = 2_000  # the demo floor's hold_ms
PAYMENT_KEYS = ("payment", "paid_at", "method", "paid_by", "witness")


def round_of(n: int) -> str:
    return f"M{n:03d}"


def award_of(n: int) -> str:
    return f"T03/{round_of(n)}/1/player"


def fate(n: int) -> str:
    """Every third hit voided while pending, every other one paid, the rest unpaid."""
    return "void" if n % 3 == 0 else "paid" if n % 2 == 0 else "final"


async def ok(response: Any) -> Any:
    r = await response
    assert r.status_code in (200, 201), r.text
    return r.json()


async def hit(client: httpx.AsyncClient, clock: Clock, n: int) -> None:
    """Round n: A K Q of spades at box 1, a meter award pending until the hold passes;
    a void while it is pending makes it void (paid to nobody)."""
    bets = bets_body(clock, (1, "10.00", "1.00"))
    await ok(client.post(f"/v1/tables/T03/rounds/{round_of(n)}/bets", json=bets, headers=T03))
    outcome = {"boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AS", "KS", "QS"]}]}
    path = f"/v1/tables/T03/rounds/{round_of(n)}/outcome"
    await ok(client.post(path, json=outcome, headers=T03))
    if fate(n) == "void":
        path = f"/v1/tables/T03/rounds/{round_of(n)}/void"
        await ok(client.post(path, json={"reason": "misdeal"}, headers=T03))
    clock.now += 1_000


async def meter_rows(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    r = await client.get("/v1/awards", params={"kind": "meter", "limit": 1000}, headers=OPERATOR)
    assert r.status_code == 200, r.text
    return {a["id"]: a for a in r.json()["awards"]}


async def pay(client: httpx.AsyncClient, award: str, amount: str) -> httpx.Response:
    body = {"amount": amount, "method": "cash"}
    return await client.post(f"/v1/awards/{award}/paid", json=body, headers=SUPERVISOR)


async def settle(client: httpx.AsyncClient, clock: Clock, hits: int) -> dict[str, dict[str, Any]]:
    """`hits` rounds, final once the hold passed, the paid ones paid: their rows."""
    for n in range(hits):
        await hit(client, clock, n)
    clock.now += HOLD_MS + 5_000
    r = await client.get(f"/v1/tables/T03/rounds/{round_of(hits - 1)}?wait=10", headers=T03)
    assert not r.json()["pending"]
    rows = await meter_rows(client)
    for n in range(hits):
        if fate(n) == "paid":
            assert (await pay(client, award_of(n), rows[award_of(n)]["amount"])).status_code == 200
    return await meter_rows(client)


async def prune(client: httpx.AsyncClient, clock: Clock, n: int) -> None:
    """Past retain_ms: one more round (a plain hand) makes the writer's timer prune."""
    clock.now += RETAIN_MS + 10_000
    bets = bets_body(clock, (1, "10.00", "1.00"))
    await ok(client.post(f"/v1/tables/T03/rounds/X{n}/bets", json=bets, headers=T03))
    outcome = {"boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["2C", "7D", "9H"]}]}
    await ok(client.post(f"/v1/tables/T03/rounds/X{n}/outcome", json=outcome, headers=T03))
    clock.now += HOLD_MS + 5_000
    r = await client.get(f"/v1/tables/T03/rounds/X{n}?wait=10", headers=T03)
    assert r.status_code == 200, r.text


async def stored(journal: Journal) -> dict[str, Any]:
    assert isinstance(journal, PastAwardBook)
    page, total = await journal.past_awards_page(AwardFilter(kind="meter"), 1_000_000)
    assert total == len(page)
    return {a.id: a for a in page}


async def hits_shown(client: httpx.AsyncClient) -> list[Any]:
    r = await client.get("/v1/floor", headers=OPERATOR)
    assert r.status_code == 200, r.text
    return [m["hits"] for link in r.json()["links"] for m in link["meters"]]


async def test_settled_meter_awards_leave_memory_and_are_listed_the_same(
    clock: Clock, journal: Journal
) -> None:
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    hits = 12
    async with running(server.app) as client:
        before = await settle(client, clock, hits)
        assert sorted(before) == sorted(award_of(n) for n in range(hits))
        assert [before[award_of(n)]["state"] for n in range(hits)] == [fate(n) for n in range(hits)]
        shown = await hits_shown(client)
        archived_before = {n: before[award_of(n)] for n in range(hits)}
        assert await stored(journal) == {}

        await prune(client, clock, 1)
        state = server.writer.service
        after = await meter_rows(client)
        assert {i: after[i] for i in before} == before  # the very rows listed before
        left = await stored(journal)
        assert set(left) == {award_of(n) for n in range(hits) if fate(n) != "final"}
        assert set(state.floor.awards) == {award_of(n) for n in range(hits) if fate(n) == "final"}
        assert not set(state.payments) & set(left)  # their payments went with them
        assert await hits_shown(client) == shown

        # An archived round still shows its meter award, as the listing did.
        for n in (0, 2, 1):
            r = await client.get(f"/v1/tables/T03/rounds/{round_of(n)}", headers=T03)
            assert r.status_code == 200, r.text
            view = r.json()
            assert view["archived"]
            expected = {
                k: v
                for k, v in archived_before[n].items()
                if k not in ("id", "link", "table", "round", *PAYMENT_KEYS)
            }
            if expected["state"] == "paid":
                expected["state"] = "final"
            assert view["awards"] == [expected]

        # A pruned final award is still paid; then it leaves memory too.
        late = award_of(1)
        r = await pay(client, late, before[late]["amount"])
        assert r.status_code == 200, r.text
        assert late not in state.floor.awards
        assert late in await stored(journal)
        row = (await meter_rows(client))[late]
        assert {k: v for k, v in row.items() if k not in PAYMENT_KEYS} == {
            **before[late],
            "state": "paid",
        }
        assert (row["method"], row["paid_by"], row["payment"]) == ("cash", "sam", r.json()["id"])
        # Paid once, in memory or not: the second names the first (docs/api.md "Payments").
        again = await pay(client, late, before[late]["amount"])
        assert again.status_code == 409, again.text
        assert r.json()["id"] in again.json()["detail"]
        void = await pay(client, award_of(0), before[award_of(1)]["amount"])
        assert void.status_code == 409, void.text


async def test_memory_and_snapshot_keep_only_the_awards_still_needed() -> None:
    """90 hits, then pruned: memory keeps the unpaid ones and the meter's newest hits
    that left (the floor shows its last 25), the snapshot names no other round."""
    clock = Clock()
    server = build_server(journal=MemoryJournal(), clock=clock, outcome_wait_s=0.2)
    hits = 90
    async with running(server.app) as client:
        await settle(client, clock, hits)
        shown = await hits_shown(client)
        await prune(client, clock, 1)
        assert await hits_shown(client) == shown
        state = server.writer.service
        position = server.writer.position
        snapshot = dump_text(state, position.seq, position.head)
    unpaid = {award_of(n) for n in range(hits) if fate(n) == "final"}
    assert len(unpaid) == 30
    assert set(state.floor.awards) == unpaid
    gone = [n for n in range(hits) if fate(n) != "final"]
    newest = set(gone[-25:])  # dealt last: the floor's last hits
    assert [n for n in gone if f'"{round_of(n)}"' in snapshot] == sorted(newest)
    assert all(f'"{award_of(n)}"' in snapshot for n in range(hits) if fate(n) == "final")


async def slips(client: httpx.AsyncClient, awards: list[str]) -> dict[str, Any]:
    found = {}
    for award in awards:
        r = await client.get(f"/v1/awards/{award}/slip", headers=OPERATOR)
        assert r.status_code == 200, r.text
        found[award] = r.json()
    return found


async def test_a_paid_awards_slip_is_printed_the_same_once_it_left_memory(
    clock: Clock, journal: Journal
) -> None:
    """docs/api.md "Payments": the payout slip of a paid award, reprinted after its round
    was pruned, is the slip printed when it was paid (its entries and hashes too)."""
    server = build_server(journal=journal, clock=clock, outcome_wait_s=0.2)
    hits = 6
    async with running(server.app) as client:
        await settle(client, clock, hits)
        paid = [award_of(n) for n in range(hits) if fate(n) == "paid"]
        printed = await slips(client, paid)
        assert all(s["journal"][0]["hash"] for s in printed.values())
        await prune(client, clock, 1)
        assert set(paid) <= set(await stored(journal))  # they left memory
        assert await slips(client, paid) == printed
        r = await client.get(f"/v1/awards/{award_of(0)}/slip", headers=OPERATOR)
        assert r.status_code == 404, r.text  # void: it has no payment
