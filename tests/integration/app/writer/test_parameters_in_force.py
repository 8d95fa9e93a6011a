"""Every entry is applied under the parameters in force at its place in the journal
(docs/journal.md `config`): a floor file edited between two starts reprices nothing
already acknowledged."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.config.floor_file import parse_floor
from app.writer.opening import StartRefused
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, T01, Clock, bets_body

QUARTER = 'rate = "0.25"\n  reserve_rate = "0.05"\n  ceiling = "2000000.00"'
HALF = 'rate = "0.50"\n  reserve_rate = "0.05"\n  ceiling = "2000000.00"'


def demo_text(rate: str = QUARTER) -> str:
    text = Path(DEMO).read_text()
    assert QUARTER in text  # the stud link's major meter
    return text.replace(QUARTER, rate)


async def major(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.get("/v1/links/stud/meters/major", headers=OPERATOR)
    assert r.status_code == 200, r.text
    meter: dict[str, str] = r.json()
    return meter


async def take_bets(client: httpx.AsyncClient, clock: Clock, rounds: int, first: int = 1) -> None:
    for n in range(first, first + rounds):
        body = bets_body(clock, (1, "10.00", "1.00"))
        r = await client.post(f"/v1/tables/T01/rounds/R{n}/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
        clock.now += 1_000


async def test_an_edited_rate_reprices_nothing_acknowledged() -> None:
    """The issue's power cut: 50 rounds at rate 0.25 (10000.00 -> 10012.50), the file's
    rate edited to 0.50, a restart: the meter still reads 10012.50."""
    clock, journal = Clock(), KeptJournal()
    server = build_server(parse_floor(demo_text()), journal=journal, clock=clock)
    async with running(server.app) as client:
        await take_bets(client, clock, 50)
        assert (await major(client))["value"] == "10012.50"
    server = build_server(parse_floor(demo_text(HALF)), journal=journal, clock=clock)
    async with running(server.app) as client:
        assert (await major(client))["value"] == "10012.50"
        # New bets are priced under the parameters now in force: 1.00 x 0.50 each.
        await take_bets(client, clock, 2, first=51)
        meter = await major(client)
        assert meter["value"] == "10013.50"
        assert meter["rate"] == "0.5"


async def test_a_start_is_refused_with_every_problem_listed() -> None:
    """Money left on a meter taken out of the file, and a table's link changed under an
    open round: both named, with the amount and the round; nothing recorded."""
    clock, journal = Clock(), KeptJournal()
    server = build_server(parse_floor(demo_text()), journal=journal, clock=clock)
    async with running(server.app) as client:
        await take_bets(client, clock, 1)
    seq = (await journal.last()).seq  # type: ignore[union-attr]
    text = demo_text().replace('link = "stud"\nboxes = 7', 'link = "tcp"\nboxes = 7', 1)
    start = text.index('[[links]]\nid = "stud"')
    end = text.index('[[links]]\nid = "tcp"')
    edited = text[:start] + text[end:]
    edited = edited.replace('link = "stud"', 'link = "tcp"')
    server = build_server(parse_floor(edited), journal=journal, clock=clock)
    with pytest.raises(StartRefused) as refused:
        async with running(server.app):
            pass
    problems = refused.value.problems
    assert any(
        p.startswith("links[stud]: removed, but it holds money: major 10000.25 (reserve 0.05)")
        for p in problems
    ), problems
    assert "tables[T01].link: changed (stud -> tcp) while rounds are open: R1" in problems
    # Refused before anything is written: not the parameters, nor a timed entry (the
    # contribution pending on the watermark would be finalised at once).
    assert [r.kind async for r in journal.read(seq)] == []
