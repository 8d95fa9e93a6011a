"""The HTTP routes, per audience: the tables' (app.api.table_routes) and the operators'
(app.api.operator_routes); the displays' are app.display.link_routes."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter

from app.api.auth import Tokens
from app.api.floor_routes import floor_routes
from app.api.operator_routes import operator_routes
from app.api.requests import TABLE_BODIES
from app.api.schemas import problem_responses
from app.api.table_routes import EventHandler, table_routes
from app.writer.writer import Writer

__all__ = ["TABLE_BODIES", "router"]


def router(writer: Writer, tokens: Tokens, events: Mapping[str, EventHandler]) -> APIRouter:
    """Thin entry points: authenticate, validate, hand a command to the writer, answer.
    `events`: the table events' handlers (app/api/table_routes.py `table_event_handlers`)."""
    api = APIRouter(responses=problem_responses(401, 403, 404, 409, 422, 503))
    table_routes(api, writer, tokens, events)
    operator_routes(api, writer, tokens)
    floor_routes(api, writer, tokens)
    return api
