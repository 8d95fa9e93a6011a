"""The journal port: append-only entries and snapshots, in memory and in PostgreSQL.

Durability contract (docs/design.md "Durable before acknowledged"): `append` returns only
once every row of the batch is committed, and commits all of them or none. The writer
acknowledges nothing before `append` has returned; that ordering is the caller's job. One
transaction per batch is what makes group commit pay: PostgreSQL flushes the WAL once per
commit, so a batch costs one fsync.

Every row is chained to its predecessor by `chain_hash` (docs/journal.md): one definition
for the writer that appends rows and the auditor's replay that checks them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg

from app.state.past_award import PastAward
from app.store.database import Connections, ServerDatabase, create_pool
from app.store.errors import ChainBroken, Deposed, DuplicateEntry, JournalUnavailable
from app.store.packing import pack, unpack, unpack_bytes
from app.store.past_award_book import AwardFilter, memory_page
from app.store.past_award_book import by_id as past_awards_by_id
from app.store.past_award_book import insert as insert_past_awards
from app.store.past_award_book import page as read_past_awards
from app.store.past_award_counts import CHECK_WAIT_S, CountDifference
from app.store.past_award_counts import differences as past_award_count_differences
from app.store.past_award_counts import rebuild as rebuild_past_award_counts
from app.store.past_award_counts import total as count_past_awards
from jackpot.canonical import canonical_json

GENESIS = "0" * 64  # the previous hash of entry 1


def chain_hash(previous: str, entry_text: str) -> str:
    """A row's hash: sha256(previous hash || canonical entry text)."""
    return hashlib.sha256((previous + entry_text).encode()).hexdigest()


def body_sha256(body: dict[str, Any]) -> str:
    """The sha256 of a request body's canonical JSON: a retry with another body conflicts."""
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class JournalRow:
    seq: int  # assigned by the single writer, increasing
    recorded_at_ms: int  # server time when the writer accepted the command
    kind: str
    idem_key: str | None  # "table|round|kind" for a table's round event, else None
    body_sha256: str | None  # of the request body: same key, other body -> 409
    entry: str  # canonical JSON, byte-exact (the hash chain covers these bytes)
    answer: str | None  # canonical JSON of the first answer, returned to retries
    hash: str  # chain hash: of the previous row's hash and this row
    # The awards this entry made leave memory (app/state/past_awards.py): `append` writes
    # them to `past_awards` in the rows' transaction. Not part of the entry or its hash.
    awards: tuple[PastAward, ...] = ()


@dataclass(frozen=True, slots=True)
class Fence:
    """What a writer's appends carry (app/store/lease.py): the lease's epoch, and the
    random nonce its takeover drew, which a rollback of the database cannot hand out
    again as it can the epoch's number."""

    epoch: int
    nonce: str


class JournalSource(Protocol):
    """What a replay reads (app/audit/verify_run.py): the stored journal, or an export of it."""

    async def last(self) -> JournalRow | None:
        """The row with the highest seq."""

    def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        """Rows with seq > after_seq in seq order, fetched `batch` at a time."""

    async def snapshot_seqs(self) -> list[int]:
        """The seq of every stored snapshot, in order."""

    async def snapshot_at(self, seq: int) -> str | None:
        """The state stored after entry `seq`, if a snapshot was taken there."""


class Journal(JournalSource, Protocol):
    async def append(self, rows: Sequence[JournalRow]) -> None:
        """All rows in one transaction: all committed, or none (DuplicateEntry,
        JournalUnavailable; in PostgreSQL, a fenced append that does not follow the
        database's head: ChainBroken)."""

    async def lookup(self, idem_key: str) -> JournalRow | None: ...

    async def ping(self) -> None:
        """Return if the journal can take a commit now; JournalUnavailable if not."""

    async def save_snapshot(self, seq: int, taken_at_ms: int, packed: bytes) -> None:
        """Keep the state after entry `seq`, as `pack` gives it (read back as its JSON).
        A second snapshot at the same seq is ignored: replay is deterministic, so both
        describe the same state."""

    async def latest_snapshot(self) -> tuple[int, bytes] | None:
        """(seq, the snapshot as `pack` gave it) of the one with the highest seq: the
        writer starts from it and keeps it packed (app/writer/position.py `base`)."""

    async def latest_snapshot_seq(self) -> int | None:
        """The seq of `latest_snapshot`, without its bytes (what a writer polls)."""

    async def snapshot_before(self, at_ms: int, upto_seq: int) -> tuple[int, bytes] | None:
        """(seq, packed) of the last snapshot at or before entry `upto_seq` whose entry was
        recorded before `at_ms`: where a report of a period from `at_ms` may start."""

    async def close(self) -> None: ...


# -- in memory -----------------------------------------------------------------------------


class MemoryJournal:
    """For unit tests and benchmarks of the writer: the same contract, no durability."""

    def __init__(self) -> None:
        self._rows: list[JournalRow] = []  # in seq order
        self._by_seq: dict[int, JournalRow] = {}
        self._by_key: dict[str, JournalRow] = {}
        self._snapshots: dict[int, tuple[int, bytes]] = {}  # seq -> (taken at, packed)
        self.past_awards: dict[str, PastAward] = {}  # the `past_awards` table's rows
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise JournalUnavailable("the journal is closed")

    async def append(self, rows: Sequence[JournalRow]) -> None:
        self._check_open()
        # Check the whole batch first, within itself too, so that it is all or nothing.
        seqs: set[int] = set()
        keys: set[str] = set()
        for row in rows:
            if row.seq in self._by_seq or row.seq in seqs:
                raise DuplicateEntry(f"seq {row.seq} is already in the journal")
            if row.idem_key is not None:
                if row.idem_key in self._by_key or row.idem_key in keys:
                    raise DuplicateEntry(f"idem_key {row.idem_key!r} is already in the journal")
                keys.add(row.idem_key)
            seqs.add(row.seq)
        for row in rows:
            self._by_seq[row.seq] = row
            if row.idem_key is not None:
                self._by_key[row.idem_key] = row
        self._rows.extend(rows)
        if any(a.seq > b.seq for a, b in zip(self._rows, self._rows[1:], strict=False)):
            self._rows.sort(key=lambda row: row.seq)
        for row in rows:
            for award in row.awards:
                self.past_awards.setdefault(award.id, award)

    async def past_awards_page(self, where: AwardFilter, first: int) -> tuple[list[PastAward], int]:
        self._check_open()
        return memory_page(self.past_awards.values(), where, first)

    async def past_awards_by_id(self, ids: Sequence[str]) -> dict[str, PastAward]:
        self._check_open()
        return {i: self.past_awards[i] for i in ids if i in self.past_awards}

    async def restore_past_awards(self, awards: Sequence[PastAward]) -> None:
        self._check_open()
        for award in awards:
            self.past_awards.setdefault(award.id, award)

    async def lookup(self, idem_key: str) -> JournalRow | None:
        self._check_open()
        return self._by_key.get(idem_key)

    async def ping(self) -> None:
        self._check_open()

    async def last(self) -> JournalRow | None:
        self._check_open()
        return self._rows[-1] if self._rows else None

    async def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        self._check_open()
        for row in list(self._rows):
            if row.seq > after_seq:
                yield row

    async def save_snapshot(self, seq: int, taken_at_ms: int, packed: bytes) -> None:
        self._check_open()
        self._snapshots.setdefault(seq, (taken_at_ms, packed))

    async def latest_snapshot(self) -> tuple[int, bytes] | None:
        self._check_open()
        if not self._snapshots:
            return None
        seq = max(self._snapshots)
        return seq, self._snapshots[seq][1]

    async def latest_snapshot_seq(self) -> int | None:
        self._check_open()
        return max(self._snapshots, default=None)

    async def snapshot_before(self, at_ms: int, upto_seq: int) -> tuple[int, bytes] | None:
        self._check_open()
        seqs = [
            seq
            for seq in self._snapshots
            if seq <= upto_seq and seq in self._by_seq and self._by_seq[seq].recorded_at_ms < at_ms
        ]
        return (max(seqs), self._snapshots[max(seqs)][1]) if seqs else None

    async def snapshot_seqs(self) -> list[int]:
        self._check_open()
        return sorted(self._snapshots)

    async def snapshot_at(self, seq: int) -> str | None:
        self._check_open()
        return unpack_bytes(self._snapshots[seq][1], seq) if seq in self._snapshots else None

    async def close(self) -> None:
        self._closed = True


# -- PostgreSQL ----------------------------------------------------------------------------

_COLUMNS = (
    "seq", "recorded_at_ms", "kind", "idem_key", "body_sha256", "entry", "answer", "hash"
)  # fmt: skip
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM journal"

# What "the database cannot take the write" looks like from asyncpg: the socket is gone
# (OSError: refused, reset, no such socket file), the connection died mid-query
# (PostgresConnectionError, class 08), the server is shutting down or starting
# (class 57: admin shutdown, cannot connect now, statement cancelled), out of disk or
# connections (class 53), an I/O error (class 58), a read-only standby after a failover
# (25006), or no answer in time. Anything else is a bug and propagates as it is.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.InsufficientResourcesError,
    asyncpg.exceptions.PostgresSystemError,
    asyncpg.exceptions.ReadOnlySQLTransactionError,
)
UNAVAILABLE = _UNAVAILABLE  # the same for the writer's lease (app/store/lease.py)

# What the journal's fence raises (alembic/versions/0005): the lease's fence is not ours;
# an append without an epoch while a writer has led; an append that does not follow the
# journal's head (alembic/versions/0006).
_DEPOSED, _NO_EPOCH, _CHAIN_BROKEN = "JP001", "JP002", "JP003"


class PostgresJournal:
    """The journal in the `journal` and `snapshots` tables (alembic/versions/0001)."""

    def __init__(
        self,
        pool: Connections,
        *,
        owns_pool: bool = False,
        timeout: float = 10.0,
        dsn: str | None = None,
    ):
        self._pool = pool
        self._dsn = dsn
        self._owns_pool = owns_pool
        # The fence of the lease this writer holds (app/store/lease.py): every append
        # checks it in its own transaction. None: no epoch (tests and tools on a database
        # where no writer ever led). Which fence each session (by server pid) was given.
        self.fence: Fence | None = None
        self._epochs: dict[int, Fence] = {}
        # A database that hangs must turn into a 503, not into requests waiting for ever.
        self._timeout = timeout
        self._closed = False

    @classmethod
    async def connect(cls, dsn: str, *, command_timeout_s: float = 10.0) -> PostgresJournal:
        """A journal with a pool of its own, closed by `close`."""
        try:
            pool = await create_pool(dsn)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"cannot reach the journal database: {error!r}") from error
        return cls(pool, owns_pool=True, timeout=command_timeout_s, dsn=dsn)

    @property
    def dsn(self) -> str | None:
        """Where a process of its own may connect (app/audit/reconciliation.py)."""
        if self._dsn is None and isinstance(self._pool, ServerDatabase):
            return self._pool.dsn  # known once the server's database is open
        return self._dsn

    def _check_open(self) -> None:
        if self._closed:
            raise JournalUnavailable("the journal is closed")

    async def append(self, rows: Sequence[JournalRow]) -> None:
        self._check_open()
        if not rows:
            return
        records = [
            (r.seq, r.recorded_at_ms, r.kind, r.idem_key, r.body_sha256, r.entry, r.answer, r.hash)
            for r in rows
        ]
        try:
            # One COPY statement for the batch, in a transaction of its own: one WAL flush
            # when it completes, and a unique violation on any row rolls back every row
            # (all or nothing). No BEGIN and COMMIT around it: two round trips fewer.
            # COPY, not executemany: faster as batches grow (docs/performance.md).
            # The journal's trigger checks the session's epoch and nonce against the
            # lease's in that same transaction (alembic/versions/0005).
            async with self._pool.acquire(timeout=self._timeout) as connection:
                pid = connection.get_server_pid()
                if self.fence is not None and self._epochs.get(pid) != self.fence:
                    await connection.execute(
                        "SELECT set_config('jackpot.epoch', $1, false),"
                        " set_config('jackpot.nonce', $2, false)",
                        str(self.fence.epoch),
                        self.fence.nonce,
                        timeout=self._timeout,
                    )
                    self._epochs[pid] = self.fence
                awards = [a for r in rows for a in r.awards]
                if not awards:
                    await connection.copy_records_to_table(
                        "journal", records=records, columns=_COLUMNS, timeout=self._timeout
                    )
                    return
                # The awards that leave memory with these entries: in their transaction.
                async with connection.transaction():
                    await connection.copy_records_to_table(
                        "journal", records=records, columns=_COLUMNS, timeout=self._timeout
                    )
                    await insert_past_awards(connection, awards)
        except asyncpg.UniqueViolationError as error:
            raise DuplicateEntry(error.detail or str(error)) from error
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"journal write failed: {error!r}") from error
        except asyncpg.PostgresError as error:
            if error.sqlstate == _CHAIN_BROKEN:
                raise _chain_broken(error) from error
            if error.sqlstate == _DEPOSED or (error.sqlstate == _NO_EPOCH and self.fence is None):
                raise Deposed(str(error)) from error
            if error.sqlstate == _NO_EPOCH:  # a new session under a known pid: set it next time
                self._epochs.clear()
                raise JournalUnavailable(f"journal write failed: {error!r}") from error
            raise

    async def past_awards_page(self, where: AwardFilter, first: int) -> tuple[list[PastAward], int]:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                page = await read_past_awards(connection, where, first, self._timeout)
                return page, await count_past_awards(connection, where, self._timeout)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"past awards read failed: {error!r}") from error

    async def past_awards_by_id(self, ids: Sequence[str]) -> dict[str, PastAward]:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return await past_awards_by_id(connection, ids, self._timeout)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"past awards read failed: {error!r}") from error

    async def restore_past_awards(self, awards: Sequence[PastAward]) -> None:
        self._check_open()
        try:
            async with (
                self._pool.acquire(timeout=self._timeout) as connection,
                connection.transaction(),
            ):
                await insert_past_awards(connection, awards)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"past awards write failed: {error!r}") from error

    async def past_award_count_differences(self) -> tuple[list[CountDifference], int]:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return await past_award_count_differences(connection, CHECK_WAIT_S)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"past award counts read failed: {error!r}") from error

    async def rebuild_past_award_counts(self) -> int:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return await rebuild_past_award_counts(connection, CHECK_WAIT_S)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"past award counts write failed: {error!r}") from error

    async def _fetchrow(self, query: str, *args: Any) -> Any:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return await connection.fetchrow(query, *args, timeout=self._timeout)
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"journal read failed: {error!r}") from error

    async def _fetch(self, query: str, *args: Any) -> list[Any]:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                return list(await connection.fetch(query, *args, timeout=self._timeout))
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"journal read failed: {error!r}") from error

    async def ping(self) -> None:
        # txid_current() takes a transaction id, so its commit writes and flushes a WAL
        # record: it fails where a commit would (full disk, a read-only standby after a
        # failover, where it is a plain error), where SELECT 1 would not. One small
        # flush per probe.
        try:
            await self._fetchrow("SELECT txid_current()")
        except asyncpg.PostgresError as error:
            raise JournalUnavailable(f"the journal cannot commit: {error!r}") from error

    async def lookup(self, idem_key: str) -> JournalRow | None:
        record = await self._fetchrow(f"{_SELECT} WHERE idem_key = $1", idem_key)
        return None if record is None else JournalRow(*record)

    async def last(self) -> JournalRow | None:
        record = await self._fetchrow(f"{_SELECT} ORDER BY seq DESC LIMIT 1")
        return None if record is None else JournalRow(*record)

    async def read(self, after_seq: int, batch: int = 10_000) -> AsyncIterator[JournalRow]:
        # Keyset pagination on the primary key rather than a server-side cursor: a cursor
        # needs a transaction (and a connection) held open for the whole replay, while
        # each page here is a short indexed query; only `batch` rows are in memory.
        while True:
            records = await self._fetch(
                f"{_SELECT} WHERE seq > $1 ORDER BY seq LIMIT $2", after_seq, batch
            )
            for record in records:
                yield JournalRow(*record)
            if len(records) < batch:
                return
            after_seq = records[-1]["seq"]

    async def save_snapshot(self, seq: int, taken_at_ms: int, packed: bytes) -> None:
        self._check_open()
        try:
            async with self._pool.acquire(timeout=self._timeout) as connection:
                await connection.execute(
                    "INSERT INTO snapshots (seq, taken_at_ms, packed) VALUES ($1, $2, $3)"
                    " ON CONFLICT (seq) DO NOTHING",
                    seq,
                    taken_at_ms,
                    packed,
                    timeout=self._timeout,
                )
        except _UNAVAILABLE as error:
            raise JournalUnavailable(f"snapshot write failed: {error!r}") from error

    async def latest_snapshot(self) -> tuple[int, bytes] | None:
        record = await self._fetchrow(
            "SELECT seq, state, packed FROM snapshots ORDER BY seq DESC LIMIT 1"
        )
        if record is None:
            return None
        # A row stored as text before 0002 is packed here, once: at most the first start.
        packed = record["packed"]
        return record["seq"], pack(record["state"]) if packed is None else packed

    async def latest_snapshot_seq(self) -> int | None:
        """The seq of `latest_snapshot`, without its bytes: what a standby polls."""
        seq: int | None = (await self._fetchrow("SELECT max(seq) FROM snapshots"))[0]
        return seq

    async def snapshot_before(self, at_ms: int, upto_seq: int) -> tuple[int, bytes] | None:
        record = await self._fetchrow(
            "SELECT s.seq, s.state, s.packed FROM snapshots s JOIN journal j ON j.seq = s.seq"
            " WHERE s.seq <= $1 AND j.recorded_at_ms < $2 ORDER BY s.seq DESC LIMIT 1",
            upto_seq,
            at_ms,
        )
        if record is None:
            return None
        packed = record["packed"]
        return record["seq"], pack(record["state"]) if packed is None else packed

    async def snapshot_seqs(self) -> list[int]:
        return [
            record["seq"] for record in await self._fetch("SELECT seq FROM snapshots ORDER BY seq")
        ]

    async def snapshot_at(self, seq: int) -> str | None:
        record = await self._fetchrow(
            "SELECT seq, state, packed FROM snapshots WHERE seq = $1", seq
        )
        return None if record is None else unpack(record)

    async def close(self) -> None:
        self._closed = True
        if self._owns_pool:
            await self._pool.close()


def _chain_broken(error: asyncpg.PostgresError) -> ChainBroken:
    found = json.loads(getattr(error, "detail", None) or "{}")
    return ChainBroken(
        str(error),
        found_seq=int(found.get("found_seq", -1)),
        found_hash=str(found.get("found_hash", "")),
        first_seq=int(found.get("first_seq", -1)),
    )


@contextlib.asynccontextmanager
async def read_only_journal(dsn: str) -> AsyncIterator[PostgresJournal]:
    """The stored journal for the audit tools (verify, export): every transaction of its
    pool is READ ONLY, so they cannot write, and may run beside the server."""
    pool = await asyncpg.create_pool(
        dsn, min_size=1, max_size=2, server_settings={"default_transaction_read_only": "on"}
    )
    try:
        yield PostgresJournal(pool, timeout=60.0)
    finally:
        await pool.close()
