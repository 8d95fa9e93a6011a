"""What screens see across a writer takeover: displays keep receiving through
Redis from whichever writer leads, a new snapshot on takeover, sequence numbers still
increasing for a connected screen.

Two `jackpot serve --role writer` on one PostgreSQL and one Redis, and a display process
(`--role display`) between Redis and a screen, as docker-compose.yml runs them. Screens are
websocket clients that keep every message they get; nothing here is a timed assertion:
each wait has a generous bound (a loaded 2-core machine), and the time from the kill to
the screen's first message of the new leader is printed, not asserted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from tests.e2e.cluster import (
    LEASE_MS,
    OPERATOR,
    SEED,
    SHARE,
    TAKEOVER_S,
    Writer,
    bets_body,
    floor_file,
    leader_of,
    post_until_answered,
    wait_for,
)
from tests.e2e.test_topology import Process, free_port, major, reconnect

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WAIT_S = 30.0  # the bound of every wait for what a screen shows
SECRET = "failover-displays-secret"  # as compose: the writers sign, the display checks
WS_PATH = "/v1/links/stud/ws"


@dataclass
class Cluster:
    writers: list[Writer]
    display: Process
    redis_url: str

    def logs(self) -> str:
        text = "\n".join(f"--- writer {w.name}\n{w.tail()}" for w in self.writers)
        return f"{text}\n--- display\n{self.display.log.read_text(errors='replace')[-3000:]}"


@pytest.fixture
def cluster(fresh_dsn: str, redis_url: str) -> Iterator[Cluster]:
    folder = Path(tempfile.mkdtemp(prefix="jackpot-failover-displays-"))
    folder.chmod(0o755)  # pgserver's PostgreSQL runs as its own user (tests/conftest.py)
    # The session's Redis may hold a link state stored by an earlier test's writer.
    client = redis.Redis.from_url(redis_url)
    try:
        for key in client.scan_iter(match="jackpot:*"):
            client.delete(key)
    finally:
        client.close()
    floor = floor_file(folder)
    shared = {"REDIS_URL": redis_url, "JACKPOT_REDIS_SECRET": SECRET}
    writers = [Writer(name, folder, fresh_dsn, floor, extra_env=shared) for name in ("a", "b")]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_CONFIG")
    }
    display = Process(
        ["--config", str(floor), "--role", "display"],
        {**env, **shared},
        free_port(),
        folder / "display.log",
    )
    try:
        for writer in writers:
            writer.start()
        display.start()
        display.wait_healthy()
        yield Cluster(writers, display, redis_url)
    finally:
        display.stop()
        for writer in writers:
            writer.kill()
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Seen:
    at: float  # time.monotonic() when the screen got it
    message: dict[str, Any]


@dataclass
class Screen:
    """A display's websocket, read in the background; every message is kept."""

    url: str
    seen: list[Seen] = field(default_factory=list)
    ws: ClientConnection | None = None
    reader: asyncio.Task[None] | None = None
    closed: str | None = None  # why the connection ended, if it did

    async def open(self) -> Screen:
        self.ws = await reconnect(self.url)
        self.reader = asyncio.create_task(self._read())
        return self

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
        if self.ws is not None:
            await self.ws.close()

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for text in self.ws:
                self.seen.append(Seen(time.monotonic(), json.loads(text)))
        except ConnectionClosed as closed:
            self.closed = repr(closed)
        else:
            self.closed = "closed by the server"

    def shown(self) -> str | None:
        """The major meter the screen shows now: the last value a message carried."""
        values = [v for s in self.seen if (v := major(s.message)) is not None]
        return values[-1] if values else None

    async def until(self, what: str, check: Callable[[], bool], why: Callable[[], str]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not check():
            assert self.closed is None, f"{self.url}: the connection ended: {self.closed}"
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.url}: not within {WAIT_S} s: {what}\n{why()}")
            await asyncio.sleep(0.05)

    async def until_shown(self, value: str, why: Callable[[], str]) -> None:
        await self.until(
            f"shows {value} (shows {self.shown()})", lambda: self.shown() == value, why
        )

    def messages(self) -> list[dict[str, Any]]:
        return [s.message for s in self.seen]


def assert_seq_increases(screen: Screen) -> None:
    """docs/api.md "Displays": every message has a per-link increasing seq; after a snapshot each
    is the previous plus one (app/display/broadcaster.py), but for a display server's own
    `status` `degraded`, which repeats the previous seq."""
    previous: dict[str, Any] | None = None
    for message in screen.messages():
        if previous is not None:
            own = (
                message["type"] == "status"
                and message["status"] == "degraded"
                and message["seq"] == previous["seq"]
            )
            if own:
                continue
            assert message["seq"] > previous["seq"], (screen.url, previous, message)
            if message["type"] != "snapshot":
                assert message["seq"] == previous["seq"] + 1, (screen.url, previous, message)
        previous = message


def meter_read(writer: Writer) -> str:
    """The operator's read of the major meter on the leader: `value`, what screens show
    (docs/api.md "Operators": pending events counted; these rounds never settle)."""
    r = httpx.get(f"{writer.url}/v1/links/stud/meters/major", headers=OPERATOR, timeout=10)
    assert r.status_code == 200, r.text
    return str(r.json()["value"])


async def post_bets(writers: list[Writer], prefix: str, rounds: int, boxes: int) -> int:
    """Bets on T01 (stud link) through the proxy's retry; returns the boxes recorded."""
    clients = [httpx.AsyncClient(base_url=w.url, timeout=10) for w in writers]
    try:
        for n in range(rounds):
            status, answer = await post_until_answered(
                clients, "T01", f"{prefix}-{n}", bets_body(boxes)
            )
            assert status == 200, answer
    finally:
        for client in clients:
            await client.aclose()
    return rounds * boxes


def displayed(writer: Writer) -> str | None:
    """The major meter of the link's display read model (GET /v1/links/stud) on `writer`."""
    try:
        r = httpx.get(f"{writer.url}/v1/links/stud", timeout=5)
    except httpx.HTTPError:
        return None
    return major({"type": "snapshot", **r.json()}) if r.status_code == 200 else None


def stored_state(redis_url: str) -> dict[str, Any]:
    """The link's state as the leader last stored it in Redis (`<mac> <term> <json>`)."""
    client = redis.Redis.from_url(redis_url)
    try:
        value = client.get("jackpot:state:stud")
    finally:
        client.close()
    assert isinstance(value, bytes)
    state: dict[str, Any] = json.loads(value.decode().split(" ", 2)[2])
    return state


def test_screens_follow_whichever_writer_leads_across_kill_9_of_the_leader(
    cluster: Cluster,
) -> None:
    old = leader_of(cluster.writers)
    new = next(w for w in cluster.writers if w is not old)
    ws_url = cluster.display.url.replace("http", "ws") + WS_PATH
    standby_ws_url = new.url.replace("http", "ws") + WS_PATH

    async def run() -> tuple[Screen, Screen, float]:
        on_display = await Screen(ws_url).open()
        # A standby still serves the display routes: its screen gets the leader's
        # updates through Redis, as a display process's does (once the standby has read
        # the leader's stored state: before that it knows no value and no seq of it).
        await asyncio.to_thread(
            wait_for, "the standby relays", lambda: displayed(new) is not None, WAIT_S, new.tail
        )
        on_standby = await Screen(standby_ws_url).open()
        try:
            boxes = await post_bets(cluster.writers, "before", 5, 3)
            before = meter_read(old)
            assert Decimal(before) == SEED + SHARE * boxes
            for screen in (on_display, on_standby):
                await screen.until_shown(before, cluster.logs)

            old.kill()  # kill -9
            killed_at = time.monotonic()
            await asyncio.to_thread(wait_for, "the standby leads", new.leads, TAKEOVER_S, new.tail)
            boxes += await post_bets(cluster.writers, "after", 5, 2)
            after = meter_read(new)
            assert Decimal(after) == SEED + SHARE * boxes  # the new leader lost nothing
            for screen in (on_display, on_standby):
                await screen.until_shown(after, cluster.logs)
                # A fresh snapshot from the new leader came after the kill.
                assert any(
                    s.message["type"] == "snapshot" and s.at > killed_at for s in screen.seen
                ), screen.messages()[-10:]
                assert screen.closed is None, screen.closed
            await asyncio.sleep(LEASE_MS / 1000)  # quiet: nothing more may change the value
            for screen in (on_display, on_standby):
                assert screen.shown() == after == meter_read(new)
            assert major(stored_state(cluster.redis_url)) == after
            return on_display, on_standby, killed_at
        finally:
            await on_display.close()
            await on_standby.close()

    on_display, on_standby, killed_at = asyncio.run(run())
    for screen in (on_display, on_standby):
        assert_seq_increases(screen)
    for name, screen in (("the display process's", on_display), ("the standby's", on_standby)):
        first = next(s for s in screen.seen if s.at > killed_at)
        print(f"kill -9 to {name} screen's first message, a {first.message['type']}:", end=" ")
        print(f"{first.at - killed_at:.2f} s")


def test_a_leader_frozen_past_its_lease_changes_no_screen_when_it_wakes(cluster: Cluster) -> None:
    old = leader_of(cluster.writers)
    new = next(w for w in cluster.writers if w is not old)
    ws_url = cluster.display.url.replace("http", "ws") + WS_PATH
    old_ws_url = old.url.replace("http", "ws") + WS_PATH

    async def run() -> tuple[Screen, Screen]:
        on_display = await Screen(ws_url).open()
        on_old = await Screen(old_ws_url).open()  # the leader's own screen, before it freezes
        try:
            boxes = await post_bets([old], "before", 5, 3)
            before = meter_read(old)
            for screen in (on_display, on_old):
                await screen.until_shown(before, cluster.logs)

            old.signal(signal.SIGSTOP)
            frozen_at = time.monotonic()
            await asyncio.sleep(LEASE_MS / 1000 * 2)
            await asyncio.to_thread(wait_for, "the standby leads", new.leads, TAKEOVER_S, new.tail)
            boxes += await post_bets([new], "during", 5, 2)
            during = meter_read(new)
            await on_display.until_shown(during, cluster.logs)

            old.signal(signal.SIGCONT)  # its timers and pings are late now
            await asyncio.to_thread(
                wait_for,
                "the old leader stands by",
                lambda: old.role() == "standby",
                TAKEOVER_S,
                old.tail,
            )
            boxes += await post_bets([new], "after", 5, 1)
            after = meter_read(new)
            assert Decimal(after) == SEED + SHARE * boxes
            # The deposed leader's screen too: it follows the new leader through Redis.
            for screen in (on_display, on_old):
                await screen.until_shown(after, cluster.logs)
                assert any(
                    s.message["type"] == "snapshot" and s.at > frozen_at for s in screen.seen
                ), screen.messages()[-10:]
            await asyncio.sleep(LEASE_MS / 1000 * 2)  # whatever the woken writer sends late
            for screen in (on_display, on_old):
                assert screen.shown() == after == meter_read(new), screen.messages()[-10:]
                assert screen.closed is None, screen.closed
            # What a display process started now would read: the new leader's state.
            state = stored_state(cluster.redis_url)
            assert major(state) == after
            assert state["seq"] >= on_display.seen[-1].message["seq"]
            return on_display, on_old
        finally:
            await on_display.close()
            await on_old.close()

    for screen in asyncio.run(run()):
        assert_seq_increases(screen)
