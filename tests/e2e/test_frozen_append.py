"""A leader frozen in the middle of an append, with real writer processes under load.

Every append holds the lease's row (FOR KEY SHARE) until it commits, so that a takeover
waits for the appends in flight (docs/design.md "The lease and its fence"). A leader
frozen (SIGSTOP, a paused VM) between the start of its COPY and its end leaves its
session waiting for it, the row held: the standby takes over at the lease's end all
the same, and nothing acknowledged is lost. Orders of events by the database's clock.
A proxy (tests/e2e/held_copy.py) holds the COPY's rows back, as the frozen process does.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import asyncpg
import pytest

from tests.e2e.cluster import TAKEOVER_S, Writer, leader_of, wait_for
from tests.e2e.held_copy import HeldCopy
from tests.e2e.test_failover import Load, check_journal
from tests.e2e.test_takeover import SHORT_LEASE_MS, LeaseWatch, first_ack, pair_with_lease

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# A session other than ours holding the lease's row as an append does (FOR KEY SHARE).
_HOLDING_THE_LEASE = """
SELECT a.pid, a.state, a.wait_event, left(a.query, 60) AS query
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'relation' AND l.relation = 'writer_lease'::regclass
   AND l.mode = 'RowShareLock' AND l.granted AND l.pid <> pg_backend_pid()
"""


async def holding_the_lease(dsn: str) -> list[asyncpg.Record]:
    connection = await asyncpg.connect(dsn)
    try:
        return list(await connection.fetch(_HOLDING_THE_LEASE))
    finally:
        await connection.close()


def test_a_leader_frozen_inside_an_append_is_taken_over_once_its_lease_ended(
    folder: Path, fresh_dsn: str
) -> None:
    # Each writer reaches the database through a proxy of its own: the leader's holds
    # back the rows of its next COPY, and the leader is frozen right then.
    with (
        HeldCopy(fresh_dsn) as a_proxy,
        HeldCopy(fresh_dsn) as b_proxy,
        pair_with_lease(folder, fresh_dsn, SHORT_LEASE_MS) as (a, b),
    ):
        a.dsn, b.dsn = a_proxy.proxied, b_proxy.proxied
        run_pair([a, b], {a.name: a_proxy, b.name: b_proxy}, fresh_dsn)


def run_pair(pair: list[Writer], proxies: dict[str, HeldCopy], dsn: str) -> None:
    for writer in pair:
        writer.start()
    old = leader_of(pair)
    new = next(w for w in pair if w is not old)
    load = Load(pair)
    watch = LeaseWatch(dsn)

    async def run() -> None:
        watching = asyncio.create_task(watch.run())
        loading = asyncio.create_task(load.run())
        await asyncio.sleep(1.0)
        assert not loading.done(), loading.exception()
        proxy = proxies[old.name]
        proxy.armed.set()
        await asyncio.to_thread(wait_for, "an append", proxy.held.is_set, TAKEOVER_S, old.tail)
        old.signal(signal.SIGSTOP)  # its sessions, its lock and the COPY begun live on
        old_epoch = max(watch.ends)
        await asyncio.sleep(0.3)
        holding = await holding_the_lease(dsn)
        assert [r["query"][:4] for r in holding] == ["COPY"], holding
        await first_ack(new, load, 0)
        # Read now: the watch polls every 20 ms and may not have seen the takeover yet.
        await watch.now_ms()
        new_epoch = max(watch.ends)
        assert new_epoch == old_epoch + 1
        # Taken at expiry only: the frozen leader's lock session lives on.
        assert watch.acquired[new_epoch] >= watch.ends[old_epoch]
        old.signal(signal.SIGCONT)
        await asyncio.to_thread(
            wait_for, "the old leader stands by", lambda: old.role() == "standby",
            TAKEOVER_S, old.tail,
        )  # fmt: skip
        await asyncio.sleep(1.0)  # the load goes on, on the new leader
        load.stop.set()
        watch.stop.set()
        await loading
        await watching

    asyncio.run(run())
    assert new.leads()
    # Nothing acknowledged lost, each once, every retry its first answer, verify clean.
    check_journal(dsn, old.floor, load, new)
