"""`jackpot verify`'s run: the journal as it stands, from entry 1 or from a checkpoint, in
one replay or in segments side by side (docs/journal.md)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import Any

from app.audit.checkpoint import Checkpoint, snapshot_sha256, stored_snapshot
from app.audit.findings import Discrepancy, Report
from app.audit.parameters_check import first_kind, parameter_notes, starting_config
from app.audit.past_award_counts_audit import with_count_check
from app.audit.replay_check import Verifier
from app.audit.segments import Progress, Segment, in_processes, merge, plan_segments, verify_segment
from app.state.floor_state import FloorConfig
from app.store.journal import JournalSource


async def verify(
    journal: JournalSource,
    config: FloorConfig | None,
    *,
    progress: Progress | None = None,
    jobs: int = 1,
    dsn: str | None = None,
    since: Checkpoint | None = None,
    floor: Mapping[str, Any] | None = None,
    source: str | None = None,
    mystery_key: str | None = None,
) -> Report:
    """`_verify` from the configuration the journal needs (app/audit/parameters_check.py):
    `config` is the floor file given (None: none), `floor` its parameters, `source` its
    path; a journal that records its parameters from entry 1 needs none. `mystery_key`:
    the writers' key, when no floor file brings it (app/config/mystery_key.py)."""
    first = await first_kind(journal)
    start = starting_config(first, config)
    if start is None:
        raise ValueError(
            "this journal records no parameters from its first entry: give the floor file "
            "it was written under (--config)"
        )
    if mystery_key is not None:
        start = dataclasses.replace(start, mystery_key=mystery_key)
    report = await _verify(journal, start, progress=progress, jobs=jobs, dsn=dsn, since=since)
    report = await with_count_check(journal, report)
    return parameter_notes(report, first, floor, source)


async def _verify(
    journal: JournalSource,
    config: FloorConfig,
    *,
    progress: Progress | None = None,
    jobs: int = 1,
    dsn: str | None = None,
    since: Checkpoint | None = None,
) -> Report:
    """Replay the journal as it stands now, up to its last entry at the start (the server
    may keep writing meanwhile: what comes after is for the next run).

    With `jobs` > 1 the journal is cut at stored snapshots into segments verified side by
    side (in processes of their own given `dsn`, else one after the other): each segment
    but the first starts from the snapshot at its start, and the segment before it must
    end on exactly that snapshot, so the whole is as strong as one replay from entry 1.

    With `since` (a checkpoint an earlier clean run printed) the replay starts from the
    snapshot there, once the journal is shown to still hold that entry's hash and that
    snapshot's bytes. The latest snapshot the run reaches is checked against its replay
    on the way: a clean run's report carries it as the next checkpoint.

    `progress` is told the entries to replay, then how many are done, every few thousand.
    """
    last = await journal.last()
    end = 0 if last is None else last.seq
    start = 0
    if since is not None:
        refused = await _check_checkpoint(journal, config, since)
        if refused is not None:
            return refused
        start = since.seq
    snapshots = [seq for seq in await journal.snapshot_seqs() if start < seq <= end]
    mark = snapshots[-1] if snapshots else None
    cuts = plan_segments(snapshots, end, jobs, start) if jobs > 1 else []
    segments: list[Segment] = []
    for a, b in zip([start, *cuts], [*cuts, end], strict=True):
        inside = mark is not None and a < mark <= b
        segments.append((a, b, b < end, mark if inside else None))
    bar = progress if end > start else None
    if bar is not None:
        bar.start(end - start)
    if dsn is not None and len(segments) > 1:
        reports = await in_processes(dsn, config, segments, jobs, bar)
    else:
        done = 0

        def advance(entries: int) -> None:
            if bar is not None:
                bar.update(done + entries)

        reports = []
        for segment in segments:
            report = await verify_segment(journal, config, *segment, advance=advance)
            reports.append(report)
            done += report.entries
    if bar is not None:
        bar.close(sum(r.entries for r in reports))
    report = merge(reports)
    if since is not None and report.ok and report.checkpoint is None:
        report = dataclasses.replace(report, checkpoint=since)  # no snapshot since: same
    return report


async def _check_checkpoint(
    journal: JournalSource, config: FloorConfig, since: Checkpoint
) -> Report | None:
    """None if the journal still holds the checkpoint's entry, with its hash, and its
    snapshot, byte for byte; else a failed report naming what changed since."""
    verifier = Verifier(config)
    verifier.seq, verifier.head, verifier.first_seq = since.seq, since.head, since.seq + 1
    rows = journal.read(since.seq - 1, batch=1)
    async with contextlib.aclosing(rows):  # type: ignore[type-var]
        row = await anext(rows, None)
    if row is None or row.seq != since.seq:
        what = "checkpoint: its entry is not in the journal"
        verifier.note(Discrepancy(since.seq, "checkpoint", what, None, since.head))
    elif row.hash != since.head:
        what = "hash: not the checkpoint's (an entry up to this one was changed)"
        verifier.note(Discrepancy(since.seq, row.kind, what, row.hash, since.head))
    text = await stored_snapshot(journal, since.seq)
    if text is None:
        what = "checkpoint: its snapshot is not stored"
        verifier.note(Discrepancy(since.seq, "snapshot", what, None, since.snapshot_sha256))
    elif snapshot_sha256(text) != since.snapshot_sha256:
        what = "sha256: not the snapshot the checkpoint's run verified"
        verifier.note(
            Discrepancy(since.seq, "snapshot", what, snapshot_sha256(text), since.snapshot_sha256)
        )
    return verifier.report() if verifier.discrepancy_count else None
