"""The screens' watch: what the broadcaster sends each link and when, and the ticker that
judges every screen once a second (app/display/screens.py keeps and judges them)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import orjson

from app.display.broadcaster import Broadcaster
from app.display.screens import Screens, counts
from jackpot.money import format_money

if TYPE_CHECKING:  # Redis is imported only by a process that uses it
    from app.display.screen_relay import ScreenRelay

log = logging.getLogger("jackpot.screens")


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class ScreenWatch:
    """Observes the broadcaster's stream (synchronously, as it fans out: a dict lookup and
    a small JSON read per message) and runs the ticker."""

    def __init__(
        self,
        screens: Screens,
        broadcaster: Broadcaster,
        clock: Callable[[], int] = wall_ms,
        relay: ScreenRelay | None = None,
    ) -> None:
        self.screens, self.broadcaster, self.clock = screens, broadcaster, clock
        # Through Redis: a display process puts its screens there, the writer takes them.
        self.relay = relay
        self.task: asyncio.Task[None] | None = None
        self.started_at = clock()
        broadcaster.observe = self.observe

    def sign_variance_text(self) -> str:
        return format_money(self.screens.sign_variance)

    def readings(self) -> list[tuple[str, str, Callable[[], int]]]:
        """The screens' gauges (name, help, read) for /metrics."""

        def count(key: str) -> Callable[[], int]:
            return lambda: counts(self.screens.views(self.clock()))[key]

        return [
            ("jackpot_screens", "Display screens known (connected or not)", count("screens")),
            ("jackpot_screens_stale", "Screens with no ack for 15 s", count("stale")),
            (
                "jackpot_screens_flagged_variance",
                "Screens showing a value off the committed one by more than sign_variance "
                "for over 30 s",
                count("flagged_variance"),
            ),
            (
                "jackpot_screens_flagged_win",
                "Screens that did not show their last final win within win_shown_within_ms",
                count("flagged_win"),
            ),
        ]

    def observe(self, link: str, text: str) -> None:
        try:
            message = orjson.loads(text)
            seq = int(message["seq"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return
        final = message.get("type") == "win" and message.get("state") == "final"
        self.screens.seen(link, seq, self.clock(), str(message["award_id"]) if final else None)

    async def start(self) -> None:
        if self.relay is not None:
            await self.relay.start()
        self.task = asyncio.create_task(self._tick(), name="jackpot-screens")

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
        if self.relay is not None:
            await self.relay.stop()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                now = self.clock()
                self.screens.check(now)
                await self._relay(now)
            except Exception:  # a bug here must not stop the judging for good
                log.exception("screens: judging failed")

    async def _relay(self, now: int) -> None:
        relay = self.relay
        if relay is None:
            return
        if self.broadcaster.role == "display":
            await relay.put([self.screens.view(s, now) for s in self.screens.screens.values()])
        else:
            self.screens.remote = await relay.take()
