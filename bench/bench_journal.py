"""Journal append throughput on the embedded PostgreSQL: rows/s and commits/s per batch size.

    .venv/bin/python bench/bench_journal.py [--rows 20000] [--dsn postgresql://...]

Each batch is one transaction (one WAL flush), appended one after another as the single
writer does. `journal` is PostgresJournal.append (one COPY, its own transaction);
`executemany` is INSERT ... executemany in an explicit transaction and `unnest` one
INSERT of the batch's columns as arrays (one round trip), for comparison.
`client µs` is this process's CPU time per commit (the writer's side of an append: its
event loop under uvloop, as `jackpot serve` runs, the pool, the protocol), most of it
the same whatever the batch's size.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg  # noqa: E402
import uvloop  # noqa: E402

from app.store.database import create_pool, migrate, start_embedded  # noqa: E402
from app.store.journal import _COLUMNS, JournalRow, PostgresJournal  # noqa: E402

BATCHES = (1, 64, 512)
ENTRY = (
    '{"boxes":[{"box":1,"ante":"25.00","jackpot":"1.00"},{"box":2,"ante":"10.00",'
    '"jackpot":"1.00"},{"box":4,"ante":"10.00","jackpot":"1.00"}],'
    '"closed_at":"2026-11-22T18:00:00.123Z","kind":"bets","round":"R%07d","table":"T01"}'
)
ANSWER = (
    '{"boxes":[{"box":1,"contribution":"0.25","jackpot":"accepted"}],'
    '"meters":[{"link":"stud","meter":"major","value":"10234.50"}],"round":"R%07d","table":"T01"}'
)


def make_rows(start: int, count: int) -> list[JournalRow]:
    rows = []
    for seq in range(start, start + count):
        entry = ENTRY % seq
        rows.append(
            JournalRow(
                seq=seq,
                recorded_at_ms=1_795_000_000_000 + seq,
                kind="bets",
                idem_key=f"T01|R{seq:07d}|bets",
                body_sha256=hashlib.sha256(entry.encode()).hexdigest(),
                entry=entry,
                answer=ANSWER % seq,
                hash=hashlib.sha256(f"{seq}{entry}".encode()).hexdigest(),
            )
        )
    return rows


def record(row: JournalRow) -> tuple[object, ...]:
    """The row's values in the journal's column order, as PostgresJournal.append sends them."""
    return tuple(getattr(row, column) for column in _COLUMNS)


async def executemany_append(pool: asyncpg.Pool, rows: Sequence[JournalRow]) -> None:
    placeholders = ", ".join(f"${i}" for i in range(1, len(_COLUMNS) + 1))
    query = f"INSERT INTO journal ({', '.join(_COLUMNS)}) VALUES ({placeholders})"
    async with pool.acquire() as connection, connection.transaction():
        await connection.executemany(query, [record(r) for r in rows])


UNNEST = (
    f"INSERT INTO journal ({', '.join(_COLUMNS)}) SELECT * FROM unnest($1::bigint[],"
    " $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])"
)


async def unnest_append(pool: asyncpg.Pool, rows: Sequence[JournalRow]) -> None:
    """The batch as one INSERT of arrays: one round trip, where COPY takes two."""
    columns = zip(*(record(r) for r in rows), strict=True)
    async with pool.acquire() as connection:
        await connection.execute(UNNEST, *(list(c) for c in columns))


async def empty_journal(pool: asyncpg.Pool) -> None:
    """The journal refuses TRUNCATE unless told, in the transaction (migration 0007)."""
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute("SET LOCAL jackpot.rewrite_history = 'on'")
        await connection.execute("TRUNCATE journal")


async def measure(
    pool: asyncpg.Pool,
    append: Callable[[Sequence[JournalRow]], Awaitable[None]],
    batch: int,
    total: int,
) -> tuple[float, float, float]:
    await empty_journal(pool)
    commits = max(total // batch, 1)
    batches = [make_rows(i * batch + 1, batch) for i in range(commits)]
    started, cpu = time.perf_counter(), time.process_time()
    for rows in batches:
        await append(rows)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return commits * batch / elapsed, commits / elapsed, cpu / commits


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows per measurement")
    parser.add_argument("--dsn", help="an existing, migrated-or-empty database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        embedded = None
        dsn = args.dsn
        if dsn is None:
            embedded = await start_embedded(Path(folder), delete_on_stop=True)
            dsn = embedded.dsn
        await migrate(dsn)
        pool = await create_pool(dsn)
        journal = PostgresJournal(pool)
        settings = await pool.fetchrow(
            "SELECT current_setting('fsync') AS fsync,"
            " current_setting('synchronous_commit') AS sync,"
            " current_setting('wal_sync_method') AS method, version() AS version"
        )
        assert settings is not None
        print(
            f"{settings['version'].split(' on ')[0]}; fsync={settings['fsync']},"
            f" synchronous_commit={settings['sync']}, wal_sync_method={settings['method']}"
        )
        print(f"{'batch':>6} {'strategy':>12} {'rows/s':>10} {'commits/s':>10} {'client µs':>10}")
        try:
            for batch in BATCHES:
                # batch 1 is commit-bound: fewer rows keep the run short.
                total = args.rows // 10 if batch == 1 else args.rows
                for name, append in (
                    ("journal", journal.append),
                    ("executemany", lambda rows: executemany_append(pool, rows)),
                    ("unnest", lambda rows: unnest_append(pool, rows)),
                ):
                    rows_s, commits_s, cpu_s = await measure(pool, append, batch, total)
                    print(
                        f"{batch:>6} {name:>12} {rows_s:>10,.0f} {commits_s:>10,.0f}"
                        f" {cpu_s * 1e6:>10,.0f}"
                    )
            await empty_journal(pool)
        finally:
            await pool.close()
            if embedded is not None:
                await embedded.stop()


if __name__ == "__main__":
    uvloop.run(main())
