"""The FastAPI application: `create_app()` wires the floor, the journal, the writer and displays."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.api import problems, table_fastpath
from app.api.auth import floor_tokens
from app.api.body_limit import BodyLimit
from app.api.health import health_answer, probe_database, writer_health
from app.api.routes import TABLE_BODIES, router
from app.api.schemas import problem_responses
from app.api.standby import StandbyGate
from app.api.table_fastpath import Edge, FastPathApp
from app.api.table_lane import TableLane
from app.api.table_routes import table_event_handlers
from app.config.floor_config import floor_config
from app.config.floor_file import Floor as FloorFile
from app.config.settings import Settings
from app.console.routes import console_router
from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.routes import display_router
from app.ops.logs import RequestContextMiddleware
from app.ops.metrics import Metrics, metrics_router
from app.state.floor_state import Service
from app.state.views import meters
from app.store.journal import Journal
from app.writer.follower import Leadership
from app.writer.head_signing import HeadSigning, head_signing
from app.writer.writer import Writer

log = logging.getLogger("jackpot")


@dataclass
class Resources:
    """What the lifespan opened, to close in reverse order."""

    journal: Journal | None = None
    embedded: Any = None
    pool: Any = None
    leadership: Leadership | None = None  # when the app opened PostgreSQL itself


def create_app(
    settings: Settings,
    floor: FloorFile,
    *,
    journal: Journal | None = None,
    broadcaster: Broadcaster | None = None,
) -> FastAPI:
    """The server. With `journal` given (tests), it is used as is; otherwise PostgreSQL:
    DATABASE_URL, or an embedded server under settings.data_dir, migrated at start."""
    config, tokens = floor_config(floor), floor_tokens(floor)
    broadcaster = broadcaster or _broadcaster(settings, "writer")
    for link in config.links:
        broadcaster.configure_link(
            link.id, config.currency, [(m.id, m.name or m.id) for m in link.meters]
        )
    resources = Resources(journal=journal)
    metrics = Metrics()
    writer = Writer(
        Service(config), journal if journal is not None else _unset_journal(), metrics=metrics
    )
    writer.max_batch = settings.commit_max_batch
    writer.snapshot_every = settings.snapshot_every
    writer.broadcast = broadcaster
    metrics.watch_writer(writer)
    metrics.watch_broadcaster(broadcaster)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if resources.journal is None:
            resources.journal = await _open_journal(settings, resources)
            resources.leadership = _leadership(settings, resources, writer, broadcaster)
            metrics.watch_leadership(resources.leadership)
        writer.journal = resources.journal
        replayed = await writer.recover()
        log.info("recovered: %d journal entries replayed, head seq %d", replayed, writer.seq)
        # What recovery built lives as long as the process: keep the collector off it.
        gc.collect()
        gc.freeze()
        await broadcaster.start()
        if resources.leadership is not None:
            resources.leadership.start()  # leads once the lease is ours (announces then)
        else:
            writer.announce_recovered()
            broadcaster.flush()
            writer.start()
        probe = asyncio.create_task(probe_database(writer), name="jackpot-database-probe")
        signing = _head_signing(settings, writer, resources.leadership)
        app.state.ready = True
        try:
            yield
        finally:
            app.state.ready = False
            probe.cancel()
            await asyncio.wait({probe})
            # Drains: every submitted request is committed and answered (a leader then
            # releases its lease: a standby takes over at once).
            if resources.leadership is not None:
                await resources.leadership.stop()
            else:
                await writer.stop()
            if signing is not None:
                await signing.stop()  # the head the writer left, signed
            await broadcaster.stop()
            await _close(resources)

    app = FastPathApp(
        title="Linked progressive jackpot server",
        version="1",
        lifespan=lifespan,
        **api_docs(settings),
    )
    app.state.ready = False
    app.state.writer = writer
    app.state.metrics = metrics
    problems.install(app)
    events = table_event_handlers(writer, tokens)
    api = router(writer, tokens, events)
    # The edge, outermost first, around every route and the table events' direct route:
    # the request context (request id, logging context, response metrics), the body limit,
    # a standby's 503 (app/api/standby.py).
    edge: Edge = [
        (RequestContextMiddleware, {"access_log": settings.access_log, "metrics": metrics}),
        (BodyLimit, {"limit": settings.max_body_bytes}),
        (StandbyGate, {"writer": writer}),
    ]
    table_events = table_fastpath.install(app, events, edge)
    # What `jackpot serve`'s protocol hands table events to (app/cli/serving.py).
    app.state.table_lane = TableLane(
        table_events,
        writer,
        limit=settings.max_body_bytes,
        metrics=metrics,
        access_log=settings.access_log,
    )
    app.include_router(api)
    _describe_bodies(app, TABLE_BODIES)
    app.include_router(metrics_router(metrics))
    app.include_router(console_router())
    app.include_router(
        display_router(broadcaster, display_token=settings.display_token),
        responses=problem_responses(404, 422),
    )

    @app.get("/health", tags=["service"], responses=HEALTH_RESPONSES)
    async def health() -> JSONResponse:
        """200 while this process leads and events are accepted; 503 on a standby, while
        starting or while the database cannot record them (app/api/health.py). The
        journal's head: `/v1/journal/head`."""
        return writer_health(app.state.ready, writer)

    return app


HEALTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {"description": '`{"status": "starting" | "degraded" | "standby", "role"}`'}
}


def _leadership(
    settings: Settings, resources: Resources, writer: Writer, broadcaster: Broadcaster
) -> Leadership:
    """The lease decides whether this writer process leads or stands by (issue 19)."""
    from app.store.journal import PostgresJournal
    from app.store.lease import PostgresLease, Term

    journal = resources.journal
    assert isinstance(journal, PostgresJournal)
    holder = f"{socket.gethostname()}:{os.getpid()}:{settings.port}"
    lease = PostgresLease(resources.pool, holder, settings.lease_ms)

    def on_lead(term: Term) -> None:
        # A fresh snapshot of every link with the meters as the journal leaves them,
        # then the awards still pending (DESIGN.md, the watermark).
        floor = writer.service.floor
        values = {
            link: {m["meter"]: m["value"] for m in meters(writer.service, link)}
            for link in floor.links
        }
        broadcaster.lead(term.at_ms, values)
        writer.announce_recovered()
        broadcaster.flush()

    leadership = Leadership(writer, journal, lease, on_lead=on_lead)
    broadcaster.leads = leadership.may_announce
    return leadership


def _head_signing(
    settings: Settings, writer: Writer, leadership: Leadership | None
) -> HeadSigning | None:
    """The leader signs the journal's head (docs/operations.md, Signed heads), started here."""
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


def api_docs(settings: Settings) -> dict[str, Any]:
    """FastAPI's /docs and /redoc load their pages' scripts from a public CDN: served only
    with JACKPOT_API_DOCS=1 (the demo). /openapi.json is always served."""
    if settings.api_docs:
        return {}
    return {"docs_url": None, "redoc_url": None}


def _describe_bodies(app: FastAPI, models: tuple[type[BaseModel], ...]) -> None:
    """Put in the OpenAPI components the schemas of request bodies that routes read
    themselves (app/api/routes.py `table_request`), as FastAPI does for those it reads."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()  # FastAPI keeps it as app.openapi_schema
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in models:
            body = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(body.pop("$defs", {}))
            components[model.__name__] = body
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_display_app(settings: Settings, floor: FloorFile) -> FastAPI:
    """A display-only process (`jackpot serve --role display`): no writer, no database;
    it relays the writer's stream from Redis to its websockets and serves the page."""
    if settings.redis_url is None:
        raise ValueError("a display process needs REDIS_URL: it relays the writer's stream")
    config = floor_config(floor)
    broadcaster = _broadcaster(settings, "display")
    for link in config.links:
        broadcaster.configure_link(
            link.id, config.currency, [(m.id, m.name or m.id) for m in link.meters]
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await broadcaster.start()
        app.state.ready = True
        try:
            yield
        finally:
            await broadcaster.stop()

    app = FastAPI(title="Jackpot displays", version="1", lifespan=lifespan, **api_docs(settings))
    app.state.ready = False
    problems.install(app)
    metrics = Metrics()
    metrics.watch_broadcaster(broadcaster)
    app.state.metrics = metrics
    app.add_middleware(RequestContextMiddleware, access_log=settings.access_log, metrics=metrics)
    app.include_router(display_router(broadcaster, display_token=settings.display_token))
    app.include_router(metrics_router(metrics))

    @app.get("/health", tags=["service"], responses=HEALTH_RESPONSES)
    async def health() -> JSONResponse:
        # Its relay is its only source: while it is not connected, screens here go stale.
        relaying = getattr(broadcaster.backend, "connected", True)
        return health_answer("display", app.state.ready, degraded=not relaying)

    return app


def _broadcaster(settings: Settings, role: str) -> Broadcaster:
    """In-process without REDIS_URL; through Redis pub/sub with it (DESIGN.md, Broadcast)."""
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


def _unset_journal() -> Journal:
    from app.store.journal import MemoryJournal

    return MemoryJournal()


async def _open_journal(settings: Settings, resources: Resources) -> Journal:
    from app.store.database import create_pool, migrate, start_embedded
    from app.store.journal import PostgresJournal

    dsn = settings.database_url
    if dsn is None:
        resources.embedded = await start_embedded(settings.data_dir)
        dsn = resources.embedded.dsn
    await migrate(dsn)
    resources.pool = await create_pool(dsn)
    return PostgresJournal(resources.pool, dsn=dsn)


async def _close(resources: Resources) -> None:
    if resources.journal is not None:
        with contextlib.suppress(Exception):
            await resources.journal.close()
    if resources.pool is not None:
        with contextlib.suppress(Exception):
            await resources.pool.close()
    if resources.embedded is not None:
        with contextlib.suppress(Exception):
            await resources.embedded.stop()
