"""A standby following the leader's journal against real PostgreSQL, and a writer
recovering from a stored snapshot, know what is suspended: a takeover or a restart keeps
the progressive out of play (rules 5.17, 5.18.2)."""

from __future__ import annotations

import asyncpg
import pytest

from app.state.commands import InPlayCommand, ResumeCommand, SuspendCommand
from app.store.journal import PostgresJournal
from app.store.snapshots import dump_text
from app.writer.leadership import Leadership
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.writer.support import NOW, NoLease, service
from tests.support import Clock

pytestmark = pytest.mark.integration


async def test_a_standby_follows_suspensions_through_entries_and_snapshots(
    pool: asyncpg.Pool,
) -> None:
    clock = Clock()
    clock.now = NOW
    settings = WriterSettings(clock=clock, snapshot_every=2, snapshot_growth=1)
    leader = Writer(service(), PostgresJournal(pool), settings)
    journal = PostgresJournal(pool)
    standby = Writer(service(), journal, WriterSettings(clock=clock, snapshot_every=2))
    following = Leadership(standby, journal, NoLease())
    await leader.recover()
    await standby.recover()
    leader.start()
    try:
        changes: list[tuple[str, InPlayCommand]] = [
            ("suspend", SuspendCommand(link="stud", table=None, boxes=None, reason="fault")),
            ("suspend", SuspendCommand(link=None, table="T03", boxes=[2, 3], reason="box")),
            ("resume", ResumeCommand(link="stud", table=None, boxes=None, reason="mended")),
        ]
        for kind, command in changes:
            clock.now += 1_000
            status, _ = await leader.submit(kind, None, None, command, by="sam")
            assert status == 200
            if leader.snapshots.task is not None:
                await leader.snapshots.task
        assert await journal.latest_snapshot() is not None
        await following.follow()
        assert (standby.seq, standby.head) == (leader.seq, leader.head)
        assert sorted(standby.service.in_play.active) == [("box", "T03", 2), ("box", "T03", 3)]
        assert dump_text(standby.service, 0, "") == dump_text(leader.service, 0, "")
        # A restart recovers from the latest stored snapshot and the entries after it.
        restarted = Writer(service(), PostgresJournal(pool), WriterSettings(clock=clock))
        await restarted.recover()
        assert dump_text(restarted.service, 0, "") == dump_text(leader.service, 0, "")
    finally:
        await leader.stop()
