"""Which tables are heard: each table's last status poll (its heartbeat), and the silent
tables the writer's timer suspends when the floor asks it to (rules 5.17, 5.18.2)."""

from __future__ import annotations

from app.state.entries import SuspendEntry
from app.state.floor_state import FloorState
from jackpot.in_play import TABLE


class Liveness:
    """When each table was last heard, by the server's clock. Kept in memory only (a poll
    every few seconds is no journal entry): a table not heard since this writer began
    leading counts from then, so a restart or a takeover flags no one at once."""

    def __init__(self, since: int) -> None:
        self.since = since
        self.heard: dict[str, int] = {}

    def hear(self, table: str, now: int) -> None:
        self.heard[table] = max(now, self.heard.get(table, now))

    def last(self, table: str) -> int:
        return self.heard.get(table, self.since)

    def silent(self, service: FloorState, now: int) -> list[str]:
        """The tables unheard longer than the floor's `table_silence_ms`."""
        silence = service.config.table_silence_ms
        return [t for t in sorted(service.config.tables) if now - self.last(t) > silence]

    def quiet_since(self, service: FloorState) -> dict[str, int]:
        """Each table not suspended as a whole: since when it is quiet, counting a
        supervisor's resumption as word from it (it resumes only by a supervisor, who
        is then given `table_silence_ms` for it to be heard again)."""
        resumed: dict[str, int] = {}
        for p in service.in_play.periods:
            if p.scope == TABLE and p.table is not None and p.until is not None:
                resumed[p.table] = max(p.until, resumed.get(p.table, p.until))
        active = service.in_play.active
        return {
            t: max(self.last(t), resumed.get(t, self.since))
            for t in sorted(service.config.tables)
            if (TABLE, t, 0) not in active
        }

    def due(self, service: FloorState) -> int | None:
        """When the next silent table is to be suspended (None: none, or not asked)."""
        if not service.config.suspend_silent_tables:
            return None
        quiet = self.quiet_since(service).values()
        return min(quiet) + service.config.table_silence_ms + 1 if quiet else None

    def suspensions(self, service: FloorState, now: int) -> list[SuspendEntry]:
        """The `suspend` entries of the tables silent now (by null: the writer's timer)."""
        if not service.config.suspend_silent_tables:
            return []
        silence = service.config.table_silence_ms
        return [
            SuspendEntry(
                now=now,
                by=None,
                link=None,
                table=table,
                boxes=None,
                reason=f"no word from the table for {now - since} ms "
                f"(table_silence_ms {silence}): rule 5.17",
            )  # fmt: skip
            for table, since in self.quiet_since(service).items()
            if now - since > silence
        ]
