"""Helpers shared by the integration tests of the app in-process: the one way they build a
writer process (app/compose.py) and a client of it, journals that outlive a server or fail
on demand, and /metrics."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from app.api.passwords import Passwords
from app.api.sessions import SignInPolicy
from app.compose import WriterProcess, writer_process
from app.config.floor_file import FloorFile, parse_floor
from app.config.settings import Settings
from app.display.broadcaster import Broadcaster
from app.state.timefmt import wall_clock_ms
from app.store.errors import JournalUnavailable
from app.store.journal import Journal, JournalRow, MemoryJournal
from tests.support import DEMO, T01, T02, Clock, bets_body

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def build_server(
    floor: FloorFile | None = None,
    *,
    dual: bool = False,
    journal: Journal | None = None,
    clock: Callable[[], int] | None = None,
    outcome_wait_s: float | None = None,
    snapshot_growth: int | None = None,
    broadcaster: Broadcaster | None = None,
    passwords: Passwords | None = None,
    signin_policy: SignInPolicy | None = None,
    changed_by: str | None = None,
    **settings: Any,
) -> WriterProcess:
    """A writer process as `jackpot serve` builds it, on `floor` (the demo floor, with dual
    control if `dual`) and a memory journal unless one is given. `clock`: the writer's
    (the wall clock if None); `outcome_wait_s`, `snapshot_growth`: the writer's unless
    given; `settings`: Settings fields (demo_tokens True unless given)."""
    if floor is None:
        text = Path(DEMO).read_text()
        if dual:
            text = text.replace("dual_control = false", "dual_control = true")
        floor = parse_floor(text)
    # The tests run on the demo floor's published tokens and mystery key, on purpose, as
    # `jackpot demo` does (JACKPOT_DEMO_TOKENS=1).
    settings.setdefault("demo_tokens", True)
    return writer_process(
        Settings(**settings),
        floor,
        journal=journal if journal is not None else MemoryJournal(),
        broadcaster=broadcaster,
        outcome_wait_s=outcome_wait_s,
        snapshot_growth=snapshot_growth,
        clock=clock if clock is not None else wall_clock_ms,
        passwords=passwords,
        signin_policy=signin_policy,
        changed_by=changed_by,
    )


def client_of(app: FastAPI, base_url: str = "http://test") -> httpx.AsyncClient:
    """A client of the app in-process (its lifespan is the caller's)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)


@contextlib.asynccontextmanager
async def running(app: FastAPI, base_url: str = "http://t") -> AsyncIterator[httpx.AsyncClient]:
    """The app started (its lifespan) and a client of it, in-process."""
    async with app.router.lifespan_context(app), client_of(app, base_url) as client:
        yield client


async def make_client(
    clock: Clock, dual: bool, journal: MemoryJournal | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(dual=dual, journal=journal, clock=clock, outcome_wait_s=0.2)
    async with running(server.app) as client:
        yield client


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


async def final_royal_flush(client: httpx.AsyncClient, clock: Clock) -> dict[str, Any]:
    """Round T02/R1: box 1 bets 10.00 with a 1.00 jackpot wager, makes a royal flush, and the
    award is final (the clock past the hold, the round read until it is). Returns the
    round as read then."""
    t02 = {"Authorization": "Bearer demo-table-T02"}
    await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=t02
    )
    outcome = {
        "boxes": [{"box": 1, "dealt_at": clock.at(10), "cards": ["AH", "KH", "QH", "JH", "TH"]}]
    }
    await client.post("/v1/tables/T02/rounds/R1/outcome", json=outcome, headers=t02)
    clock.now += 5_000
    view: dict[str, Any] = (
        await client.get("/v1/tables/T02/rounds/R1?wait=10", headers=t02)
    ).json()
    return view


async def royal_flush_then_correction(
    client: httpx.AsyncClient, clock: Clock, supervisor: dict[str, str]
) -> None:
    """`final_royal_flush`, then the supervisor's correction of -0.07 to the stud link's
    major meter (a rounding dispute), answered 200."""
    await final_royal_flush(client, clock)
    body = {
        "kind": "adjust",
        "amount": "-0.07",
        "reason": "rounding dispute",
        "reason_code": "error_correction",
    }
    r = await client.post("/v1/links/stud/meters/major/corrections", json=body, headers=supervisor)
    assert r.status_code == 200, r.text


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


def table_event_script(at: Callable[[int], str]) -> list[tuple[str, str, dict[str, str], Any]]:
    """(method, path, headers, body): the table events' success and failure cases."""
    bets = {
        "closed_at": at(0),
        "boxes": [
            {"box": 1, "ante": "25.00", "jackpot": "1.00"},
            {"box": 2, "ante": "0", "jackpot": "1.00"},
            {"box": 3, "ante": "10.00", "jackpot": "1.00", "player": "p1"},
        ],
    }
    royal = {
        "boxes": [
            {"box": 1, "dealt_at": at(10), "cards": ["AS", "KS", "QS", "JS", "TS"]},
            {"box": 3, "dealt_at": at(20), "cards": ["2H", "2D", "2S", "2C", "9H"]},
        ]
    }
    other = {**bets, "boxes": [{"box": 1, "ante": "30.00", "jackpot": "1.00"}]}
    r1 = "/v1/tables/T02/rounds/R1"
    return [
        ("POST", f"{r1}/bets", T02, bets),  # accepted, one returned (5.4)
        ("POST", f"{r1}/bets", T02, bets),  # a retry: the first answer
        ("POST", f"{r1}/bets", T02, other),  # 409: another body
        ("POST", f"{r1}/bets", {}, bets),  # 401
        ("POST", f"{r1}/bets", T01, bets),  # 403: another table's round
        ("POST", "/v1/tables/T02/rounds/R2/bets", T02, {**bets, "closed_at": 5}),  # 422
        ("POST", "/v1/tables/T02/rounds/R2/bets", T02, {"boxes": [{"box": 1, "ante": 1}]}),
        ("POST", "/v1/tables/T0!/rounds/R%0A/bets", T02, bets),  # 422: both ids
        ("POST", "/v1/tables/T02/rounds/R2/bets", T02, b"{not json"),  # 422
        ("POST", "/v1/tables/T02/rounds/R2/bets", T02, {**bets, "closed_at": at(60_000)}),
        ("POST", "/v1/tables/T02/rounds/R9/outcome", T02, royal),  # 404: no bets
        ("POST", f"{r1}/outcome", T02, {"boxes": royal["boxes"][:1]}),  # 422: box 3 unlisted
        ("POST", f"{r1}/outcome", T02, royal),  # a pending royal flush, a fixed 4K
        ("POST", f"{r1}/outcome", T02, royal),  # a retry
        ("GET", r1, T02, None),  # not a table event: the router
        ("PUT", f"{r1}/bets", T02, bets),  # 405 from the router
        ("POST", f"{r1}/bets/", T02, bets),  # not the route's path: the router redirects
        ("POST", "/v1/tables/T02/rounds/R3/bets", T02, bets),
        ("POST", "/v1/tables/T02/rounds/R3/void", T02, {"reason": "misdeal (5.8)", "boxes": [3]}),
        ("POST", "/v1/tables/T02/rounds/R3/void", T02, {"boxes": [1]}),  # 422: no reason
        # (table, round, kind) is the event's key (docs/api.md): another void body is a 409.
        ("POST", "/v1/tables/T02/rounds/R3/void", T02, {"reason": "foreign card (5.8.1)"}),
    ]


# The status of each request of `table_event_script`, in order.
TABLE_EVENT_STATUSES = [
    200, 200, 409, 401, 403, 422, 422, 422, 422, 422, 404, 422, 200, 200, 200, 405, 307,
    200, 200, 422, 409,
]  # fmt: skip
