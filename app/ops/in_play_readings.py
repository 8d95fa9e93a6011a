"""What the metrics read of what is in play: suspensions in force, tables unheard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from app.ops.readings import Read, Value
from app.state.floor_state import FloorState


@runtime_checkable
class InPlayReadings(Protocol):
    """What is read of the writer (app/writer/writer.py's Writer)."""

    @property
    def service(self) -> FloorState: ...
    @property
    def clock(self) -> Callable[[], int]: ...
    def last_heard(self, table: str) -> int: ...


def in_play_reads(writer: InPlayReadings) -> list[Read]:
    def suspensions() -> dict[tuple[str, ...], Value]:
        counts: dict[tuple[str, ...], Value] = {(s,): 0 for s in ("link", "table", "box")}
        for period in writer.service.in_play.active.values():
            counts[(period.scope,)] = int(counts[(period.scope,)]) + 1
        return counts

    def heard_age() -> dict[tuple[str, ...], Value]:
        now = writer.clock()
        return {
            (table,): max(0, now - writer.last_heard(table)) / 1000
            for table in writer.service.config.tables
        }

    def unheard() -> dict[tuple[str, ...], Value]:
        silence = writer.service.config.table_silence_ms
        return {k: age * 1000 > silence for k, age in heard_age().items()}

    return [
        Read(
            "jackpot_suspensions",
            "Suspensions in force: links, whole tables and boxes out of play (5.17, 5.18.2)",
            suspensions,
            labels=("scope",),
        ),
        Read(
            "jackpot_table_heard_age_seconds",
            "Seconds since the table last asked what is in play (its heartbeat)",
            heard_age,
            labels=("table",),
        ),
        Read(
            "jackpot_table_unheard",
            "1 while the table is unheard longer than the floor's table_silence_ms",
            unheard,
            labels=("table",),
        ),
    ]
