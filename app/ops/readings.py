"""What the metrics read of the writer and the broadcaster when Prometheus scrapes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from app.state.floor_state import FloorState
from jackpot.money import SCALE

Value = float | int | bool
Reading = Value | Mapping[tuple[str, ...], Value]


@dataclass(frozen=True, slots=True)
class Read:
    """One figure read at every scrape: a number, or {label values: number}."""

    name: str
    help: str
    read: Callable[[], Reading]
    labels: tuple[str, ...] = ()
    kind: Literal["gauge", "counter"] = "gauge"


class WriterReadings(Protocol):
    """What the metrics read of the writer at scrape time (app/writer/writer.py's Writer)."""

    @property
    def seq(self) -> int: ...
    @property
    def degraded(self) -> bool: ...
    @property
    def stats(self) -> Mapping[str, int]: ...
    @property
    def service(self) -> FloorState: ...
    def queue_depth(self) -> int: ...


class BroadcasterReadings(Protocol):
    """What the metrics read of the displays' broadcaster (app/display/broadcaster.py)."""

    @property
    def stats(self) -> Mapping[str, int]: ...
    @property
    def backend(self) -> object: ...
    def subscriber_count(self, link: str | None = None) -> int: ...
    def link_ids(self) -> list[str]: ...


class LeadershipReadings(Protocol):
    """What the metrics read of a writer process's leadership (app/writer/leadership.py)."""

    @property
    def leading(self) -> bool: ...
    @property
    def epoch(self) -> int: ...
    @property
    def takeovers(self) -> int: ...
    def lease_age_s(self) -> float | None: ...
    def lock_held(self) -> bool: ...


def leadership_reads(leadership: LeadershipReadings) -> list[Read]:
    """Whether this writer process leads, under which epoch, how fresh its lease is
    (deploy/prometheus-alerts.yml: JackpotNoLeadingWriter when no process leads)."""
    return [
        Read(
            "jackpot_writer_leading",
            "1 while this writer process holds the lease (0: a standby)",
            lambda: leadership.leading,
        ),
        Read(
            "jackpot_writer_epoch",
            "The lease's epoch this process last led under (its fencing token)",
            lambda: leadership.epoch,
        ),
        Read(
            "jackpot_writer_lease_age_seconds",
            "Seconds since the leader last renewed its lease (0 on a standby)",
            lambda: leadership.lease_age_s() or 0.0,
        ),
        Read(
            "jackpot_writer_takeovers",
            "Times this process took the lease over",
            lambda: leadership.takeovers,
            kind="counter",
        ),
        Read(
            "jackpot_writer_leader_lock",
            "1 while this leader holds the leader's lock (a standby takes over at once if"
            " it dies; 0: at the lease's expiry)",
            lambda: leadership.lock_held(),
        ),
    ]


def writer_reads(writer: WriterReadings) -> list[Read]:
    """The writer's queue, journal, database status and the floor's state.

    `writer.service` is replaced when a commit fails (rebuilt from the last durable
    point): every reading goes through the writer, never a captured floor."""
    stats = writer.stats

    def pending() -> dict[tuple[str, ...], Value]:
        # Floor.pending_count: O(1) unless a void is pending, meter awards and operator
        # resets waiting for the watermark, not the voided (Floor.pending_awards would
        # sort the whole timeline).
        floor = writer.service.floor
        return {(link,): floor.pending_count(link) for link in floor.links}

    def rounds(stale: bool) -> dict[tuple[str, ...], Value]:
        floor = writer.service.floor
        counts: dict[tuple[str, ...], Value] = {}
        watch = floor.watch()
        for link, state in floor.links.items():
            # open_rounds keeps a stale round until its outcome or void; it no longer
            # holds the watermark (jackpot.link.watermark_at).
            flagged = len(watch.stale_holding_rounds(link))
            counts[(link,)] = flagged if stale else len(state.open_rounds) - flagged
        return counts

    def table_rounds() -> dict[tuple[str, ...], Value]:
        floor = writer.service.floor
        watch = floor.watch()
        return {(table,): watch.open_count(table) for table in writer.service.config.tables}

    def expired() -> dict[tuple[str, ...], Value]:
        return {(table,): n for table, n in writer.service.floor.expired.items()}

    def meter_values() -> dict[tuple[str, ...], Value]:
        floor = writer.service.floor
        return {
            (link, meter): value / SCALE
            for link in floor.links
            for meter, value in floor.display_values(link)
        }

    def awards_final() -> dict[tuple[str, ...], Value]:
        floor = writer.service.floor
        return {(link,): state.sequence for link, state in floor.links.items()}

    return [
        Read("jackpot_writer_queue_depth", "Requests waiting for the writer", writer.queue_depth),
        # The live Python objects' memory: RSS keeps the allocator's arenas once grown, so
        # a leak (or memory given back, e.g. by expired rounds) shows here, not there.
        Read(
            "jackpot_python_allocated_blocks",
            "Memory blocks allocated by the interpreter (sys.getallocatedblocks)",
            sys.getallocatedblocks,
        ),
        Read("jackpot_journal_seq", "Journal length: seq of the last entry", lambda: writer.seq),
        Read(
            "jackpot_database_up",
            "0 while the last journal commit failed (tables get 503), else 1",
            lambda: not writer.degraded,
        ),
        Read("jackpot_commits", "Group commits", lambda: stats["batches"], kind="counter"),
        Read(
            "jackpot_journal_rows",
            "Journal entries committed",
            lambda: stats["rows"],
            kind="counter",
        ),
        Read(
            "jackpot_commit_failures",
            "Group commits that failed (their requests got 503)",
            lambda: stats["failed"],
            kind="counter",
        ),
        Read(
            "jackpot_chain_broken",
            "Commits the database refused as not following its head (entries it lost or "
            "changed: a rollback); the writer rebuilt from it each time",
            _stat(stats, "chain_broken"),
            kind="counter",
        ),
        Read(
            "jackpot_pending_awards",
            "Meter awards (and operator resets) pending behind the watermark",
            pending,
            labels=("link",),
        ),
        Read(
            "jackpot_open_rounds",
            "Rounds with a jackpot wager and no outcome, holding the watermark",
            lambda: rounds(stale=False),
            labels=("link",),
        ),
        Read(
            "jackpot_stale_rounds",
            "Rounds open longer than round_timeout (flagged to operators)",
            lambda: rounds(stale=True),
            labels=("link",),
        ),
        Read(
            "jackpot_table_open_rounds",
            "Rounds with bets and no outcome or void at the table, jackpot wager or not "
            "(bets are refused beyond the floor's max_open_rounds)",
            table_rounds,
            labels=("table",),
        ),
        Read(
            "jackpot_expired_rounds",
            "Rounds expired: open longer than expire_after with no outcome or void",
            expired,
            labels=("table",),
            kind="counter",
        ),
        Read(
            "jackpot_meter_value",
            "Displayed meter value, in currency units",
            meter_values,
            labels=("link", "meter"),
        ),
        Read(
            "jackpot_meter_awards_final",
            "Meter awards made final on the link",
            awards_final,
            labels=("link",),
            kind="counter",
        ),
    ]


def broadcaster_reads(broadcaster: BroadcasterReadings) -> list[Read]:
    """Displays and the Redis fan-out, in either role."""
    stats = broadcaster.stats

    def connected() -> dict[tuple[str, ...], Value]:
        return {(link,): broadcaster.subscriber_count(link) for link in broadcaster.link_ids()}

    reads: list[Read] = [
        Read("jackpot_displays_connected", "Display websockets", connected, labels=("link",)),
        Read(
            "jackpot_displays_dropped",
            "Display websockets dropped for falling behind (they reconnect)",
            lambda: stats["slow_consumers"],
            kind="counter",
        ),
        Read(
            "jackpot_broadcast_messages",
            "Display messages originated (writer) or relayed (display process)",
            lambda: stats["messages"],
            kind="counter",
        ),
        Read(
            "jackpot_broadcast_deliveries",
            "Display message copies queued to websockets",
            lambda: stats["deliveries"],
            kind="counter",
        ),
    ]
    backend = broadcaster.backend
    redis_stats: dict[str, int] | None = getattr(backend, "stats", None)
    if not hasattr(backend, "connected") or redis_stats is None:
        return reads  # in-process broadcast: no Redis
    reads.append(
        Read(
            "jackpot_redis_up",
            "1 while this process's Redis connection works",
            lambda: bool(getattr(backend, "connected", False)),
        )
    )
    for key, help_text in (
        ("published", "Display messages Redis accepted (writer)"),
        ("publish_dropped", "Display messages lost because Redis failed or lagged"),
        ("feed_lost", "Redis feed losses (display process)"),
        ("rejected", "Messages from Redis skipped: malformed or not signed (display process)"),
        ("stale_term", "Of those, of an older leader's term: a deposed writer (display process)"),
    ):
        reads.append(
            Read(f"jackpot_redis_{key}", help_text, _stat(redis_stats, key), kind="counter")
        )
    return reads


def _stat(stats: Mapping[str, int], key: str) -> Callable[[], int]:
    return lambda: stats.get(key, 0)
