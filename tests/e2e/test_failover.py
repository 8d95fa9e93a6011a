"""Standby writers: two `jackpot serve --role writer` on one PostgreSQL.

Killed, frozen or started together, exactly one leads; every acknowledged event is in
the journal once, every retry gets its first answer, and `jackpot verify` is clean.
Bounds are generous (a loaded 2-core machine): the 5 s goal is bench_failover's.
"""

from __future__ import annotations

import asyncio
import base64
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Subprotocol

from tests.conftest import run_blocking
from tests.e2e.cluster import (
    JACKPOT,
    LEASE_MS,
    OPERATOR,
    SEED,
    SHARE,
    TAKEOVER_S,
    TOKENS,
    Writer,
    bets_body,
    leader_of,
    post_until_answered,
    wait_for,
    writer_pair,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def pair(folder: Path, fresh_dsn: str) -> Iterator[list[Writer]]:
    with writer_pair(folder, fresh_dsn) as writers:
        yield writers


async def journal_keys(dsn: str) -> dict[str, int]:
    connection = await asyncpg.connect(dsn)
    try:
        rows = await connection.fetch(
            "SELECT idem_key, count(*) AS n FROM journal WHERE idem_key IS NOT NULL"
            " GROUP BY idem_key"
        )
    finally:
        await connection.close()
    return {row["idem_key"]: row["n"] for row in rows}


def verify(dsn: str, floor: Path) -> None:
    done = subprocess.run(
        [JACKPOT, "verify", "--database-url", dsn, "--config", str(floor)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


class Load:
    """Tables posting bets through the proxy's retry, each event until it is answered;
    now and then a retry of an answered one, which must get its first answer."""

    def __init__(self, writers: list[Writer]) -> None:
        self.writers = writers
        self.first: dict[tuple[str, str], dict[str, Any]] = {}  # acknowledged: first answer
        self.bodies: dict[tuple[str, str], dict[str, object]] = {}
        self.stop = asyncio.Event()

    async def run(self, workers: int = 8) -> None:
        await asyncio.gather(*(self._worker(w) for w in range(workers)))

    async def _worker(self, w: int) -> None:
        clients = [httpx.AsyncClient(base_url=wr.url, timeout=10) for wr in self.writers]
        try:
            n = 0
            while not self.stop.is_set():
                n += 1
                table = "T01" if w % 2 else "T02"
                key = (table, f"W{w}-{n}")
                body = self.bodies[key] = bets_body(random.randint(1, 7))
                random.shuffle(clients)  # either writer first, as a proxy without health checks
                status, answer = await post_until_answered(clients, *key, body)
                assert status == 200, (key, answer)
                self.first[key] = answer
                if random.random() < 0.2:  # a table's retry of an answered event
                    again = random.choice(list(self.first))
                    status, answer = await post_until_answered(clients, *again, self.bodies[again])
                    assert (status, answer) == (200, self.first[again]), again
        finally:
            for client in clients:
                await client.aclose()


def check_journal(dsn: str, floor: Path, load: Load, leader: Writer) -> None:
    """Each acknowledged event once; every retry its first answer; the money conserved."""
    keys = run_blocking(journal_keys(dsn))
    for table, round_id in load.first:
        assert keys.get(f"{table}|{round_id}|bets") == 1, (table, round_id)
    assert set(keys.values()) == {1}

    async def retry_all() -> None:
        async with httpx.AsyncClient(base_url=leader.url, timeout=30) as client:
            for (table, round_id), answer in load.first.items():
                again = await post_until_answered(
                    [client], table, round_id, load.bodies[(table, round_id)]
                )
                assert again == (200, answer), (table, round_id)

    run_blocking(retry_all())
    with httpx.Client(base_url=leader.url, timeout=10) as client:
        meter = client.get("/v1/links/stud/meters/major", headers=OPERATOR).json()
    # Every recorded round once (the journal may hold events whose answer was lost with
    # a killed leader: they count, once).
    boxes = sum(len(b["boxes"]) for b in load.bodies.values() if isinstance(b["boxes"], list))
    recorded = sum(
        len(body["boxes"])
        for (table, round_id), body in load.bodies.items()
        if f"{table}|{round_id}|bets" in keys and isinstance(body["boxes"], list)
    )
    assert recorded == boxes  # every event posted was in the end answered and recorded
    assert Decimal(meter["value"]) == SEED + SHARE * recorded
    verify(dsn, floor)


def test_kill_9_of_the_leader_under_load_the_standby_leads_and_loses_nothing(
    pair: list[Writer], fresh_dsn: str
) -> None:
    for writer in pair:
        writer.start()
    leader = leader_of(pair)
    load = Load(pair)

    async def run() -> list[float]:
        nonlocal leader
        task = asyncio.create_task(load.run())
        takeovers = []
        for _ in range(3):
            await asyncio.sleep(random.uniform(1.0, 2.5))
            assert not task.done(), task.exception()
            before = len(load.first) + 20
            leader.kill()  # kill -9, mid-flight
            killed_at = time.monotonic()
            standby = next(w for w in pair if w is not leader)
            await asyncio.to_thread(
                wait_for, "the standby leads", standby.leads, TAKEOVER_S, standby.tail
            )
            takeovers.append(time.monotonic() - killed_at)
            leader.start()  # back, as a standby
            await asyncio.to_thread(leader_of, pair)
            leader = standby
            # The load goes on through the new leader.
            await asyncio.to_thread(
                wait_for,
                "events acknowledged again",
                lambda: len(load.first) > before,  # noqa: B023
                30,
            )
        load.stop.set()
        await task
        return takeovers

    takeovers = asyncio.run(run())
    assert len(load.first) > 100, "the load did not get going"
    assert all(t < TAKEOVER_S for t in takeovers), takeovers
    assert leader.leads()
    check_journal(fresh_dsn, pair[0].floor, load, leader)


def test_a_leader_frozen_past_its_lease_is_deposed_and_acknowledges_nothing_it_held(
    pair: list[Writer], fresh_dsn: str
) -> None:
    for writer in pair:
        writer.start()
    old = leader_of(pair)
    new = next(w for w in pair if w is not old)
    load = Load([old])

    async def run() -> list[tuple[int, str]]:
        async with httpx.AsyncClient(base_url=old.url, timeout=60) as client:
            for n in range(20):  # acknowledged by the old leader, before it freezes
                key = ("T01", f"before-{n}")
                body = load.bodies[key] = bets_body(3)
                status, answer = await post_until_answered([client], *key, body)
                assert status == 200
                load.first[key] = answer
            old.signal(signal.SIGSTOP)

            async def held(n: int) -> tuple[int, str]:
                key = ("T02", f"held-{n}")
                load.bodies[key] = bets_body(2)
                try:
                    r = await client.post(
                        f"/v1/tables/T02/rounds/{key[1]}/bets",
                        json=load.bodies[key],
                        headers={"Authorization": f"Bearer {TOKENS['T02']}"},
                    )
                except httpx.HTTPError as error:
                    return -1, repr(error)
                return r.status_code, r.text

            # Sent to the frozen leader: they wait in its sockets until it wakes.
            waiting = [asyncio.create_task(held(n)) for n in range(10)]
            await asyncio.sleep(LEASE_MS / 1000 * 2)
            await asyncio.to_thread(wait_for, "the standby leads", new.leads, TAKEOVER_S, new.tail)
            async with httpx.AsyncClient(base_url=new.url, timeout=30) as to_new:
                for n in range(10):
                    key = ("T01", f"after-{n}")
                    body = load.bodies[key] = bets_body(1)
                    status, answer = await post_until_answered([to_new], *key, body)
                    assert status == 200
                    load.first[key] = answer
            old.signal(signal.SIGCONT)
            return await asyncio.gather(*waiting)

    answers = asyncio.run(run())
    # Nothing it held is acknowledged: refused with 503 (problem+json, Retry-After).
    assert all(status != 200 for status, _ in answers), answers
    assert any(status == 503 for status, _ in answers), answers
    wait_for("the old leader stands by", lambda: old.role() == "standby", TAKEOVER_S, old.tail)
    assert old.health() == (503, {"status": "standby", "role": "standby"})
    assert new.leads()
    keys = run_blocking(journal_keys(fresh_dsn))
    assert not [k for k in keys if k.startswith("T02|held-")]  # it committed none of them
    # A standby refuses table events and operators' reads with 503 and Retry-After.
    r = httpx.post(
        f"{old.url}/v1/tables/T01/rounds/x/bets",
        json=bets_body(1),
        headers={"Authorization": f"Bearer {TOKENS['T01']}"},
    )
    assert r.status_code == 503 and r.headers["retry-after"]
    assert r.headers["content-type"] == "application/problem+json"
    r = httpx.get(f"{old.url}/v1/links/stud/meters/major", headers=OPERATOR)
    assert r.status_code == 503
    # The console's live floor too: its handshake is refused with 503, for the proxy.
    ws_url = old.url.replace("http://", "ws://") + "/v1/floor/ws"

    async def floor_socket() -> int:
        token = "jackpot.token." + base64.urlsafe_b64encode(b"demo-operator").decode().rstrip("=")
        try:
            async with connect(ws_url, subprotocols=[Subprotocol("jackpot"), Subprotocol(token)]):
                return 101
        except InvalidStatus as refused:
            return refused.response.status_code

    assert run_blocking(floor_socket()) == 503
    # The held events were never recorded: the proxy's retry puts them on the leader.
    load.writers = [new]
    held_keys = [key for key in load.bodies if key[1].startswith("held-")]

    async def retry_held() -> None:
        async with httpx.AsyncClient(base_url=new.url, timeout=30) as client:
            for key in held_keys:
                status, answer = await post_until_answered([client], *key, load.bodies[key])
                assert status == 200
                load.first[key] = answer

    run_blocking(retry_held())
    check_journal(fresh_dsn, old.floor, load, new)


def test_writers_started_together_never_lead_together(pair: list[Writer], fresh_dsn: str) -> None:
    load = Load(pair)
    for attempt in range(3):
        for writer in pair:
            writer.start()
        # Until one leads: never both (the proxy would split the floor's events).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            roles = [w.role() for w in pair]
            assert roles.count("leader") <= 1, roles
            if roles.count("leader") == 1 and roles.count("standby") == 1:
                break
            time.sleep(0.05)
        leader = leader_of(pair)

        async def post(attempt: int) -> None:
            clients = [httpx.AsyncClient(base_url=w.url, timeout=10) for w in pair]
            try:
                for n in range(20):
                    key = ("T01", f"start{attempt}-{n}")
                    body = load.bodies[key] = bets_body(2)
                    status, answer = await post_until_answered(clients, *key, body)
                    assert status == 200
                    load.first[key] = answer
            finally:
                for client in clients:
                    await client.aclose()

        asyncio.run(post(attempt))
        assert [w.role() for w in pair].count("leader") == 1
        for writer in [leader, *[w for w in pair if w is not leader]]:
            assert writer.stop() == 0  # SIGTERM drains and exits 0
    for writer in pair:
        writer.start()
    check_journal(fresh_dsn, pair[0].floor, load, leader_of(pair))
