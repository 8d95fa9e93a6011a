"""The signs' routes (operators): every screen with its lag, variance and flags, and the
sign reconciliation report (docs/api.md "Signs")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.auth import Tokens
from app.api.reading import Auth, time_range
from app.api.responses import JSONResponse
from app.display.screen_watch import ScreenWatch
from app.state.timefmt import format_time


def screen_router(watch: ScreenWatch, tokens: Tokens) -> APIRouter:
    router = APIRouter(tags=["operators"])
    screens = watch.screens

    @router.get("/v1/screens")
    async def get_screens(authorization: Auth = None) -> JSONResponse:
        """Each screen: its link, name, address, last ack, seq and values; lag (ms and
        seq behind), variance against the committed values, stale, flags."""
        tokens.role(authorization, "operator")
        now = watch.clock()
        return JSONResponse({
            "now": format_time(now),
            "sign_variance": watch.sign_variance_text(),
            "win_shown_within_ms": screens.win_shown_within_ms,
            "screens": screens.views(now),
        })  # fmt: skip

    @router.get("/v1/reports/signs")
    async def get_signs_report(
        authorization: Auth = None,
        from_: Annotated[str | None, Query(alias="from")] = None,
        to: str | None = None,
    ) -> JSONResponse:
        """Per screen over the period: time in and out of variance, the worst variance,
        the final wins it had to show and their delays (since this process started)."""
        tokens.role(authorization, "operator")
        start, end = time_range(from_, to)
        now = watch.clock()
        return JSONResponse({
            "from": from_, "to": to, "since": format_time(watch.started_at),
            "screens": screens.report(start, end, now),
        })  # fmt: skip

    return router
