"""`jackpot verify --jobs`: the journal cut at stored snapshots into segments verified side
by side, each ending on the snapshot the next starts from, and their reports merged."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from typing import Any, Protocol

import orjson

from app.audit.checkpoint import Checkpoint, snapshot_sha256, stored_snapshot
from app.audit.findings import KEEP, Discrepancy, Report
from app.audit.replay_check import Verifier
from app.state.floor_state import FloorConfig
from app.state.past_award import PastAward
from app.store.journal import JournalSource, read_only_journal
from app.store.past_award_book import PastAwardBook
from app.store.past_award_check import BATCH, compare

Segment = tuple[int, int, bool, int | None]  # start, stop, ends_on_snapshot, mark


class Progress(Protocol):
    """Where a run shows how far it is (the command line's progress bar)."""

    def start(self, total: int) -> None: ...

    def update(self, done: int) -> None: ...

    def close(self, done: int) -> None: ...


def plan_segments(snapshots: Iterable[int], end: int, jobs: int, start: int = 0) -> list[int]:
    """Up to jobs - 1 snapshot seqs that cut (start, end] into nearly equal segments."""
    seqs = sorted(seq for seq in set(snapshots) if start < seq < end)
    cuts: list[int] = []
    for k in range(1, jobs):
        target = start + (end - start) * k // jobs
        best = min(seqs, key=lambda seq: abs(seq - target), default=None)
        if best is not None and (not cuts or best > cuts[-1]):
            cuts.append(best)
    return cuts


async def verify_segment(
    journal: JournalSource,
    config: FloorConfig,
    start: int,
    stop: int,
    ends_on_snapshot: bool,
    mark: int | None = None,
    advance: Callable[[int], None] | None = None,
) -> Report:
    """Entries start + 1 .. stop: from the empty floor when start is 0, else from the
    snapshot after entry `start`; then, if a segment starts at `stop`, the snapshot there
    is checked against the state reached, and so is the one after entry `mark` (the
    run's latest) when the replay passes it. A snapshot checked clean is the report's
    checkpoint."""
    if start == 0:
        verifier = Verifier(config)
    else:
        snapshot = await stored_snapshot(journal, start)
        try:
            verifier = Verifier.resume(config, snapshot or "")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            # The segment before names the difference too; this one cannot start.
            unread = Verifier(config)
            unread.seq, unread.first_seq = start, start + 1
            what = f"unreadable: no segment can start from it ({error!r})"
            unread.note(Discrepancy(start, "snapshot", what, snapshot, None))
            return unread.report()
    marked = None if mark is None or (mark == stop and ends_on_snapshot) else mark
    mark_text = None if marked is None else await stored_snapshot(journal, marked)

    def reach(text: str | None) -> None:
        if text is None:
            raise ValueError(f"no snapshot after seq {verifier.seq} to check")
        if verifier.check_snapshot(text):
            verifier.checkpoint = Checkpoint(verifier.seq, verifier.head, snapshot_sha256(text))

    audit = PastAwardAudit(journal, verifier)
    with without_cyclic_gc():
        if stop > start:
            rows = journal.read(start)
            async with contextlib.aclosing(rows):  # type: ignore[type-var]
                async for row in rows:
                    verifier.service.leaving = []
                    verifier.feed(row)
                    await audit.after_entry()
                    if advance is not None and not verifier.entries % 2_048:
                        advance(verifier.entries)
                    if row.seq == marked and verifier.ok:
                        # Only for the checkpoint of a clean run: after a discrepancy the
                        # state differs from the writer's, and that was named already.
                        reach(mark_text)
                    if row.seq >= stop:
                        break
        await audit.check()
        if ends_on_snapshot:
            reach(await stored_snapshot(journal, stop))
    return verifier.report()


class PastAwardAudit:
    """The awards the replay makes leave memory, checked a batch at a time against the
    `past_awards` table when the journal is a database's (app/store/past_award_check.py)."""

    def __init__(self, journal: JournalSource, verifier: Verifier) -> None:
        self.journal, self.verifier = journal, verifier
        self.leaving: list[PastAward] = []

    async def after_entry(self) -> None:
        self.leaving += self.verifier.service.leaving
        if len(self.leaving) >= BATCH:
            await self.check()

    async def check(self) -> None:
        awards, self.leaving = self.leaving, []
        if not awards or not isinstance(self.journal, PastAwardBook):
            return
        for f in await compare(self.journal, awards):
            state = "missing" if f.stored is None else "differs from the replay"
            stored = None if f.stored is None else asdict(f.stored)
            what = f"past_awards row {f.award.id}: {state}"
            self.verifier.note(
                Discrepancy(f.award.seq, "past_awards", what, stored, asdict(f.award))
            )


def merge(reports: list[Report]) -> Report:
    """One report for consecutive segments: counts add up, the state is the last one's."""
    last = reports[-1]
    kinds: Counter[str] = Counter()
    for report in reports:
        kinds.update(report.kinds)
    found = [d for report in reports for d in report.discrepancies]
    checkpoints = [r.checkpoint for r in reports if r.checkpoint is not None]  # the latest last
    return Report(
        entries=sum(r.entries for r in reports),
        last_seq=last.last_seq,
        head=last.head,
        kinds=dict(kinds),
        rounds=sum(r.rounds for r in reports),
        void_rounds=sum(r.void_rounds for r in reports),
        expired_rounds=sum(r.expired_rounds for r in reports),
        meter_awards=last.meter_awards,
        pending_awards=last.pending_awards,
        fixed_awards=sum(r.fixed_awards for r in reports),
        fixed_total=sum(r.fixed_total for r in reports),
        meters=last.meters,
        discrepancies=tuple(found[:KEEP]),
        discrepancy_count=sum(r.discrepancy_count for r in reports),
        first_seq=reports[0].first_seq,
        checkpoint=checkpoints[-1] if checkpoints and all(r.ok for r in reports) else None,
        parameters=last.parameters,
        starts=tuple(start for report in reports for start in report.starts),
    )


# Segments in processes of their own: each reads its entries from PostgreSQL itself.
_done: Any = None  # a shared counter of entries verified, in each worker


def _init_worker(counter: Any) -> None:
    global _done
    _done = counter


def _segment_in_process(dsn: str, config: FloorConfig, segment: Segment) -> Report:
    seen = [0]

    def advance(entries: int) -> None:
        with _done.get_lock():
            _done.value += entries - seen[0]
        seen[0] = entries

    async def run() -> Report:
        async with read_only_journal(dsn) as journal:
            return await verify_segment(journal, config, *segment, advance=advance)

    return asyncio.run(run())


async def in_processes(
    dsn: str,
    config: FloorConfig,
    segments: list[Segment],
    jobs: int,
    bar: Progress | None,
) -> list[Report]:
    """The segments side by side, each in a process of its own that reads its entries
    from PostgreSQL itself; the bar follows the count they share."""
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # nothing of this process's state
    counter = context.Value("q", 0)
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=(counter,)
    ) as pool:
        futures = [
            asyncio.wrap_future(pool.submit(_segment_in_process, dsn, config, segment))
            for segment in segments
        ]
        waiting = asyncio.gather(*futures)
        while not waiting.done():
            if bar is not None:
                bar.update(counter.value)
            await asyncio.wait([waiting], timeout=0.5)
        return list(await waiting)


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """The replay builds many long-lived objects and almost no garbage cycles (as the
    server's recovery, app/writer/recovery.py): the cyclic collector would walk the growing heap
    again and again for nothing."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
