"""Display processes' screens, reported to the writer through Redis.

Each display process keeps its own screens (app/display/screens.py) and, once a second,
puts their rows in Redis under `jackpot:screens:<process>` (signed as the writer's
states are, expiring after 30 s); the writer reads every such key once a second and
lists those rows beside its own in `GET /v1/screens` and its metrics. Why this way
(docs/api.md "Signs"): the operators' routes and the console are the writer's, so the
writer must know every screen; only judged rows travel (not every ack), a few hundred
bytes per screen a second, and a display process that loses Redis goes on judging its
screens, its rows ageing out at the writer instead of lingering.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.display.redis_backend import RedisBackend
from app.display.screens import MAX_SCREENS

log = logging.getLogger("jackpot.screens")
PREFIX = "jackpot:screens:"
EXPIRE_MS = 30_000


class ScreenRelay:
    """`put` (a display process) or `take` (the writer) the screens' rows."""

    def __init__(self, backend: RedisBackend, process: str) -> None:
        self.backend, self.process = backend, process
        self.key = PREFIX + process
        self.redis: aioredis.Redis | None = None
        self.failing = False

    async def start(self) -> None:
        self.redis = aioredis.Redis.from_url(
            self.backend.url, decode_responses=False, socket_timeout=2.0,
            socket_connect_timeout=2.0,
        )  # fmt: skip

    async def stop(self) -> None:
        if self.redis is not None:
            await self.redis.aclose()
            self.redis = None

    async def put(self, rows: list[dict[str, Any]]) -> None:
        """This display process's screens, for the writer."""
        assert self.redis is not None
        text = orjson.dumps([{**r, "process": self.process} for r in rows[:MAX_SCREENS]]).decode()
        await self._safely(
            self.redis.set(self.key, self.backend.sign(self.key, text), px=EXPIRE_MS)
        )

    async def take(self) -> dict[str, dict[str, Any]]:
        """Every display process's screens (rows that are not well signed are skipped)."""
        assert self.redis is not None
        rows: dict[str, dict[str, Any]] = {}
        try:
            keys = [k async for k in self.redis.scan_iter(match=PREFIX + "*", count=500)]
            values = await self.redis.mget(keys) if keys else []
        except (RedisError, OSError) as error:
            self._failed(error)
            return rows
        self.failing = False
        for key, value in zip(keys, values, strict=True):
            name = key.decode(errors="replace")
            text = None if value is None or name == self.key else self.backend.open(name, value)
            try:
                listed = [] if text is None else orjson.loads(text)
            except orjson.JSONDecodeError:
                listed = []
            for row in listed if isinstance(listed, list) else []:
                if isinstance(row, dict) and isinstance(row.get("screen"), str):
                    rows[row["screen"]] = row
        return rows

    async def _safely(self, call: Any) -> None:
        try:
            await call
        except (RedisError, OSError) as error:
            self._failed(error)
        else:
            self.failing = False

    def _failed(self, error: BaseException) -> None:
        if not self.failing:  # once per outage
            log.warning("screens: Redis unavailable (%s): screens reported locally only", error)
        self.failing = True
