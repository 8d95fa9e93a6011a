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
from tests.support import DEMO, Clock

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
