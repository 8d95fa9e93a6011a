"""The writer's settings, fixed when it is built: group size, snapshot cadence, timers, the
clock and the random source (app/api/application.py fills them from app/config/settings.py)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from app.state.timefmt import wall_clock_ms

# The outcome answer waits this long for its pending meter awards (docs/api.md).
OUTCOME_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class WriterSettings:
    # A group commits at most this many requests' entries (and the timer's).
    max_batch: int = 512
    # A snapshot is due after this many entries since the base...
    snapshot_every: int = 20_000
    # ...once the journal's text since the base is at least this many times the base's own
    # (docs/performance.md "Snapshots"). 0: every `snapshot_every` entries whatever the
    # state's size (tests that need many snapshots of a growing state).
    snapshot_growth: int = 1
    # Whether this process snapshots its state (a writer: in a forked child). Off for a
    # writer on the server's database: the snapshotter process makes them from the
    # journal (app/writer/snapshotter.py) and the writer rebases on them.
    makes_snapshots: bool = True
    # The state is frozen out of the cyclic collector every this many entries applied
    # (app/writer/snapshot_policy.py): docs/performance.md "The cyclic collector".
    freeze_every: int = 250
    # Advance the watermark at least this often while events are pending, so that
    # contributions are folded into the meters and the heap stays small.
    finalize_every_ms: int = 1_000
    outcome_wait_s: float = OUTCOME_WAIT_S
    clock: Callable[[], int] = wall_clock_ms
    rng: random.Random = field(default_factory=random.SystemRandom)
