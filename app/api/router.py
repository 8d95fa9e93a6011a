"""The API's routes, per audience: the tables' (app/api/table_events), the operators'
(app/api/operator_routes.py) and the floor's (app/api/floor_routes.py); the displays'
are app/display/routes.py."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter
from pydantic import BaseModel

from app.api.alarm_routes import AcknowledgeRequest, alarm_routes
from app.api.auth import Tokens
from app.api.config_routes import config_routes
from app.api.floor_routes import floor_routes
from app.api.in_play_routes import IN_PLAY_BODIES, in_play_routes
from app.api.operator_routes import operator_routes
from app.api.payment_routes import PAYMENT_BODIES, payment_routes
from app.api.schemas import CorrectionRequest, ResetRequest, SeedRequest, problem_responses
from app.api.table_events.fastapi_routes import TABLE_EVENT_BODIES, table_routes
from app.api.table_events.handlers import EventHandler
from app.api.transfer_routes import TRANSFER_BODIES, transfer_routes
from app.writer.writer import Writer

# The request bodies the routes read themselves (after the token): the app puts their
# schemas in the OpenAPI components (FastAPI adds only those of the parameters it reads).
BODIES_READ_BY_ROUTES: tuple[type[BaseModel], ...] = (
    *TABLE_EVENT_BODIES, SeedRequest, ResetRequest, CorrectionRequest,
    *PAYMENT_BODIES,
    *IN_PLAY_BODIES,
    AcknowledgeRequest,
    *TRANSFER_BODIES,
)  # fmt: skip


def router(writer: Writer, tokens: Tokens, events: Mapping[str, EventHandler]) -> APIRouter:
    """Thin entry points: authenticate, validate, hand a command to the writer, answer.
    `events`: the table events' handlers (app/api/table_events/handlers.py)."""
    api = APIRouter(responses=problem_responses(401, 403, 404, 409, 422, 503))
    table_routes(api, writer, tokens, events)
    operator_routes(api, writer, tokens)
    payment_routes(api, writer, tokens)
    floor_routes(api, writer, tokens)
    in_play_routes(api, writer, tokens)
    alarm_routes(api, writer, tokens)
    config_routes(api, writer, tokens)
    transfer_routes(api, writer, tokens)
    return api
