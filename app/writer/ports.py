"""What the writer needs of displays and of metrics: it never imports their implementations
(app/display/broadcaster.py, app/ops/metrics.py); app/api/application.py wires them in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Protocol, Self, TypeVar

EventOutcome = Literal["accepted", "retry", "refused", "unavailable"]


class Broadcast(Protocol):
    def meters(self, link: str, values: dict[str, str]) -> None: ...
    def win(self, link: str, win: dict[str, object]) -> None: ...
    def status(self, link: str | None, status: str, detail: str = "") -> None: ...
    def in_play(self, link: str, info: dict[str, object]) -> None: ...
    def levels(self, link: str, levels: dict[str, dict[str, object]]) -> None: ...
    def retire(self, link: str) -> None: ...


class StagedCounts(Protocol):
    """The counts staged for one group, counted once it is answered; a group merged into
    the one gathered before it brings its counts along."""

    def merge(self, later: Self) -> None: ...


S = TypeVar("S", bound=StagedCounts)


class WriterMetrics(Protocol[S]):
    """What the writer counts on its hot path (app/ops/metrics.py says what each means)."""

    def event(self, kind: str, table: str | None, outcome: EventOutcome) -> None: ...
    def retry(self, kind: str, table: str | None) -> None: ...
    def applied(self, kind: str, table: str | None, result: object) -> None: ...
    def take(self) -> S: ...
    def commit(self, rows: int, seconds: float, staged: S | None = None) -> None: ...
    def settle(self, staged: S | None = None) -> None: ...
    def unavailable(self, requests: Iterable[tuple[str, str | None]]) -> None: ...


class _Nothing:
    def merge(self, later: Self) -> None:
        pass


class Uncounted:
    """Metrics that count nothing: a writer built without them (tests, benchmarks)."""

    def event(self, kind: str, table: str | None, outcome: EventOutcome) -> None:
        pass

    def retry(self, kind: str, table: str | None) -> None:
        pass

    def applied(self, kind: str, table: str | None, result: object) -> None:
        pass

    def take(self) -> _Nothing:
        return _Nothing()

    def commit(self, rows: int, seconds: float, staged: Any = None) -> None:
        pass

    def settle(self, staged: Any = None) -> None:
        pass

    def unavailable(self, requests: Iterable[tuple[str, str | None]]) -> None:
        pass
