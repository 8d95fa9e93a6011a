"""The FastAPI applications over parts built elsewhere (app/compose.py): a writer
process's routes, edge and health; a display process's relay and health."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.api import problems
from app.api.account_changes import AccountChanges
from app.api.account_routes import ACCOUNT_BODIES, account_routes
from app.api.auth import Tokens
from app.api.gates import BodyLimit, StandbyGate
from app.api.health import health_answer, writer_health
from app.api.passwords import Passwords
from app.api.router import BODIES_READ_BY_ROUTES, router
from app.api.schemas import problem_responses
from app.api.screen_routes import screen_router
from app.api.sessions import SessionGate, SignIns
from app.api.signin_routes import SIGNIN_BODIES, signin_routes
from app.api.table_events import direct_route
from app.api.table_events.direct_route import Edge, FastPathApp
from app.api.table_events.handlers import table_event_handlers
from app.api.token_routes import TOKEN_BODIES, token_routes
from app.config.settings import Settings
from app.console.page_routes import console_router
from app.display.broadcaster import Broadcaster
from app.display.link_routes import display_router
from app.display.screen_watch import ScreenWatch
from app.ops.logs import RequestContextMiddleware
from app.ops.metrics import PrometheusMetrics, metrics_router
from app.writer.writer import Writer

# What runs while the app serves: entered at start-up, left at shut-down. What it yields
# is the lifespan's state, which Starlette copies into every request's `request.state`.
Running = Callable[[], AbstractAsyncContextManager[Mapping[str, Any]]]


class Readiness:
    """Whether the app serves: ready once `running` has started, until it starts to stop."""

    def __init__(self, running: Running) -> None:
        self.running, self.ready = running, False

    @contextlib.asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[Mapping[str, Any]]:
        async with self.running() as state:
            self.ready = True
            try:
                yield state
            finally:
                self.ready = False


def create_app(
    settings: Settings,
    tokens: Tokens,
    writer: Writer,
    broadcaster: Broadcaster,
    metrics: PrometheusMetrics,
    running: Running,
    changes: AccountChanges | None = None,
    signins: SignIns | None = None,
    watch: ScreenWatch | None = None,
) -> FastAPI:
    """A writer process's app: the routes over `writer`, the edge around them, displays
    fed by `broadcaster`, /metrics and /health. `running` starts and stops what they use;
    `watch`: what the screens acknowledge (docs/api.md "Signs")."""
    readiness = Readiness(running)
    app = FastPathApp(
        title="Linked progressive jackpot server",
        version="1",
        lifespan=readiness.lifespan,
        **api_docs(settings),
    )
    problems.install(app)
    events = table_event_handlers(writer, tokens)
    api = router(writer, tokens, events)
    # The edge, outermost first, around every route and the table events' direct route:
    # the request context (request id, logging context, response metrics), the body limit,
    # a standby's 503 (app/api/gates.py).
    edge: Edge = [
        (RequestContextMiddleware, {"access_log": settings.access_log, "metrics": metrics}),
        (BodyLimit, {"limit": settings.max_body_bytes}),
        (StandbyGate, {"writer": writer}),
    ]
    if signins is not None:
        # Inside the edge: a refusal is logged and counted as every answer is.
        app.add_middleware(SessionGate, signins=signins)
    direct_route.install(app, events, edge)
    app.include_router(api)
    changes = changes or AccountChanges(writer, tokens, Passwords())
    app.include_router(account_routes(changes))
    app.include_router(token_routes(changes))
    if signins is not None:
        app.include_router(signin_routes(signins, tokens, writer))
    _describe_bodies(app, (*BODIES_READ_BY_ROUTES, *ACCOUNT_BODIES, *SIGNIN_BODIES, *TOKEN_BODIES))
    app.include_router(metrics_router(metrics))
    app.include_router(console_router())
    screens = None if watch is None else watch.screens
    app.include_router(
        display_router(broadcaster, display_token=settings.display_token, screens=screens),
        responses=problem_responses(404, 422),
    )
    if watch is not None:
        app.include_router(
            screen_router(watch, tokens), responses=problem_responses(401, 403, 422, 503)
        )

    @app.get("/health", tags=["service"], responses=HEALTH_RESPONSES)
    async def health() -> JSONResponse:
        """200 while this process leads and events are accepted; 503 on a standby, while
        starting or while the database cannot record them (app/api/health.py). The
        journal's head: `/v1/journal/head`."""
        return writer_health(readiness.ready, writer)

    return app


def api_docs(settings: Settings) -> dict[str, Any]:
    """FastAPI's /docs and /redoc load their pages' scripts from a public CDN: served only
    with JACKPOT_API_DOCS=1 (the demo). /openapi.json is always served."""
    if settings.api_docs:
        return {}
    return {"docs_url": None, "redoc_url": None}


HEALTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {"description": '`{"status": "starting" | "degraded" | "standby", "role"}`'}
}


def _describe_bodies(app: FastAPI, models: tuple[type[BaseModel], ...]) -> None:
    """Put in the OpenAPI components the schemas of request bodies that routes read
    themselves (app/api/router.py), as FastAPI does for those it reads."""
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


def create_display_app(
    settings: Settings,
    broadcaster: Broadcaster,
    metrics: PrometheusMetrics,
    running: Running,
    *,
    watch: ScreenWatch | None = None,
) -> FastAPI:
    """A display-only process's app (`jackpot serve --role display`): no writer, no
    database; `broadcaster` relays the writer's stream to its websockets."""
    readiness = Readiness(running)
    app = FastAPI(
        title="Jackpot displays", version="1", lifespan=readiness.lifespan, **api_docs(settings)
    )
    problems.install(app)
    app.add_middleware(RequestContextMiddleware, access_log=settings.access_log, metrics=metrics)
    screens = None if watch is None else watch.screens
    app.include_router(
        display_router(broadcaster, display_token=settings.display_token, screens=screens)
    )
    # Its screens are listed by the writer (app/display/screen_relay.py): the operators'
    # routes are the writer's, as nginx routes them.
    app.include_router(metrics_router(metrics))

    @app.get("/health", tags=["service"], responses=HEALTH_RESPONSES)
    async def health() -> JSONResponse:
        # Its relay is its only source: while it is not connected, screens here go stale.
        relaying = getattr(broadcaster.backend, "connected", True)
        return health_answer("display", readiness.ready, degraded=not relaying)

    return app
