"""`jackpot export`: a period's journal entries as JSON lines, and read-only journal access.

Each line is one journal row: `seq`, `recorded_at`, `kind`, `idem_key`, `body_sha256`,
`entry` (a JSON object whose canonical encoding gives back the bytes the chain covers),
`answer`, `hash` and `prev_hash` (the line before's `hash`), so the chain can be checked
line by line (docs/journal.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

import orjson

from app.state.timefmt import format_time, parse_time
from app.store.journal import GENESIS, Journal, JournalRow, read_only_journal
from jackpot.canonical import canonical_json, loads_exact


def export_line(row: JournalRow, prev_hash: str) -> str:
    data = {
        "seq": row.seq,
        "recorded_at": format_time(row.recorded_at_ms),
        "kind": row.kind,
        "idem_key": row.idem_key,
        "body_sha256": row.body_sha256,
        "entry": loads_exact(row.entry, f"journal entry {row.seq}"),
        "answer": None
        if row.answer is None
        else loads_exact(row.answer, f"the answer of journal entry {row.seq}"),
        "hash": row.hash,
        "prev_hash": prev_hash,
    }
    # Not sorted at the top level (the fields in the order above, for people); `entry`
    # keeps the canonical order it was stored in.
    try:
        return orjson.dumps(data).decode() + "\n"
    except TypeError:  # an integer beyond 64 bits (canonical_json writes it the same way)
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"


async def export(journal: Journal, out: TextIO, start: int | None, end: int | None) -> int:
    """Write the rows recorded in [start, end) (epoch ms; None: unbounded); returns how many.

    The whole journal is read: the server's clock may step back, so recorded_at is not
    strictly increasing with seq, and a row of the period may follow one after it.
    """
    count, prev = 0, GENESIS
    async for row in journal.read(0):
        at = row.recorded_at_ms
        if (start is None or at >= start) and (end is None or at < end):
            out.write(export_line(row, prev))
            count += 1
        prev = row.hash
    return count


@contextlib.asynccontextmanager
async def journal_dsn(args: argparse.Namespace) -> AsyncIterator[str]:
    """DATABASE_URL (--database-url), else the embedded PostgreSQL under --data-dir
    (joined if the server is running, and left running then)."""
    from app.config.settings import Settings
    from app.store.database import start_embedded

    settings = Settings()
    dsn = getattr(args, "database_url", None) or settings.database_url
    if dsn is not None:
        yield dsn
        return
    data_dir = Path(getattr(args, "data_dir", None) or settings.data_dir)
    if not (data_dir / "postgres").is_dir():
        raise SystemExit(f"no journal under {data_dir}: give --data-dir or DATABASE_URL")
    embedded = await start_embedded(data_dir)
    try:
        yield embedded.dsn
    finally:
        await embedded.stop()


@contextlib.asynccontextmanager
async def open_journal(args: argparse.Namespace) -> AsyncIterator[Journal]:
    """The stored journal, read-only (`journal_dsn`)."""
    async with journal_dsn(args) as dsn, read_only_journal(dsn) as journal:
        yield journal


def main_export(args: argparse.Namespace) -> int:
    """`jackpot export --from T --to T [--output FILE]`: JSON lines to FILE or stdout."""
    try:
        start = None if args.from_ is None else parse_time(args.from_)
        end = None if args.to is None else parse_time(args.to)
    except ValueError as error:
        print(f"--from / --to: {error}", file=sys.stderr)
        return 2
    output = getattr(args, "output", None)

    async def run(out: TextIO) -> int:
        async with open_journal(args) as journal:
            return await export(journal, out, start, end)

    if output is None or str(output) == "-":
        count = asyncio.run(run(sys.stdout))
    else:
        with Path(output).open("w", encoding="utf-8") as out:
            count = asyncio.run(run(out))
    print(f"{count:,} entries exported", file=sys.stderr)
    return 0


class ExportFile:
    """An export of the whole journal read back as a read-only journal, so that
    `jackpot verify --file` replays it away from the database: the rows exactly as
    stored (`entry` and `answer` in their canonical encoding give back the stored text),
    no snapshots. It must start at entry 1: the replay starts from the empty floor."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as f:
            first = next((line for line in f if line.strip()), None)
        if first is None:
            raise ValueError(f"{path}: empty, not an export")
        row = self._row(first, "line 1")
        if row.seq != 1:
            raise ValueError(
                f"{path}: starts at entry {row.seq}, not 1: the replay starts from the "
                "empty floor (export the whole journal: no --from)"
            )

    def _row(self, line: bytes, where: str) -> JournalRow:
        try:
            data = loads_exact(line, where)
            return JournalRow(
                seq=data["seq"],
                recorded_at_ms=parse_time(data["recorded_at"]),
                kind=data["kind"],
                idem_key=data["idem_key"],
                body_sha256=data["body_sha256"],
                entry=canonical_json(data["entry"]),
                answer=None if data["answer"] is None else canonical_json(data["answer"]),
                hash=data["hash"],
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as error:
            raise ValueError(f"{self.path} {where}: not an export line ({error!r})") from None

    async def last(self) -> JournalRow | None:
        """The last line's row, read from the end of the file (not a second pass over it)."""
        with self.path.open("rb") as f:
            end = f.seek(0, 2)
            tail = b""
            while end and b"\n" not in tail.strip():
                start = max(0, end - 65_536)
                f.seek(start)
                tail = f.read(end - start) + tail
                end = start
        lines = tail.strip().splitlines()
        return self._row(lines[-1], "last line") if lines else None

    async def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        with self.path.open("rb") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    row = self._row(line, f"line {number}")
                    if row.seq > after_seq:
                        yield row

    async def snapshot_seqs(self) -> list[int]:
        return []

    async def snapshot_at(self, seq: int) -> str | None:
        return None
