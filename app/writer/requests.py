"""How HTTP handlers hand a request to the writer and get its answer once it is durable."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from app.state.commands import Command
from app.store.errors import JournalUnavailable
from app.store.journal import JournalRow
from app.writer.chain import loads
from app.writer.group import Reply, Submission
from app.writer.left_memory import left_memory
from app.writer.timer import Timer
from jackpot.errors import JackpotError, UnknownError
from tables.errors import TablesError


class Requests(Timer):
    """`submit` answers a dict; `submit_json` the answer's JSON bytes, as recorded."""

    __slots__ = ()

    async def submit(
        self,
        kind: str,
        table: str | None,
        round_id: str | None,
        command: Command,
        by: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Hand a request to the writer; returns (HTTP status, answer) once it is durable."""
        status, answer = await self._submit(kind, table, round_id, command, by)
        return status, loads(answer) if isinstance(answer, str) else answer

    async def submit_json(
        self, kind: str, table: str | None, round_id: str | None, command: Command
    ) -> tuple[int, bytes]:
        """As `submit`, the answer as JSON bytes: the text the journal records with the
        entry, sent as it is to a first post and to its retries (issue 21)."""
        status, answer = await self._submit(kind, table, round_id, command, None)
        return status, answer.encode() if isinstance(answer, str) else orjson.dumps(answer)

    async def _submit(
        self,
        kind: str,
        table: str | None,
        round_id: str | None,
        command: Command,
        by: str | None,
    ) -> tuple[int, Reply]:
        if self.stopping or self.standby:
            raise self.closed()
        future: asyncio.Future[tuple[int, Reply]] = asyncio.get_running_loop().create_future()
        sub = Submission(kind, table, round_id, command, by, future)
        await self.queue.put(sub)
        try:
            status, answer = await future
        except (JackpotError, TablesError) as error:
            if not sub.may_be_recorded or sub.idem_key is None:
                raise
            # A late retry of an event recorded for a round no longer in memory (bets
            # closed long ago, say) is refused by the state, but the journal has its first
            # answer. Asked here, after the refusal: a table flooding events for unknown
            # rounds must not hold up the commits of the others (issue 17, item 6). With
            # the journal unreachable, that is a 503: it may well be recorded.
            try:
                row = await self.lookup(sub.idem_key)
                unknown = row is None and isinstance(error, UnknownError)
                left = await left_memory(sub, self.lookup) if unknown else None
            except JournalUnavailable:
                self.metrics.unavailable([(sub.kind, sub.table)])
                raise
            if row is None:
                self.metrics.event(sub.kind, sub.table, "refused")
                if left is not None:
                    raise left from None
                raise
            return self._recorded(sub, row)
        if not answer and sub.idem_key is not None:
            # A retry whose first answer is no longer remembered: the journal's.
            row = await self.lookup(sub.idem_key)
            if row is not None and row.answer is not None:
                answer = row.answer
        return status, answer

    async def lookup(self, idem_key: str) -> JournalRow | None:
        """The journal's row of an event, for the HTTP handlers. At most `LOOKUPS` at a
        time: a flood of them must not take every pooled connection, or the writer's
        commits would queue behind them for one."""
        async with self.lookups:
            return await self.journal.lookup(idem_key)
