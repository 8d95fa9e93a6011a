"""One contract for the journal port, run against MemoryJournal and PostgresJournal."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import pytest

from app.store.database import create_pool, migrate, start_embedded
from app.store.errors import DuplicateEntry, JournalUnavailable
from app.store.journal import Journal, JournalRow, PostgresJournal
from app.store.packing import pack


def row(seq: int, key: str | None = "default", *, entry: str | None = None) -> JournalRow:
    text = entry if entry is not None else f'{{"kind":"bets","n":{seq}}}'
    return JournalRow(
        seq=seq,
        recorded_at_ms=1_795_000_000_000 + seq,
        kind="bets" if key else "finalize",
        idem_key=(f"T01|R{seq}|bets" if key == "default" else key),
        body_sha256=hashlib.sha256(text.encode()).hexdigest() if key else None,
        entry=text,
        answer=f'{{"round":"R{seq}"}}' if key else None,
        hash=hashlib.sha256(f"{seq}:{text}".encode()).hexdigest(),
    )


async def collect(journal: Journal, after: int = 0, batch: int = 10_000) -> list[JournalRow]:
    return [r async for r in journal.read(after, batch)]


async def test_an_empty_journal(journal: Journal) -> None:
    assert await journal.last() is None
    assert await journal.lookup("T01|R1|bets") is None
    assert await collect(journal) == []
    assert await journal.latest_snapshot() is None
    await journal.append([])  # nothing to do, not an error
    assert await journal.last() is None


async def test_rows_come_back_exactly_in_seq_order(journal: Journal) -> None:
    await journal.append([row(1), row(2, None), row(3)])
    await journal.append([row(4, entry='{"é":"ü","z":"\\u0000 ✓"}')])
    rows = await collect(journal)
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert rows == [row(1), row(2, None), row(3), row(4, entry='{"é":"ü","z":"\\u0000 ✓"}')]
    assert [r.seq for r in await collect(journal, after=2)] == [3, 4]
    assert await collect(journal, after=4) == []


async def test_last_is_the_highest_seq(journal: Journal) -> None:
    await journal.append([row(1), row(2)])
    assert await journal.last() == row(2)
    await journal.append([row(3, None)])
    assert await journal.last() == row(3, None)


async def test_lookup_by_idempotency_key(journal: Journal) -> None:
    await journal.append([row(1), row(2, None), row(3, "T02|R9|outcome")])
    assert await journal.lookup("T01|R1|bets") == row(1)
    assert await journal.lookup("T02|R9|outcome") == row(3, "T02|R9|outcome")
    assert await journal.lookup("T01|R2|bets") is None


async def test_a_batch_with_a_known_key_writes_nothing(journal: Journal) -> None:
    await journal.append([row(1)])
    with pytest.raises(DuplicateEntry):
        await journal.append([row(2), row(3), row(4, "T01|R1|bets")])
    assert [r.seq for r in await collect(journal)] == [1]
    assert await journal.lookup("T01|R2|bets") is None
    assert await journal.last() == row(1)


async def test_a_batch_with_a_key_twice_writes_nothing(journal: Journal) -> None:
    with pytest.raises(DuplicateEntry):
        await journal.append([row(1, "same"), row(2, None), row(3, "same")])
    assert await collect(journal) == []


async def test_a_batch_with_a_known_seq_writes_nothing(journal: Journal) -> None:
    await journal.append([row(1), row(2, None)])
    with pytest.raises(DuplicateEntry):
        await journal.append([row(3), row(2, "T09|R2|bets")])
    assert [r.seq for r in await collect(journal)] == [1, 2]
    assert await journal.lookup("T09|R2|bets") is None


async def test_entries_without_a_key_never_clash(journal: Journal) -> None:
    await journal.append([row(1, None), row(2, None)])
    await journal.append([row(3, None)])
    assert [r.idem_key for r in await collect(journal)] == [None, None, None]


async def test_the_journal_works_after_a_refused_batch(journal: Journal) -> None:
    await journal.append([row(1)])
    with pytest.raises(DuplicateEntry):
        await journal.append([row(1)])
    await journal.append([row(2)])
    assert [r.seq for r in await collect(journal)] == [1, 2]


async def test_snapshots_latest_wins_and_a_second_at_one_seq_is_ignored(journal: Journal) -> None:
    await journal.save_snapshot(10, 1_000, pack('{"at":10}'))
    await journal.save_snapshot(30, 3_000, pack('{"at":30}'))
    await journal.save_snapshot(20, 2_000, pack('{"at":20}'))
    assert await journal.latest_snapshot() == (30, pack('{"at":30}'))  # as stored
    await journal.save_snapshot(30, 4_000, pack('{"at":"other"}'))
    assert await journal.latest_snapshot() == (30, pack('{"at":30}'))
    assert await journal.snapshot_at(20) == '{"at":20}'  # read back as its JSON


async def test_reading_25000_rows_in_batches_of_10000(journal: Journal) -> None:
    for start in range(1, 25_001, 512):
        await journal.append([row(seq) for seq in range(start, min(start + 512, 25_001))])
    seqs = [r.seq async for r in journal.read(0, batch=10_000)]
    assert seqs == list(range(1, 25_001))
    # A page boundary exactly at the end (20,000 = 2 x 10,000) loses and repeats nothing.
    assert [r.seq async for r in journal.read(5_000, batch=10_000)] == list(range(5_001, 25_001))
    assert [r.seq async for r in journal.read(24_990, batch=3)] == list(range(24_991, 25_001))


async def test_a_reader_may_stop_early_and_the_journal_still_works(journal: Journal) -> None:
    await journal.append([row(seq) for seq in range(1, 101)])
    for _ in range(20):  # more than the pool's connections: an abandoned read leaks none
        async for first in journal.read(0, batch=10):
            assert first.seq == 1
            break
    await journal.append([row(101)])
    assert (await journal.last()) == row(101)


async def test_a_closed_journal_is_unavailable(journal: Journal) -> None:
    await journal.append([row(1)])
    await journal.close()
    with pytest.raises(JournalUnavailable):
        await journal.append([row(2)])
    with pytest.raises(JournalUnavailable):
        await journal.last()


# -- PostgreSQL only: what the database going away looks like --------------------------------


@pytest.mark.integration
async def test_a_stopped_server_is_unavailable_and_a_restarted_one_is_used_again(
    pg_folder: Path,
) -> None:
    server = await start_embedded(pg_folder)
    await migrate(server.dsn)
    pool = await create_pool(server.dsn, min_size=2, max_size=2)
    journal = PostgresJournal(pool, owns_pool=True, timeout=5.0)
    restarted = None
    try:
        await journal.append([row(1)])
        await server.stop()
        with pytest.raises(JournalUnavailable):
            await journal.append([row(2)])
        with pytest.raises(JournalUnavailable):
            await journal.last()
        with pytest.raises(JournalUnavailable):
            await collect(journal)
        with pytest.raises(JournalUnavailable):
            await journal.save_snapshot(1, 0, pack("{}"))

        # The same pool, the same journal object: the next append after the restart works.
        restarted = await start_embedded(pg_folder, delete_on_stop=True)
        await journal.append([row(2)])
        assert [r.seq for r in await collect(journal)] == [1, 2]
    finally:
        await journal.close()
        if restarted is not None:
            await restarted.stop()


@pytest.mark.integration
async def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(JournalUnavailable):
        await PostgresJournal.connect(f"postgresql://postgres@127.0.0.1:{port}/jackpot")


# -- snapshots in PostgreSQL: packed (alembic/versions/0002) ------------------------------


async def test_a_snapshot_is_stored_packed_and_rows_from_before_are_read_as_text(
    fresh_dsn: str,
) -> None:
    import zlib

    import asyncpg

    state = '{"seq":7,"rounds":[' + ",".join(f'{{"round":"R{i}"}}' for i in range(5_000)) + "]}"
    journal = await PostgresJournal.connect(fresh_dsn)
    connection = await asyncpg.connect(fresh_dsn)
    try:
        await journal.save_snapshot(7, 1_000, pack(state))
        stored = await connection.fetchrow(
            "SELECT state, packed, pg_column_compression(packed) AS again"
            " FROM snapshots WHERE seq = 7"
        )
        assert stored is not None
        assert stored["state"] is None and stored["again"] is None  # not compressed twice
        assert zlib.decompress(stored["packed"]).decode() == state
        assert len(stored["packed"]) * 4 < len(state)
        # A snapshot stored as text before packing came in is read as it is.
        await connection.execute(
            "INSERT INTO snapshots (seq, taken_at_ms, state) VALUES (3, 0, '{\"seq\":3}')"
        )
        assert await journal.snapshot_at(3) == '{"seq":3}'
        assert await journal.snapshot_at(7) == state
        assert await journal.latest_snapshot() == (7, stored["packed"])  # as stored
        with pytest.raises(asyncpg.CheckViolationError):  # one or the other, never both
            await connection.execute(
                "INSERT INTO snapshots (seq, taken_at_ms, state, packed) VALUES (9, 0, '{}', '')"
            )
        await connection.execute("UPDATE snapshots SET packed = 'not zlib' WHERE seq = 7")
        with pytest.raises(ValueError, match="seq 7 cannot be unpacked"):
            await journal.snapshot_at(7)
        # The latest a row from before packing: the writer gets it packed all the same.
        await connection.execute("DELETE FROM snapshots WHERE seq = 7")
        assert await journal.latest_snapshot() == (3, pack('{"seq":3}'))
    finally:
        await connection.close()
        await journal.close()
