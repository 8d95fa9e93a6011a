"""The composition root: what a writer process and a display process are built from, in
which order, and what their lifespan starts and stops. The only place that picks the
wall clock, PostgreSQL or memory, Redis or in-process broadcast; `jackpot serve` and the
tests build the server here.

A writer process: settings -> store (the journal on the server's database, opened in the
lifespan) -> displays (the broadcaster) -> writer -> leadership (on PostgreSQL) -> app.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from fastapi import FastAPI

from app.api.account_changes import AccountChanges
from app.api.application import create_app, create_display_app
from app.api.auth import floor_tokens
from app.api.health import probe_database
from app.api.local_control import local_control
from app.api.passwords import Passwords
from app.api.sessions import SWEEP_EVERY_S, SignInPolicy, SignIns, watch_signins
from app.config.floor_config import floor_config
from app.config.floor_file import FloorFile
from app.config.floor_parameters import FloorSource, floor_parameters
from app.config.mystery_key import mystery_key
from app.config.settings import Settings
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.screen_watch import ScreenWatch
from app.display.screens import Screens
from app.ops.metrics import PrometheusMetrics
from app.ops.software import Identity
from app.state.commands import ConfigCommand, StartCommand
from app.state.floor_state import FloorConfig, FloorState
from app.state.timefmt import wall_clock_ms
from app.state.views import meters
from app.store.database import ServerDatabase
from app.store.journal import Journal, PostgresJournal
from app.store.leader_lock import PostgresLeaderLock
from app.store.lease import PostgresLease, Term
from app.store.sessions import MemorySessions, PostgresSessions
from app.writer.head_signing import HeadSigning, head_signing
from app.writer.leadership import Leadership
from app.writer.opening import StartRefused, opened, refused_at_start
from app.writer.snapshotter import Cadence, SnapshotterProcess
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings

log = logging.getLogger("jackpot")

Clock = Callable[[], int]  # ms since the epoch


class State(TypedDict):
    """The lifespan's state: what a request may read from `request.state`."""

    writer: Writer
    metrics: PrometheusMetrics
    broadcaster: Broadcaster


@dataclass(frozen=True, slots=True)
class WriterProcess:
    """A writer process as built: its app and the parts behind it."""

    app: FastAPI
    writer: Writer
    metrics: PrometheusMetrics
    broadcaster: Broadcaster
    journal: Journal
    database: ServerDatabase | None  # None: the journal was given (tests)
    leadership: Leadership | None  # on the server's database, the lease decides who leads
    # The start refused (app/writer/opening.py): `jackpot serve` exits with its own status.
    refused: list[StartRefused] = field(default_factory=list)
    # What stopped the process while it ran (the leadership's loop ended by an error).
    crashed: list[BaseException] = field(default_factory=list)


def writer_process(
    settings: Settings,
    floor: FloorFile,
    *,
    journal: Journal | None = None,
    broadcaster: Broadcaster | None = None,
    clock: Clock = wall_clock_ms,
    outcome_wait_s: float | None = None,
    snapshot_growth: int | None = None,
    passwords: Passwords | None = None,
    control_socket: Path | None = None,
    signin_policy: SignInPolicy | None = None,
    source: FloorSource | None = None,
    changed_by: str | None = None,
    identity: Identity | None = None,
) -> WriterProcess:
    """The server `jackpot serve` runs. With `journal` given (tests) it is used as is, and
    this process leads; otherwise PostgreSQL: DATABASE_URL, or an embedded server under
    settings.data_dir, migrated at start, and the lease decides whether it leads.
    `outcome_wait_s` and `snapshot_growth`: None keeps the writer's own; `passwords`:
    argon2id's recommended parameters unless given (tests take cheaper ones);
    `control_socket`: the local control socket (app/api/local_control.py), by default
    settings.data_dir/control.sock on the server's database, none on a given journal;
    `signin_policy`: the floor file's sign-in settings unless given; `changed_by`: the
    supervisor who made the floor file's changes (a proposal's author, dual control);
    `identity`: the software authenticated at start, recorded by a `start` entry whenever
    this writer begins leading."""
    # Refuses a must-hit-by level without the floor's own key (MysteryKeyError).
    config = floor_config(floor, mystery_key(floor, settings))
    database = None
    if journal is None:
        control_socket = control_socket or settings.data_dir / "control.sock"
        database = ServerDatabase(settings.database_url, settings.data_dir)
        journal = PostgresJournal(database)
    broadcaster = broadcaster or build_broadcaster(settings, "writer")
    configure_links(broadcaster, config)
    metrics = PrometheusMetrics()
    writer = build_writer(
        settings,
        FloorState(config),
        journal,
        broadcaster=broadcaster,
        metrics=metrics,
        clock=clock,
        outcome_wait_s=outcome_wait_s,
        snapshot_growth=snapshot_growth,
        # On the server's database the snapshotter process makes the snapshots (`run_writer`).
        makes_snapshots=database is None,
    )
    tokens = floor_tokens(floor, writer.accounts, clock)
    # The floor file's parameters: recorded first, whenever this writer starts leading,
    # unless the journal already holds them (docs/journal.md `config`).
    path, sha256 = (None, None) if source is None else (source.path, source.sha256)
    writer.opening.append(
        ("config", ConfigCommand(floor_parameters(floor), path, sha256, changed_by))
    )
    if identity is not None:
        software = {k: v for k, v in identity.record().items() if k != "host"}
        writer.opening.append(("start", StartCommand(software, identity.host)))
        writer.identity = identity.record()
    metrics.watch_writer(writer)
    metrics.watch_broadcaster(broadcaster)
    leadership = None
    crashed: list[BaseException] = []
    if database is not None:
        assert isinstance(journal, PostgresJournal)
        stop = functools.partial(stop_process, crashed)
        leadership = build_leadership(settings, database, journal, writer, broadcaster, stop)
        metrics.watch_leadership(leadership)
    state = State(writer=writer, metrics=metrics, broadcaster=broadcaster)
    passwords = passwords or Passwords()
    signins = SignIns(
        MemorySessions() if database is None else PostgresSessions(database),
        writer.accounts,
        passwords,
        signin_policy or SignInPolicy.of(floor),
        clock,
    )
    watch_signins(metrics, signins)
    tokens.refused.append(signins.token_refused)
    changes = AccountChanges(writer, tokens, passwords, floor.table_token_grace_ms)

    watch = screen_watch(settings, floor, broadcaster, metrics)

    refused: list[StartRefused] = []

    @contextlib.asynccontextmanager
    async def running() -> AsyncIterator[State]:
        try:
            async with (
                run_writer(settings, state, journal, database, leadership),
                sweeping(signins, writer),
                watching(watch),
            ):
                if control_socket is None:
                    yield state
                    return
                async with local_control(control_socket, changes):
                    yield state
        except StartRefused as error:
            refused.append(error)
            raise

    app = create_app(
        settings, tokens, writer, broadcaster, metrics, running, changes, signins, watch
    )
    return WriterProcess(
        app, writer, metrics, broadcaster, journal, database, leadership, refused, crashed
    )


def stop_process(crashed: list[BaseException], error: BaseException) -> None:
    """Stop serving as SIGTERM does (the writer drained); `jackpot serve` then exits with
    its status for a crash, so that a supervisor starts the process again."""
    crashed.append(error)
    signal.raise_signal(signal.SIGTERM)


def build_writer(
    settings: Settings,
    service: FloorState,
    journal: Journal,
    *,
    broadcaster: Broadcaster,
    metrics: PrometheusMetrics,
    clock: Clock,
    outcome_wait_s: float | None = None,
    snapshot_growth: int | None = None,
    makes_snapshots: bool = True,
) -> Writer:
    """The writer and all its configuration: the one place that sets it."""
    defaults = WriterSettings()
    return Writer(
        service,
        journal,
        WriterSettings(
            max_batch=settings.commit_max_batch,
            snapshot_every=settings.snapshot_every,
            snapshot_growth=defaults.snapshot_growth
            if snapshot_growth is None
            else snapshot_growth,
            outcome_wait_s=defaults.outcome_wait_s if outcome_wait_s is None else outcome_wait_s,
            clock=clock,
            makes_snapshots=makes_snapshots,
        ),
        broadcast=broadcaster,
        metrics=metrics,
    )


def build_leadership(
    settings: Settings,
    database: ServerDatabase,
    journal: PostgresJournal,
    writer: Writer,
    broadcaster: Broadcaster,
    on_crash: Callable[[BaseException], None],
) -> Leadership:
    """The lease decides whether this writer process leads or stands by."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{settings.port}"
    lease = PostgresLease(database, holder, settings.lease_ms)

    def on_lead(term: Term) -> None:
        # A fresh snapshot of every link with the meters as the journal leaves them,
        # then the awards still pending (docs/design.md, the watermark).
        floor = writer.service.floor
        values = {
            link: {m["meter"]: m["value"] for m in meters(writer.service, link)}
            for link in floor.links
        }
        broadcaster.lead(term.at_ms, values)
        writer.announce_recovered()
        broadcaster.flush()

    lock = PostgresLeaderLock(lease, lambda: database.dsn) if settings.leader_lock else None
    leadership = Leadership(writer, journal, lease, on_lead=on_lead, lock=lock, on_crash=on_crash)
    broadcaster.leads = leadership.may_announce
    broadcaster.lease_epoch = lambda: leadership.epoch
    return leadership


@contextlib.asynccontextmanager
async def run_writer(
    settings: Settings,
    state: State,
    journal: Journal,
    database: ServerDatabase | None,
    leadership: Leadership | None,
) -> AsyncIterator[None]:
    """Start-up: the database opened, the state recovered from the journal, displays
    started, then the writer leads (or the lease decides). Shut-down in reverse, draining
    the writer first: every submitted request is committed and answered."""
    writer, broadcaster = state["writer"], state["broadcaster"]
    if database is not None:
        await database.open()
    try:
        replayed = await writer.recover()
        # Before anything runs that could write: a refused start leaves the journal as it was.
        refused_at_start(writer.service, writer.opening)
    except BaseException:
        with contextlib.suppress(Exception):
            await journal.close()
        if database is not None:
            await database.close()
        raise
    # Displays show the links of the parameters in force, which the journal says.
    configure_links(broadcaster, writer.service.config)
    log.info("recovered: %d journal entries replayed, head seq %d", replayed, writer.seq)
    # What recovery built lives as long as the process: keep the collector off it.
    gc.collect()
    gc.freeze()
    await broadcaster.start()
    if leadership is not None:
        leadership.start()  # leads once the lease is ours (announces then)
    else:
        writer.announce_recovered()
        broadcaster.flush()
        writer.start()
        await opened(writer.opened)
    signing = start_head_signing(settings, writer, leadership)
    snapshotter = None
    if database is not None and database.dsn is not None:
        # The snapshots, from the journal in a process of its own: the writer never dumps.
        snapshotter = SnapshotterProcess(writer.service.config, Cadence.of(writer.settings))
        await snapshotter.start(database.dsn)
    try:
        async with probing(writer):
            yield
    finally:
        if snapshotter is not None:
            await snapshotter.stop()
        # A leader releases its lease once drained: a standby takes over at once.
        if leadership is not None:
            await leadership.stop()
        else:
            await writer.stop()
        if signing is not None:
            await signing.stop()  # the head the writer left, signed
        await broadcaster.stop()
        with contextlib.suppress(Exception):
            await journal.close()
        if database is not None:
            await database.close()


def start_head_signing(
    settings: Settings, writer: Writer, leadership: Leadership | None
) -> HeadSigning | None:
    """The leader signs the journal's head (docs/operations.md, Signed heads)."""
    if leadership is None:
        signing = head_signing(settings, writer)
    else:
        signing = head_signing(
            settings,
            writer,
            leading=lambda: leadership.leading,
            terms=lambda: leadership.takeovers,
        )
    if signing is not None:
        signing.start()
    return signing


@contextlib.asynccontextmanager
async def probing(writer: Writer) -> AsyncIterator[None]:
    """The database probe (app/api/health.py) runs while the app serves."""
    probe = asyncio.create_task(probe_database(writer), name="jackpot-database-probe")
    try:
        yield
    finally:
        probe.cancel()
        await asyncio.wait({probe})


@contextlib.asynccontextmanager
async def sweeping(signins: SignIns, writer: Writer) -> AsyncIterator[None]:
    """Sessions past their end are ended and logged by the leading writer (app/api/sessions.py)."""

    async def sweep() -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY_S)
            if not writer.standby:
                try:
                    await signins.sweep()
                except Exception:  # the database away: the next sweep tries again
                    log.warning("sessions: the sweep failed", exc_info=True)

    signins.loop = asyncio.get_running_loop()
    task = asyncio.create_task(sweep(), name="jackpot-session-sweep")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait({task})


def display_app(settings: Settings, floor: FloorFile) -> FastAPI:
    """A display-only process (`jackpot serve --role display`): no writer, no database;
    it relays the writer's stream from Redis to its websockets and serves the page."""
    if settings.redis_url is None:
        raise ValueError("a display process needs REDIS_URL: it relays the writer's stream")
    broadcaster = build_broadcaster(settings, "display")
    configure_links(broadcaster, floor_config(floor))
    metrics = PrometheusMetrics()
    metrics.watch_broadcaster(broadcaster)
    watch = screen_watch(settings, floor, broadcaster, metrics)

    @contextlib.asynccontextmanager
    async def running() -> AsyncIterator[dict[str, Broadcaster]]:
        await broadcaster.start()
        try:
            async with watching(watch):
                yield {"broadcaster": broadcaster}
        finally:
            await broadcaster.stop()

    return create_display_app(settings, broadcaster, metrics, running, watch=watch)


def screen_watch(
    settings: Settings, floor: FloorFile, broadcaster: Broadcaster, metrics: PrometheusMetrics
) -> ScreenWatch:
    """What each screen says it shows, judged by the floor's bounds (docs/api.md "Signs")."""
    screens = Screens(
        broadcaster.link_state,
        sign_variance=floor.sign_variance,
        win_shown_within_ms=floor.win_shown_within_ms,
    )
    relay = None
    if settings.redis_url is not None:  # display processes report to the writer
        from app.display.redis_backend import RedisBackend
        from app.display.screen_relay import ScreenRelay

        backend = broadcaster.backend
        if isinstance(backend, RedisBackend):
            relay = ScreenRelay(backend, f"{socket.gethostname()}:{os.getpid()}")
    watch = ScreenWatch(screens, broadcaster, relay=relay)
    metrics.watch_screens(watch)
    return watch


@contextlib.asynccontextmanager
async def watching(watch: ScreenWatch) -> AsyncIterator[None]:
    await watch.start()
    try:
        yield
    finally:
        await watch.stop()


def build_broadcaster(settings: Settings, role: str) -> Broadcaster:
    """In-process without REDIS_URL; through Redis pub/sub with it (docs/design.md,
    Broadcast)."""
    if settings.redis_url is None:
        return Broadcaster(MemoryBackend())
    from app.display.redis_backend import RedisBackend

    return Broadcaster(
        RedisBackend(
            settings.redis_url,
            role="display" if role == "display" else "writer",
            secret=settings.redis_secret,  # the writer signs, display processes check
        )
    )


def configure_links(broadcaster: Broadcaster, config: FloorConfig) -> None:
    """Every link's currency and meters, as displays show them."""
    for link in config.links:
        broadcaster.configure_link(
            link.id,
            config.currency,
            [(m.id, m.name or m.id) for m in link.meters],
            name=link.name or link.id,
        )
