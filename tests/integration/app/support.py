"""Helpers shared by the integration tests of the app in-process: a client of the whole
app on the demo floor, journals that outlive a server or fail on demand, and /metrics."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.api.application import create_app
from app.config.floor_file import parse_floor
from app.config.settings import Settings
from app.store.errors import JournalUnavailable
from app.store.journal import JournalRow, MemoryJournal
from tests.support import DEMO, Clock, bets_body

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def make_client(
    clock: Clock, dual: bool, journal: MemoryJournal | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    text = Path(DEMO).read_text()
    if dual:
        text = text.replace("dual_control = false", "dual_control = true")
    app = create_app(Settings(), parse_floor(text), journal=journal or MemoryJournal())
    app.state.writer.clock = clock
    app.state.writer.outcome_wait_s = 0.2
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        yield c


class KeptJournal(MemoryJournal):
    """A memory journal that outlives the server using it: a restart reads it again."""

    async def close(self) -> None:
        pass


class FlakyJournal(MemoryJournal):
    """A journal whose appends fail while `down` (the database went away)."""

    down = False

    async def append(self, rows: Sequence[JournalRow]) -> None:
        if self.down:
            raise JournalUnavailable("connection refused")
        await super().append(rows)


async def final_royal_flush(client: httpx.AsyncClient, clock: Clock) -> None:
    """Round T02/R1: box 1 bets 10.00 with a 1.00 jackpot wager, makes a royal flush, and the
    award is final (the clock past the hold, the round read until it is)."""
    t02 = {"Authorization": "Bearer demo-table-T02"}
    await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=t02
    )
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=t02)
    clock.now += 5_000
    await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=t02)


async def scrape(client: httpx.AsyncClient) -> Samples:
    r = await client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples: Samples = {}
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)
