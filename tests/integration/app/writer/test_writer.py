"""The writer applies a group while the one before it is being committed (app/writer/writer.py).

Overlapping them must not weaken the issue's promise: nothing is acknowledged before it
is committed, answers come in the order of the journal, a failed commit leaves the state
exactly as the journal gives it, and a snapshot is never of rows that were not committed.
These tests hold a commit open (a gate) while later requests arrive.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.state.commands import Command, CorrectCommand, VoidCommand
from app.state.timefmt import format_time
from app.state.views import meters, outcome_answer, round_view
from app.store.journal import JournalRow, MemoryJournal, body_sha256
from app.store.snapshots import dump_text
from app.writer.refusals import Conflict, Unavailable
from jackpot.errors import JackpotError, UnknownError
from tables.errors import TablesError
from tests.integration.app.writer.support import (
    NOW,
    GatedJournal,
    Harness,
    bets,
    journal_rows,
    outcome_body,
    royal_flush_outcome,
    state_is_the_journals,
    until,
)
from tests.support import replayed, table_command


async def outcome(task: Awaitable[Any]) -> Any:
    """The status, or the exception's class."""
    try:
        status, _ = await task
        return status
    except Exception as error:
        return type(error)


async def test_a_group_is_applied_while_the_one_before_is_committed_and_answered_after_it() -> None:
    async with Harness() as h:
        h.journal.gate.clear()
        first = h.post("R1", bets())
        await until(lambda: h.journal.waiting == 1, "the first group's append is held")
        second = h.post("R2", bets())
        await until(lambda: h.applied("R2"), "the second request is applied")
        await asyncio.sleep(0.01)
        assert not first.done() and not second.done()  # nothing acknowledged yet
        h.journal.gate.set()
        assert await outcome(first) == 201 and await outcome(second) == 201
        # One commit in flight at a time, in order (the first group finalises: a contribution
        # is pending and none was finalised yet).
        assert h.journal.appended == [["T01|R1|bets", "finalize"], ["T01|R2|bets"]]
        await state_is_the_journals(h.writer, h.journal)


async def test_a_group_gathered_behind_a_commit_holds_at_most_max_batch_entries() -> None:
    """JACKPOT_COMMIT_MAX_BATCH bounds every commit, gathered groups included."""
    async with Harness(max_batch=2) as h:
        h.journal.gate.clear()
        first = h.post("R1", bets())
        await until(lambda: h.journal.waiting == 1, "the first append is held")
        behind = [h.post(f"R{n}", bets()) for n in range(2, 7)]
        await until(lambda: h.applied("R3"), "a gathered group of two")
        await asyncio.sleep(0.02)
        assert not h.applied("R4")  # waits for room, not applied
        h.journal.gate.set()
        assert [await outcome(t) for t in (first, *behind)] == [201] * 6
        assert h.journal.appended == [
            ["T01|R1|bets", "finalize"],  # the group's finalize rides with it
            ["T01|R2|bets", "T01|R3|bets"],
            ["T01|R4|bets", "T01|R5|bets"],
            ["T01|R6|bets"],
        ]
        await state_is_the_journals(h.writer, h.journal)


async def test_a_retry_of_an_event_being_committed_waits_for_that_commit() -> None:
    async with Harness() as h:
        h.journal.gate.clear()
        first = h.post("R1", bets())
        await until(lambda: h.journal.waiting == 1, "the first append is held")
        retry = h.post("R1", bets())  # same body: answered from the first, once it is durable
        await asyncio.sleep(0.02)
        assert not retry.done()
        h.journal.fail_next = True
        h.journal.gate.set()
        # The first was never recorded: its retry must not be acknowledged either.
        assert await outcome(first) is Unavailable
        assert await outcome(retry) is Unavailable
        assert await journal_rows(h.journal) == []
        await state_is_the_journals(h.writer, h.journal)
        assert await outcome(h.post("R1", bets())) == 201  # its next retry is recorded
        await state_is_the_journals(h.writer, h.journal)


async def test_a_failed_commit_refuses_the_group_gathered_behind_it() -> None:
    async with Harness() as h:
        assert await outcome(h.post("R0", bets())) == 201
        h.journal.gate.clear()
        first = h.post("R1", bets())
        await until(lambda: h.journal.waiting == 1, "the append is held")
        behind = [h.post(f"R{n}", bets()) for n in (2, 3)]
        await until(lambda: h.applied("R3"), "the requests behind it are applied")
        h.journal.fail_next = True
        h.journal.gate.set()
        assert [await outcome(t) for t in (first, *behind)] == [Unavailable] * 3
        assert [row.idem_key or row.kind for row in await journal_rows(h.journal)] == [
            "T01|R0|bets",
            "finalize",
        ]
        await state_is_the_journals(h.writer, h.journal)
        assert await outcome(h.post("R2", bets())) == 201
        await state_is_the_journals(h.writer, h.journal)


async def test_a_late_retry_refused_by_the_journal_is_answered_from_it_not_the_group_behind() -> (
    None
):
    """The journal's unique key refuses a group: a retry of bets recorded for a round no
    longer in memory. Its first answer comes from the journal; the requests gathered behind
    it are applied again and recorded, not refused."""
    async with Harness() as h:
        old = bets(NOW - 1_000)
        seeded = JournalRow(
            seq=1_000, recorded_at_ms=NOW - 1_000, kind="bets", idem_key="T01|OLD|bets",
            body_sha256=body_sha256(msgspec.to_builtins(old)), entry="{}",
            answer='{"first":"answer"}', hash="f" * 64,
        )  # fmt: skip
        await MemoryJournal.append(h.journal, [seeded])
        h.journal.gate.clear()
        retry = h.post("OLD", old)
        await until(lambda: h.journal.waiting == 1, "the retry's append is held")
        behind = h.post("R1", bets())
        await until(lambda: h.applied("R1"), "the request behind it is applied")
        h.journal.gate.set()
        assert await retry == (200, {"first": "answer"})
        assert await outcome(behind) == 201
        rows = [row for row in await journal_rows(h.journal) if row.seq != 1_000]
        assert [row.idem_key for row in rows] == ["T01|R1|bets"]
        assert (h.writer.seq, h.writer.head) == (rows[-1].seq, rows[-1].hash)
        assert dump_text(h.writer.service, 1, rows[-1].hash) == dump_text(
            replayed(rows), 1, rows[-1].hash
        )


async def test_a_snapshot_of_rows_that_are_not_committed_is_dropped() -> None:
    async with Harness(snapshot_every=3) as h:
        assert await outcome(h.post("R1", bets())) == 201  # and a finalize entry
        assert h.writer.snapshots.task is None
        h.journal.gate.clear()
        lost = h.post("R2", bets())  # the third entry: a snapshot is due, with it applied
        await until(lambda: h.writer.snapshots.task is not None, "a snapshot is taken")
        task = h.writer.snapshots.task
        h.journal.fail_next = True
        h.journal.gate.set()
        assert await outcome(lost) is Unavailable
        assert task is not None
        await task
        assert await h.journal.latest_snapshot() is None
        assert h.writer.position.base == b"" and h.writer.position.base_point[0] == 0
        await state_is_the_journals(h.writer, h.journal)
        # The same point committed this time: its snapshot is kept.
        assert await outcome(h.post("R2", bets())) == 201
        task = h.writer.snapshots.task
        if task is not None:
            await task
        latest = await h.journal.latest_snapshot()
        assert latest is not None and latest[0] == 3 and h.writer.position.base_point[0] == 3
        await state_is_the_journals(h.writer, h.journal)


@pytest.mark.parametrize("fails", [False, True], ids=["committed", "failed"])
async def test_an_award_made_final_by_an_uncommitted_entry_is_shown_pending(fails: bool) -> None:
    """docs/design.md "The watermark": a meter award is final once its finalize entry is; a
    table pays the player on a final amount, so none may be shown before it is durable."""
    async with Harness() as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        status, answer = await w.submit("outcome", "T01", "R1", royal_flush_outcome())
        assert [a["state"] for a in answer["awards"] if a["kind"] == "meter"] == ["pending"]
        h.clock.now += 3_000  # past `hold`: the next group finalises the award

        def shown() -> list[str]:
            awards = outcome_answer(w.service, "T01", "R1")["awards"]
            return [a["state"] for a in awards if a["kind"] == "meter"]

        h.journal.gate.clear()
        h.journal.fail_next = fails
        task = h.post("R2", bets(h.clock.now))
        await until(lambda: h.journal.waiting == 1, "the finalising group's append is held")
        assert w.service.floor.awards["T01/R1/1/player"].state == "final"  # applied ...
        assert shown() == ["pending"]  # ... but not shown: its entry is not committed
        assert round_view(w.service, "T01", "R1")["pending"] is True
        waiting = asyncio.create_task(w.wait_final("T01", "R1", 5.0))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        h.journal.gate.set()
        assert await outcome(task) == (Unavailable if fails else 201)
        await waiting  # final, once a finalize entry is committed (the timer's, if it failed)
        assert shown() == ["final"] and not w.service.uncommitted
        journal_says = replayed(await journal_rows(h.journal)).floor.awards
        assert journal_says["T01/R1/1/player"].state == "final"
        await state_is_the_journals(w, h.journal)


# -- what displays are told: only what is committed, each win's states once -----------------

AWARD = "T01/R1/1/player"


def losing_outcome(at: int = NOW + 7) -> Command:
    boxes = [
        {"box": 1, "dealt_at": format_time(at), "cards": ["2C", "7D", "9H", "JS", "4C"]},
        {"box": 2, "dealt_at": format_time(at), "cards": ["3C", "8D", "TH", "QS", "5C"]},
    ]
    return table_command("outcome", {"boxes": boxes})


class Screens:
    """The writer's Broadcast, as a display would see it: each win with its award's state
    in the journal at the moment it was sent, each meters call with the journal's values."""

    def __init__(self, journal: GatedJournal) -> None:
        self.journal = journal
        self.wins: list[tuple[str, object, str | None]] = []  # (award, sent state, journal's)
        self.meters_sent: list[tuple[dict[str, str], dict[str, str]]] = []  # (sent, journal's)

    def meters(self, link: str, values: dict[str, str]) -> None:
        journal = replayed(self.journal.committed)
        held = {m["meter"]: m["value"] for m in meters(journal, link)}
        self.meters_sent.append((dict(values), held))

    def win(self, link: str, win: dict[str, object]) -> None:
        award = str(win["award_id"])
        held = replayed(self.journal.committed).floor.awards.get(award)
        self.wins.append((award, win["state"], None if held is None else held.state))

    def status(self, link: str | None, status: str, detail: str = "") -> None:
        return None

    def in_play(self, link: str, info: dict[str, object]) -> None:
        return None

    def levels(self, link: str, levels: dict[str, dict[str, object]]) -> None:
        return None

    def retire(self, link: str) -> None:
        return None


async def test_a_win_final_in_the_group_of_its_claim_is_shown_final_once_after_its_commit() -> None:
    """Docs/design.md "Broadcast": a royal flush posted more than `hold` after its
    deal, nothing else open on the link: its claim and the finalize entry that makes it
    final are one group; displays get one `final`, sent once the journal has it final."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        assert await outcome(h.post("R1", bets())) == 201
        h.clock.now += 3_000
        status, answer = await h.writer.submit("outcome", "T01", "R1", royal_flush_outcome())
        assert [a["state"] for a in answer["awards"] if a["kind"] == "meter"] == ["final"]
        assert screens.wins == [(AWARD, "final", "final")]


@pytest.mark.parametrize("fails", [False, True], ids=["committed", "failed"])
async def test_a_win_is_shown_pending_once_then_final_once_after_the_entry_that_made_it_final(
    fails: bool,
) -> None:
    """The claim's group is committed while the group gathered behind it holds
    the finalize entry that makes the award final. The claim's commit shows it `pending`
    (not the `final` already applied behind it); `final` comes once, with the commit of the
    entry that made it final; a failed commit shows nothing of its group."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        assert await outcome(h.post("R2", bets())) == 201  # open: holds R1's win pending
        h.clock.now += 3_000
        h.journal.gate.clear()
        claim = asyncio.create_task(w.submit("outcome", "T01", "R1", royal_flush_outcome()))
        await until(lambda: h.journal.waiting == 1, "the claim's append is held")
        assert w.service.floor.awards[AWARD].state == "pending"
        h.journal.fail_on = lambda rows: (
            fails and any(row.idem_key == "T01|R2|outcome" for row in rows)
        )
        closes = asyncio.create_task(w.submit("outcome", "T01", "R2", losing_outcome()))
        await until(lambda: w.service.floor.awards[AWARD].state == "final", "R1's win finalised")
        h.journal.gate.set()
        assert await outcome(claim) == 201
        assert await outcome(closes) == (Unavailable if fails else 201)
        if fails:
            assert screens.wins == [(AWARD, "pending", "pending")]
            h.journal.fail_on = lambda rows: False
            assert await outcome(w.submit("outcome", "T01", "R2", losing_outcome())) == 201
        assert screens.wins == [(AWARD, "pending", "pending"), (AWARD, "final", "final")]
        await state_is_the_journals(w, h.journal)


@pytest.mark.parametrize("fails", [False, True], ids=["committed", "failed"])
async def test_meters_shown_to_displays_are_the_journals(fails: bool) -> None:
    """docs/design.md "Broadcast": displays may lag the writer, never lead the journal: a
    commit shows the meters as its own entries leave them, not with the contributions of
    the group gathered behind it (which may yet fail)."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        h.journal.gate.clear()
        first = h.post("R1", bets())
        await until(lambda: h.journal.waiting == 1, "the first append is held")
        h.journal.fail_on = lambda rows: (
            fails and any(row.idem_key == "T01|R2|bets" for row in rows)
        )
        behind = h.post("R2", bets())
        await until(lambda: h.applied("R2"), "the bets behind it are applied")
        h.journal.gate.set()
        assert await outcome(first) == 201
        assert await outcome(behind) == (Unavailable if fails else 201)
        assert screens.meters_sent, "the commit announced its meters"
        for sent, held in screens.meters_sent:
            assert sent == held


async def test_a_commit_that_landed_though_it_failed_shows_its_win_final_once() -> None:
    """A COMMIT can land and still fail (the connection broke after it): the writer reads
    the journal's rows beyond its own before the next group; the award they made final is
    shown final then, once."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        assert await outcome(h.post("R2", bets())) == 201
        h.clock.now += 3_000
        assert await outcome(w.submit("outcome", "T01", "R1", royal_flush_outcome())) == 201
        assert screens.wins == [(AWARD, "pending", "pending")]
        h.journal.land_next = True
        assert await outcome(w.submit("outcome", "T01", "R2", losing_outcome())) is Unavailable
        assert h.journal.committed[-2].idem_key == "T01|R2|outcome"  # and its finalize
        assert await outcome(h.post("R3", bets(h.clock.now))) == 201  # reads the journal first
        assert screens.wins == [(AWARD, "pending", "pending"), (AWARD, "final", "final")]
        await state_is_the_journals(w, h.journal)


VOID = VoidCommand("foreign card found (5.8.1)")


@pytest.mark.parametrize("fails", [False, True], ids=["committed", "failed"])
async def test_a_void_of_a_win_shown_pending_is_shown_void_once_after_its_commit(
    fails: bool,
) -> None:
    """docs/design.md "The watermark": screens show "jackpot pending" while an award is
    pending; a void of its box (5.20) cancels it, and screens are told so once the void
    is committed, with `void` (no amount: nobody is paid it). A failed void shows nothing."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        assert await outcome(h.post("R2", bets())) == 201  # open: holds R1's win pending
        assert await outcome(w.submit("outcome", "T01", "R1", royal_flush_outcome())) == 201
        assert screens.wins == [(AWARD, "pending", "pending")]
        h.clock.now += 100  # past its deal: it keeps its place on the timeline (5.20)
        h.journal.fail_next = fails
        if fails:
            assert await outcome(w.submit("void", "T01", "R1", VOID)) is Unavailable
            assert screens.wins == [(AWARD, "pending", "pending")]
        assert await outcome(w.submit("void", "T01", "R1", VOID)) == 200
        assert screens.wins == [(AWARD, "pending", "pending"), (AWARD, "void", "void")]
        # Its place passes (R2's outcome, past hold): nothing more is shown of it.
        h.clock.now += 3_000
        assert await outcome(w.submit("outcome", "T01", "R2", losing_outcome())) == 201
        assert screens.wins == [(AWARD, "pending", "pending"), (AWARD, "void", "void")]
        await state_is_the_journals(w, h.journal)


async def test_a_win_claimed_and_voided_in_one_group_is_not_shown() -> None:
    """Screens never saw its `pending`: there is nothing to cancel on them."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        assert await outcome(h.post("R2", bets())) == 201
        h.journal.gate.clear()
        ahead = h.post("R3", bets())
        await until(lambda: h.journal.waiting == 1, "a commit is held")
        claim = asyncio.create_task(w.submit("outcome", "T01", "R1", royal_flush_outcome()))
        await until(lambda: AWARD in w.service.floor.awards, "the claim is applied")
        void = asyncio.create_task(w.submit("void", "T01", "R1", VOID))
        await until(lambda: w.service.floor.awards[AWARD].state == "void", "the void is applied")
        h.journal.gate.set()
        assert [await outcome(t) for t in (ahead, claim, void)] == [201, 201, 200]
        assert screens.wins == []
        await state_is_the_journals(w, h.journal)


async def test_a_void_round_correction_shows_its_rounds_pending_win_void_once() -> None:
    """5.24: a supervisor voids a round whose royal flush is final (paid: it stands) and
    whose straight flush, dealt later, is still pending: that one is paid to nobody, and
    screens shown it pending are told `void` once the correction is committed."""
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        assert await outcome(h.post("R1", bets())) == 201
        h.clock.now += 1_000
        assert await outcome(h.post("R2", bets(h.clock.now))) == 201  # holds what follows
        boxes = [
            {"box": 1, "dealt_at": format_time(NOW + 5), "cards": ["AH", "KH", "QH", "JH", "TH"]},
            {
                "box": 2,
                "dealt_at": format_time(NOW + 1_500),
                "cards": ["9S", "8S", "7S", "6S", "5S"],
            },
        ]
        h.clock.now = NOW + 3_000  # past the royal flush's hold, not R2's
        body = table_command("outcome", {"boxes": boxes})
        assert await outcome(w.submit("outcome", "T01", "R1", body)) == 201
        flush = "T01/R1/2/player"
        assert sorted(screens.wins) == [(AWARD, "final", "final"), (flush, "pending", "pending")]
        correction = CorrectCommand(
            correction="void_round", link="stud", meter="major", amount=0,
            reset=True, table="T01", round="R1", reason="5.24", version=2,
            reason_code="error_correction",
        )  # fmt: skip
        assert await outcome(w.submit("correct", None, None, correction, by="sam")) == 200
        assert screens.wins[2:] == [(flush, "void", "void")]
        await state_is_the_journals(w, h.journal)


Play = tuple[str, int]  # (what, round or ms)

_requests = st.tuples(
    st.sampled_from(["bets", "bets", "win", "win", "lose", "void"]), st.integers(1, 2)
)
_ticks = st.tuples(st.just("tick"), st.sampled_from([0, 500, 2_500]))
_controls = st.tuples(st.sampled_from(["hold", "open", "fail", "land", "pause"]), st.just(0))
# Weighted towards requests, so that most schedules claim and finalise some wins.
plays = st.lists(
    st.one_of(_requests, _requests, _requests, _requests, _ticks, _ticks, _controls),
    min_size=3,
    max_size=30,
)


def royal_flush_at(at: int) -> Command:
    boxes = [
        {"box": 1, "dealt_at": format_time(at), "cards": ["AH", "KH", "QH", "JH", "TH"]},
        {"box": 2, "dealt_at": format_time(at), "cards": ["2C", "7D", "9H", "JS", "4C"]},
    ]
    return table_command("outcome", {"boxes": boxes})


async def run_plays(schedule: list[Play]) -> None:  # noqa: C901, PLR0912 - the model: one branch per kind of play
    screens = Screens(journal := GatedJournal())
    async with Harness(journal, broadcast=screens) as h:
        w = h.writer
        tasks: list[asyncio.Task[Any]] = []
        closed: dict[int, int] = {}  # round -> its bets' closed_at: its hands are dealt then
        for what, n in schedule:
            if what == "bets":
                closed.setdefault(n, h.clock.now)
                tasks.append(h.post(f"R{n}", bets(closed[n])))
            elif what in ("win", "lose"):
                made = royal_flush_at if what == "win" else losing_outcome
                body = made(closed.get(n, h.clock.now))
                tasks.append(asyncio.create_task(w.submit("outcome", "T01", f"R{n}", body)))
            elif what == "void":
                tasks.append(asyncio.create_task(w.submit("void", "T01", f"R{n}", VOID)))
            elif what == "tick":  # once the writer has taken what was posted before
                await until(lambda: w.queue_depth() == 0, "the queue is taken")
                for _ in range(3):
                    await asyncio.sleep(0)
                h.clock.now += n
            elif what == "hold":
                h.journal.gate.clear()
            elif what == "open":
                h.journal.gate.set()
            elif what == "fail":
                h.journal.fail_next = True
            elif what == "land":
                h.journal.land_next = True
            await asyncio.sleep(0)  # and "pause": the writer runs a little
        h.journal.gate.set()
        h.journal.fail_next = h.journal.land_next = False
        for task in tasks:
            await outcome(task)
        # Every round gets its outcome, well past `hold`: every award the journal keeps
        # is made final by a committed entry (the first post reads a landed commit).
        h.clock.now += 3_000
        for n in range(1, 4):
            body = losing_outcome(closed.get(n, h.clock.now))
            await outcome(w.submit("outcome", "T01", f"R{n}", body))
        h.clock.now += 3_000
        await outcome(h.post("R9", bets(h.clock.now)))
        journal_says = replayed(h.journal.committed).floor.awards
        for award, sent, held in screens.wins:
            assert sent == held, (award, sent, held)  # sent once the journal says so
        for award in {a for a, _, _ in screens.wins} | set(journal_says):
            states = [sent for a, sent, _ in screens.wins if a == award]
            state = journal_says[award].state if award in journal_says else None
            if state == "final":
                assert states in (["pending", "final"], ["final"]), (award, states)
            elif state == "void":  # cancelled while pending: screens showing it are told
                assert states in (["pending", "void"], []), (award, states)
            else:
                assert state is None and states == [], (award, states)
        await state_is_the_journals(w, h.journal)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedule=plays)
# A win shown pending, then voided: one void, after its commit (not always drawn at random).
@example(schedule=[("bets", 1), ("win", 1), ("tick", 0), ("void", 1)])
@example(schedule=[("bets", 1), ("bets", 2), ("win", 1), ("tick", 0), ("hold", 0), ("void", 1)])
@example(schedule=[("bets", 1), ("win", 1), ("tick", 0), ("land", 0), ("void", 1), ("bets", 2)])
def test_any_schedule_shows_each_win_pending_at_most_once_and_final_once_when_committed(
    schedule: list[Play],
) -> None:
    """docs/design.md "Broadcast", under any mix of claims, voids, held, failed and landed
    commits: every win message is sent when the journal holds its award in that state;
    an award the journal made final is shown final exactly once, pending at most once.
    An award is shown at most one end (final or void), after its pending if that was
    shown; a void (docs/design.md "The watermark": "jackpot pending" ends) only of an award
    shown pending, since screens know nothing of the others."""
    asyncio.run(run_plays(schedule))


# -- any schedule of requests, held commits and failed commits ------------------------------

Step = tuple[
    str, int
]  # ("post", round) | ("retry", round) | ("hold", 0) | ("fail", 0) | ("open", 0)

steps = st.lists(
    st.one_of(
        st.tuples(st.just("post"), st.integers(0, 7)),
        st.tuples(st.just("retry"), st.integers(0, 7)),
        st.tuples(st.sampled_from(["hold", "fail", "open", "pause"]), st.just(0)),
    ),
    min_size=1,
    max_size=30,
)


async def run_schedule(schedule: list[Step]) -> None:  # noqa: C901 - the model: one branch per kind of step
    async with Harness(snapshot_every=3) as h:
        sent: list[tuple[str, Command, asyncio.Task[Any]]] = []
        answered: list[tuple[str, int]] = []  # (round, status) in the order answers came

        def heard(round_id: str, task: asyncio.Task[Any]) -> None:
            if not task.exception():
                answered.append((round_id, task.result()[0]))

        for action, n in schedule:
            if action in ("post", "retry"):
                # A retry has the first body; a post at another time is a different body.
                body = bets(NOW if action == "retry" else NOW + len(sent))
                task = h.post(f"R{n}", body)
                task.add_done_callback(functools.partial(heard, f"R{n}"))
                sent.append((f"R{n}", body, task))
            elif action == "hold":
                h.journal.gate.clear()
            elif action == "fail":
                h.journal.fail_next = True
            elif action == "open":
                h.journal.gate.set()
            await asyncio.sleep(0)  # and "pause": the writer runs a little
        h.journal.gate.set()
        h.journal.fail_next = False
        results = [await outcome(task) for _, _, task in sent]
        await asyncio.sleep(0)  # the done callbacks of tasks that were already done
        if h.writer.snapshots.task is not None:
            await h.writer.snapshots.task
        rows = await journal_rows(h.journal)
        events = [row for row in rows if row.idem_key is not None]  # not the finalize rows
        recorded = {row.idem_key: row for row in events if row.idem_key is not None}
        assert len(recorded) == len(events)  # an event is recorded at most once
        for (round_id, body, _), result in zip(sent, results, strict=True):
            if result in (200, 201):  # acknowledged: recorded, with this very body
                row = recorded.get(f"T01|{round_id}|bets")
                assert row is not None and row.body_sha256 == body_sha256(msgspec.to_builtins(body))
            else:  # a 503, or a 409: another body was posted first
                assert result in (Unavailable, Conflict), result
        # Every recorded event was acknowledged, to its first sender.
        firsts = [r for r, status in answered if status == 201]
        assert sorted(f"T01|{r}|bets" for r in firsts) == sorted(recorded)
        # In the journal's order; a retry is answered after its first.
        seqs = [recorded[f"T01|{r}|bets"].seq for r in firsts]
        assert seqs == sorted(seqs)
        for i, (r, status) in enumerate(answered):
            if status == 200:
                assert (r, 201) in answered[:i]
        await state_is_the_journals(h.writer, h.journal)
        latest = await h.journal.latest_snapshot()
        assert latest is None or latest[0] <= rows[-1].seq


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedule=steps)
def test_any_schedule_acknowledges_only_what_is_recorded_in_order(schedule: list[Step]) -> None:
    asyncio.run(run_schedule(schedule))


class SlowLookupJournal(GatedJournal):
    """A journal whose lookups wait at a gate of their own (a slow or flooded index)."""

    def __init__(self) -> None:
        super().__init__()
        self.lookup_gate = asyncio.Event()
        self.lookups: list[str] = []

    async def lookup(self, idem_key: str) -> JournalRow | None:
        self.lookups.append(idem_key)
        await self.lookup_gate.wait()
        return await super().lookup(idem_key)


async def test_a_refused_event_does_not_hold_up_the_commits_of_other_tables() -> None:
    """An outcome for a round the writer does not know may be a late
    retry, so the journal is asked for it; that question is not the commit loop's: while
    it waits, another table's bets are committed and answered."""
    journal = SlowLookupJournal()
    async with Harness(journal) as h:
        cards = ["2S", "7H", "9D", "JC", "KS"]
        refused = asyncio.create_task(
            h.writer.submit("outcome", "T02", "UNKNOWN", outcome_body(cards))
        )
        try:
            await until(lambda: journal.lookups == ["T02|UNKNOWN|outcome"], "the lookup")
            assert await asyncio.wait_for(outcome(h.post("R1", bets())), 5) == 201
            assert not refused.done()
        finally:
            journal.lookup_gate.set()  # else the writer could not stop
        assert await outcome(refused) is UnknownError  # 404: no bets for that round
        await state_is_the_journals(h.writer, h.journal)


async def test_a_refused_event_of_a_round_in_memory_is_not_looked_up() -> None:
    """A round in memory has every recorded event's key in memory too: its refusals need
    no journal lookup."""
    journal = SlowLookupJournal()
    async with Harness(journal) as h:
        assert await outcome(h.post("R1", bets())) == 201
        bad = outcome_body(["2S", "2S", "9D", "JC", "KS"])  # the same card twice (5.8)
        try:
            submitted = h.writer.submit("outcome", "T01", "R1", bad)
            refusal = await outcome(asyncio.wait_for(submitted, 5))
            assert refusal is not None and issubclass(refusal, (JackpotError, TablesError))
            assert journal.lookups == []
        finally:
            journal.lookup_gate.set()  # else the writer could not stop
