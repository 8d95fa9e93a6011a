"""Prometheus metrics: what the writer counts on its hot path, and gauges read at scrape time.

Two kinds of figures, both exported by one collector on the metrics' own registry (not
prometheus_client's global one: a test may build several apps in one process):

- **counted**: events by kind, table and outcome, late events, group-commit batch sizes
  and commit latency, HTTP answers by status. The writer bumps plain ints in dicts (a
  dict increment, ~0.1 us; a prometheus_client Counter child takes a lock and costs about
  four times that). Everything runs on the event loop's thread, so nothing needs a lock.
- **read**: queue depth, pending awards, open and stale rounds, displays, journal seq,
  database and Redis status. Callables registered with `read()` (`watch_writer`,
  `watch_broadcaster` register the standard ones) run only when Prometheus scrapes:
  nothing is computed per request.

An event's outcome is only known once its group is committed: `applied` and `retry`
*stage* it; `commit` (the group is durable) or `settle` (nothing needed committing)
count what was staged; `unavailable` drops it and counts the group's requests as
refused with a 503; `discard` drops it when the writer applies the group again. So
`accepted` never counts an event that was not recorded, nor one twice.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from app.ops.in_play_readings import InPlayReadings, in_play_reads
from app.ops.meter_reads import meter_reads
from app.ops.payment_readings import PaymentReadings, payment_reads
from app.ops.readings import (
    BroadcasterReadings,
    LeadershipReadings,
    Read,
    Reading,
    WriterReadings,
    broadcaster_reads,
    leadership_reads,
    writer_reads,
)
from jackpot.floor import BetsResult, OutcomeResult


class ScreenReadings(Protocol):
    def readings(self) -> list[tuple[str, str, Callable[[], int]]]: ...


log = logging.getLogger("jackpot.metrics")

# prometheus_client's CONTENT_TYPE_LATEST says version=1.0.0 since 0.22; the text is the
# classic format, which every Prometheus version reads as 0.0.4.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Outcome = Literal["accepted", "retry", "refused", "unavailable"]
# rows per group commit: max_batch is 512 by default (settings.commit_max_batch)
BATCH_BUCKETS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0)
# from one fast fsync to seconds, which mean the database is in trouble
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class _Buckets:
    """A histogram as plain ints: one count per bucket (not cumulative) plus +Inf."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        # bisect_left: a value equal to a bound belongs to that bound's bucket (le).
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def family(self, name: str, help_text: str) -> HistogramMetricFamily:
        cumulative, buckets = 0, []
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            cumulative += count
            buckets.append((_le(bound), float(cumulative)))
        return HistogramMetricFamily(name, help_text, buckets=buckets, sum_value=self.total)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


@dataclass(frozen=True, slots=True)
class StagedSamples:
    """Counts staged for one group of requests, counted once it is answered."""

    events: list[tuple[str, str, str]]
    late: list[str]

    def merge(self, later: StagedSamples) -> None:
        """A group merged into the one gathered before it brings its counts along."""
        self.events.extend(later.events)
        self.late.extend(later.late)


class PrometheusMetrics:
    """The registry, the hot-path counters and the scrape-time readings of one process."""

    def __init__(self, *, process: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.events: dict[tuple[str, str, str], int] = {}
        self.late_events: dict[str, int] = {}
        self.responses: dict[int, int] = {}
        self.batch_rows = _Buckets(BATCH_BUCKETS)
        self.commit_seconds = _Buckets(COMMIT_BUCKETS)
        self._staged: list[tuple[str, str, str]] = []
        self._staged_late: list[str] = []
        self._reads: list[Read] = []
        self.registry.register(_Collector(self))
        if process:  # CPU, memory, open files, GC: read from /proc and gc at scrape time
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            GCCollector(registry=self.registry)

    # -- hot path: the writer's calls ---------------------------------------------------

    def event(self, kind: str, table: str | None, outcome: Outcome) -> None:
        """Count one request at once (a refusal: its answer does not wait for a commit)."""
        key = (kind, table or "", outcome)
        self.events[key] = self.events.get(key, 0) + 1

    def retry(self, kind: str, table: str | None) -> None:
        """A retry with the same body: answered once its group is through."""
        self._staged.append((kind, table or "", "retry"))

    def applied(self, kind: str, table: str | None, result: object) -> None:
        """An event the core accepted; counted when its group is committed, with the
        late parts of it (docs/design.md: late bets, a late outcome, a late meter award)."""
        self._staged.append((kind, table or "", "accepted"))
        if isinstance(result, BetsResult):
            if result.round.late:
                self._staged_late.append("bets")
        elif isinstance(result, OutcomeResult):
            if result.round.outcome_late:
                self._staged_late.append("outcome")
            self._staged_late.extend("award" for award in result.awards if award.late)

    def late(self, kind: str) -> None:
        self.late_events[kind] = self.late_events.get(kind, 0) + 1

    def take(self) -> StagedSamples:
        """What is staged so far, for the group it belongs to (the writer applies the next
        group while this one is being committed); staging starts afresh."""
        staged = StagedSamples(self._staged, self._staged_late)
        self._staged, self._staged_late = [], []
        return staged

    def commit(self, rows: int, seconds: float, staged: StagedSamples | None = None) -> None:
        """A group of `rows` journal entries was committed in `seconds`."""
        self.batch_rows.observe(rows)
        self.commit_seconds.observe(seconds)
        self.settle(staged)

    def settle(self, staged: StagedSamples | None = None) -> None:
        """The staged requests (of `staged`, else all so far) are answered: committed, or
        nothing needed committing."""
        staged = self.take() if staged is None else staged
        events = self.events
        for key in staged.events:
            events[key] = events.get(key, 0) + 1
        for kind in staged.late:
            self.late(kind)

    def unavailable(self, requests: Iterable[tuple[str, str | None]]) -> None:
        """The group was not recorded: every (kind, table) in it gets a 503."""
        self.discard()
        for kind, table in requests:
            self.event(kind, table, "unavailable")

    def discard(self) -> None:
        """The group was not recorded and will be applied again (the writer rebuilt its
        state): forget what was staged; the second attempt stages its own."""
        self._staged.clear()
        self._staged_late.clear()

    def response(self, status: int) -> None:
        """One HTTP answer (RequestContextMiddleware)."""
        self.responses[status] = self.responses.get(status, 0) + 1

    # -- scrape time --------------------------------------------------------------------

    def read(
        self,
        name: str,
        help_text: str,
        read: Callable[[], Reading],
        *,
        labels: tuple[str, ...] = (),
        kind: Literal["gauge", "counter"] = "gauge",
    ) -> None:
        """Export `read()` at every scrape: a number, or {label values: number}."""
        self._reads.append(Read(name, help_text, read, labels, kind))

    def watch_writer(self, writer: WriterReadings) -> None:
        """The writer's queue, journal, database status and the floor's state."""
        self._reads += writer_reads(writer)
        if isinstance(writer, PaymentReadings):
            self._reads += payment_reads(writer)
        self._reads += meter_reads(writer)
        if isinstance(writer, InPlayReadings):
            self._reads += in_play_reads(writer)

    def watch_leadership(self, leadership: LeadershipReadings) -> None:
        """A writer process among several on one database: role, epoch, lease age."""
        self._reads += leadership_reads(leadership)

    def watch_screens(self, screens: ScreenReadings) -> None:
        """What the display screens acknowledge (app/display/screen_watch.py)."""
        for name, help_text, read in screens.readings():
            self.read(name, help_text, read)

    def watch_broadcaster(self, broadcaster: BroadcasterReadings) -> None:
        """Displays and the Redis fan-out, in either role."""
        self._reads += broadcaster_reads(broadcaster)

    def text(self) -> bytes:
        """The exposition, as GET /metrics serves it."""
        return generate_latest(self.registry)


class _Collector:
    """Turns the counted ints and the readings into metric families at scrape time."""

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        events = CounterMetricFamily(
            "jackpot_events",
            "Table and operator events by outcome: accepted (recorded), retry (same body "
            "again), refused (4xx by the rules), unavailable (503: not recorded)",
            labels=("kind", "table", "outcome"),
        )
        for labels, count in sorted(m.events.items()):
            events.add_metric(labels, count)
        yield events
        late = CounterMetricFamily(
            "jackpot_late_events",
            "Late events (docs/design.md): bets after hold, outcomes after round_timeout, awards",
            labels=("kind",),
        )
        for kind, count in sorted(m.late_events.items()):
            late.add_metric((kind,), count)
        yield late
        yield m.batch_rows.family("jackpot_commit_batch_rows", "Journal entries per group commit")
        yield m.commit_seconds.family("jackpot_commit_seconds", "Group commit latency")
        responses = CounterMetricFamily(
            "jackpot_http_responses", "HTTP answers by status", labels=("code",)
        )
        for status, count in sorted(m.responses.items()):
            responses.add_metric((str(status),), count)
        yield responses
        for reading in m._reads:
            family = _family(reading)
            if family is not None:
                yield family


def _family(reading: Read) -> Metric | None:
    try:
        value = reading.read()
    except Exception:  # a scrape must never fail because one reading did
        log.exception("metric %s could not be read", reading.name)
        return None
    cls = GaugeMetricFamily if reading.kind == "gauge" else CounterMetricFamily
    if not isinstance(value, Mapping):
        return cls(reading.name, reading.help, value=float(value))
    family = cls(reading.name, reading.help, labels=reading.labels)
    for labels, number in sorted(value.items()):
        family.add_metric(labels, float(number))
    return family


def metrics_router(metrics: PrometheusMetrics) -> APIRouter:
    """`GET /metrics` in the Prometheus text format."""
    router = APIRouter(tags=["service"])

    # async on purpose: the readings walk the writer's state, so they run on the event
    # loop between the writer's steps, never beside it in a worker thread.
    @router.get("/metrics", include_in_schema=False)
    async def scrape() -> Response:
        return Response(metrics.text(), media_type=CONTENT_TYPE)

    return router
