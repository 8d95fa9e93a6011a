"""Display endpoints over a real uvicorn server and real websocket clients."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.display.broadcaster import Broadcaster, MemoryBackend
from app.display.frames import DisplayWebSocketProtocol
from app.display.link_routes import display_router
from app.store.journal import JournalRow, MemoryJournal
from tests.integration.app.support import KeptJournal, build_server, client_of, running
from tests.support import T01, Clock

QUIET = 3600.0


@dataclass
class Served:
    broadcaster: Broadcaster
    base: str  # http://127.0.0.1:port

    def ws(self, link: str = "stud", query: str = "") -> str:
        return self.base.replace("http", "ws", 1) + f"/v1/links/{link}/ws{query}"


@contextlib.asynccontextmanager
async def serve(
    *,
    display_token: str | None = None,
    queue_size: int = 256,
    meters: int = 2,
    ws: str | type[asyncio.Protocol] = "auto",
) -> AsyncIterator[Served]:
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=10, queue_size=queue_size, ping_s=QUIET)
    names = [("major", "Major"), ("minor", "Minor")][:meters] or []
    names += [(f"m{i:03d}", f"Meter {i:03d} " + "x" * 40) for i in range(max(0, meters - 2))]
    broadcaster.configure_link("stud", "SGD", names)
    await broadcaster.start()
    app = FastAPI()
    app.include_router(display_router(broadcaster, display_token=display_token))
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        ws=ws,
        ws_per_message_deflate=False,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(broadcaster, f"http://127.0.0.1:{port}")
    finally:
        await broadcaster.stop()
        server.should_exit = True
        await task


# uvicorn's own websockets (the queue and a send per message, as under any ASGI server)
# and `jackpot serve`'s, whose frames the fan-out writes straight to the socket.
WS = pytest.mark.parametrize("protocol", ["auto", DisplayWebSocketProtocol], ids=["asgi", "direct"])


@pytest.fixture(params=["auto", DisplayWebSocketProtocol], ids=["asgi", "direct"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    async with serve(ws=request.param) as s:
        yield s


async def recv(ws: ClientConnection, count: int = 1) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        return [json.loads(await ws.recv()) for _ in range(count)]


async def close_code(ws: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(10):
            while True:
                await ws.recv()
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


def pending_win(award: str = "A1") -> dict[str, object]:
    return {
        "state": "pending",
        "award_id": award,
        "table": "T01",
        "round": "R1001",
        "box": 1,
        "meter": "major",
        "hand": "royal_flush",
        "dealt_at": "2026-11-22T18:00:09.410Z",
    }


async def test_snapshot_then_meters_wins_and_status_without_gaps(served: Served) -> None:
    b = served.broadcaster
    b.meters("stud", {"major": "10000.00", "minor": "500.00"})
    await asyncio.sleep(0.05)
    async with connect(served.ws(), compression=None) as ws:
        [snapshot] = await recv(ws)
        assert snapshot["type"] == "snapshot" and snapshot["currency"] == "SGD"
        assert snapshot["meters"][0] == {"meter": "major", "name": "Major", "value": "10000.00"}

        b.meters("stud", {"major": "10000.25"})
        [meters] = await recv(ws)
        assert meters["type"] == "meters" and meters["meters"][0]["value"] == "10000.25"

        b.win("stud", pending_win())
        b.win("stud", {**pending_win(), "state": "final", "amount": "10000.25"})
        b.meters("stud", {"major": "10000.00"})
        b.status("stud", "degraded", "database down")
        pending, final, reset, status = await recv(ws, 4)
        assert (pending["type"], pending["state"]) == ("win", "pending")
        assert (final["state"], final["amount"], final["box"]) == ("final", "10000.25", 1)
        assert reset["type"] == "meters" and reset["meters"][0]["value"] == "10000.00"
        assert (status["status"], status["detail"]) == ("degraded", "database down")
        seqs = [m["seq"] for m in (snapshot, meters, pending, final, reset, status)]
        assert seqs == list(range(seqs[0], seqs[0] + 6))


async def test_every_display_receives_the_same_stream(served: Served) -> None:
    clients = [await connect(served.ws(), compression=None) for _ in range(20)]
    try:
        for ws in clients:
            await recv(ws)
        for i in range(10):
            served.broadcaster.win("stud", pending_win(f"A{i}"))
        streams = [await recv(ws, 10) for ws in clients]
        assert all(stream == streams[0] for stream in streams)
        assert [m["award_id"] for m in streams[0]] == [f"A{i}" for i in range(10)]
    finally:
        for ws in clients:
            await ws.close()


@WS
async def test_a_display_that_never_reads_is_dropped_and_the_others_get_everything(
    protocol: str | type[asyncio.Protocol],
) -> None:
    # Big messages (200 meters) so the stalled client's socket buffers fill quickly.
    async with serve(queue_size=16, meters=200, ws=protocol) as served:
        b = served.broadcaster
        stalled = await connect(served.ws(), compression=None, max_queue=1)
        readers = [await connect(served.ws(), compression=None) for _ in range(2)]
        got: list[list[int]] = [[m["seq"] for m in await recv(ws)] for ws in readers]
        published = 0
        while b.stats["slow_consumers"] == 0:
            assert published < 5000, "the stalled display was never dropped"
            b.meters("stud", {f"m{i:03d}": f"{published}.{i % 100:02d}" for i in range(198)})
            published += 1
            for ws, seqs in zip(readers, got, strict=True):
                seqs += [m["seq"] for m in await recv(ws)]
        for _ in range(5):  # and the readers go on as before
            b.meters("stud", {"major": f"{published}.00"})
            published += 1
            for ws, seqs in zip(readers, got, strict=True):
                seqs += [m["seq"] for m in await recv(ws)]

        assert b.subscriber_count("stud") == 2
        for seqs in got:
            assert seqs == list(range(seqs[0], seqs[0] + published + 1))
        # The stalled display gets what was already in its socket, then the close.
        stalled_seqs: list[int] = []
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(20):
                while True:
                    stalled_seqs.append(json.loads(await stalled.recv())["seq"])
        assert closed.value.rcvd is None or closed.value.rcvd.code == 1013
        assert 0 < len(stalled_seqs) < published + 1
        assert stalled_seqs == list(range(stalled_seqs[0], stalled_seqs[0] + len(stalled_seqs)))
        for ws in readers:
            await ws.close()


async def test_a_closed_display_is_unsubscribed(served: Served) -> None:
    async with connect(served.ws(), compression=None) as ws:
        await recv(ws)
        assert served.broadcaster.subscriber_count("stud") == 1
    async with asyncio.timeout(10):
        while served.broadcaster.subscriber_count("stud"):
            await asyncio.sleep(0.01)


async def test_unknown_link_closes_4404(served: Served) -> None:
    async with connect(served.ws("nope"), compression=None) as ws:
        assert await close_code(ws) == 4404


async def test_stopping_the_broadcaster_closes_displays_1012(served: Served) -> None:
    async with connect(served.ws(), compression=None) as ws:
        await recv(ws)
        await served.broadcaster.stop()
        assert await close_code(ws) == 1012


@pytest.mark.parametrize(
    ("query", "headers", "code"),
    [
        ("", {}, 4401),
        ("?token=wrong", {}, 4401),
        ("", {"Authorization": "Bearer wrong"}, 4401),
        ("?token=s3cret", {}, None),
        ("", {"Authorization": "Bearer s3cret"}, None),
    ],
)
async def test_display_token(query: str, headers: dict[str, str], code: int | None) -> None:
    async with (
        serve(display_token="s3cret") as served,
        connect(served.ws(query=query), additional_headers=headers, compression=None) as ws,
    ):
        if code is None:
            assert (await recv(ws))[0]["type"] == "snapshot"
        else:
            assert await close_code(ws) == code


def token_protocol(token: str) -> str:
    return "jackpot.token." + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("protocols", "code"),
    [
        (["jackpot", token_protocol("s3cret")], None),
        ([token_protocol("s3cret")], None),
        (["jackpot", token_protocol("wrong")], 4401),
        (["jackpot", "jackpot.token.!!!"], 4401),
        (["jackpot"], 4401),
    ],
)
async def test_display_token_as_a_subprotocol(protocols: list[str], code: int | None) -> None:
    # A header, so neither uvicorn's nor the proxy's log has the token.
    async with (
        serve(display_token="s3cret") as served,
        connect(served.ws(), subprotocols=protocols, compression=None) as ws,  # type: ignore[arg-type]
    ):
        assert ws.subprotocol == protocols[0]
        if code is None:
            assert (await recv(ws))[0]["type"] == "snapshot"
        else:
            assert await close_code(ws) == code


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/v1/links/stud", {}, 401),
        ("/v1/links/nope", {}, 401),  # before telling whether the link exists
        ("/v1/links/stud?token=wrong", {}, 401),
        ("/v1/links/stud", {"Authorization": "Bearer wrong"}, 401),
        ("/v1/links/stud", {"Authorization": "Bearer s3cret"}, 200),
        ("/v1/links/stud?token=s3cret", {}, 200),
        ("/v1/links/nope?token=s3cret", {}, 404),
        ("/display/stud", {}, 200),  # the page holds no data; its script takes the token
    ],
)
async def test_display_token_guards_the_link_state(
    path: str, headers: dict[str, str], status: int
) -> None:
    async with (
        serve(display_token="s3cret") as served,
        httpx.AsyncClient(base_url=served.base) as http,
    ):
        answer = await http.get(path, headers=headers)
        assert answer.status_code == status
        if status == 401:
            assert answer.headers["content-type"].startswith("application/problem+json")
            assert answer.json()["detail"] == "display token missing or wrong"
            assert answer.headers["www-authenticate"] == "Bearer"


async def test_link_state_page_and_static_files(served: Served) -> None:
    served.broadcaster.meters("stud", {"major": "10234.50"})
    served.broadcaster.win("stud", pending_win())
    async with httpx.AsyncClient(base_url=served.base) as http:
        state = (await http.get("/v1/links/stud")).json()
        assert state["link"] == "stud" and state["currency"] == "SGD"
        assert state["meters"][0] == {"meter": "major", "name": "Major", "value": "10234.50"}
        assert state["status"] == "ok" and state["pending"][0]["award_id"] == "A1"
        assert state["recent_wins"] == []

        missing = await http.get("/v1/links/nope")
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")
        assert set(missing.json()) >= {"type", "title", "status", "detail"}
        assert missing.json()["status"] == 404

        page = await http.get("/display/stud")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        for anchor in ('id="banner-down"', 'id="pending"', 'id="celebration"', "display.js"):
            assert anchor in page.text
        assert (await http.get("/display/nope")).status_code == 404
        checks: dict[str, Callable[[str], bool]] = {
            "/static/display.js": lambda t: t.startswith("text/javascript"),
            "/static/display.css": lambda t: t.startswith("text/css"),
        }
        for path, media in checks.items():
            response = await http.get(path)
            assert response.status_code == 200 and media(response.headers["content-type"])


async def test_a_royal_flush_posted_after_hold_reaches_screens_final_once() -> None:
    """Issue 16.2 through the API, docs/design.md "Broadcast": a royal flush posted more than
    `hold` after its deal, nothing else open on the link: its claim and the entry that
    makes it final commit together, and screens get one `final` win for it."""
    clock = Clock()
    broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=10, ping_s=QUIET)
    app = build_server(clock=clock, broadcaster=broadcaster).app
    async with app.router.lifespan_context(app):
        screen = broadcaster.subscribe("stud")
        async with client_of(app) as client:
            boxes = [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]
            bets = {"closed_at": clock.at(), "boxes": boxes}
            r = await client.post("/v1/tables/T01/rounds/R1/bets", json=bets, headers=T01)
            assert r.status_code == 200, r.text
            dealt_at = clock.at(5)
            clock.now += 3_000  # past `hold`
            cards = ["AH", "KH", "QH", "JH", "TH"]
            outcome = {"boxes": [{"box": 1, "dealt_at": dealt_at, "cards": cards}]}
            r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
            assert r.status_code == 200, r.text
            assert [a["state"] for a in r.json()["awards"] if a["kind"] == "meter"] == ["final"]
            await asyncio.sleep(0.05)  # a coalescing window: the meters follow
            messages: list[dict[str, Any]] = []
            while screen.pending():
                messages.append(json.loads(await screen.__anext__()))
            wins = [(m["award_id"], m["state"]) for m in messages if m["type"] == "win"]
            assert wins == [("T01/R1/1/player", "final")]
            state = (await client.get("/v1/links/stud")).json()
            assert [w["award_id"] for w in state["recent_wins"]] == ["T01/R1/1/player"]
            assert state["pending"] == []


async def post_a_pending_royal_flush(client: httpx.AsyncClient, clock: Clock) -> None:
    """R0's and R1's bets at T01, then R1's royal flush: pending, as R0 (closed first)
    stays open and holds it back (docs/design.md, the watermark)."""
    boxes = [{"box": 1, "ante": "10.00", "jackpot": "1.00"}]
    for round_id in ("R0", "R1"):
        bets = {"closed_at": clock.at(), "boxes": boxes}
        r = await client.post(f"/v1/tables/T01/rounds/{round_id}/bets", json=bets, headers=T01)
        assert r.status_code == 200, r.text
        clock.now += 1
    cards = ["AH", "KH", "QH", "JH", "TH"]
    outcome = {"boxes": [{"box": 1, "dealt_at": clock.at(5), "cards": cards}]}
    r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=T01)
    assert [a["state"] for a in r.json()["awards"]] == ["pending"]


async def test_a_restarted_writer_shows_screens_the_awards_still_pending() -> None:
    """docs/design.md "the watermark": while an award is pending, displays show "jackpot
    pending". A writer that recovers a pending award from the journal shows it to new
    screens at once, not only once it becomes final."""

    clock, journal = Clock(), KeptJournal()

    def started(outcome_wait_s: float | None = None) -> FastAPI:
        broadcaster = Broadcaster(MemoryBackend(), coalesce_ms=10, ping_s=QUIET)
        server = build_server(
            journal=journal, clock=clock, outcome_wait_s=outcome_wait_s, broadcaster=broadcaster
        )
        return server.app

    async with running(started(outcome_wait_s=0.01), "http://test") as client:
        await post_a_pending_royal_flush(client, clock)
    async with running(started(), "http://test") as client:
        await asyncio.sleep(0.05)  # a coalescing window
        state = (await client.get("/v1/links/stud")).json()
        assert [w["award_id"] for w in state["pending"]] == ["T01/R1/1/player"]


@pytest.mark.parametrize("link", ["x" * 200, "é" * 100, "x" * 4000])
async def test_a_link_id_of_any_length_closes_4404_cleanly(served: Served, link: str) -> None:
    # A close reason is at most 123 bytes (RFC 6455 5.5): "unknown link '<200 x>'" made
    # the server's close raise `control frame too long` and the client got no code.
    async with connect(served.ws(link), compression=None) as ws:
        assert await close_code(ws) == 4404
        assert ws.close_reason is not None and len(ws.close_reason.encode()) <= 123


async def test_a_void_of_a_pending_royal_flush_reaches_screens_void_once_after_its_commit() -> None:
    """docs/design.md "the watermark": displays show "jackpot pending" while an award is
    pending; a void of its box (5.20, 4.5.1: it keeps its place, paid to nobody) ends
    that. Screens that were shown the win `pending` get one `void` for it, sent once the
    void is committed; the link's read model lists it neither pending nor as a win."""

    class Recorded(MemoryJournal):
        def __init__(self) -> None:
            super().__init__()
            self.keys: list[str] = []  # what is committed, in order

        async def append(self, rows: Sequence[JournalRow]) -> None:
            await super().append(rows)
            self.keys += [row.idem_key or row.kind for row in rows]

    class Watched(Broadcaster):
        """Each win with whether the journal held the void when it was sent."""

        def __init__(self, journal: Recorded) -> None:
            super().__init__(MemoryBackend(), coalesce_ms=10, ping_s=QUIET)
            self.journal = journal
            self.sent: list[tuple[object, object, bool]] = []

        def win(self, link: str, win: Mapping[str, object]) -> None:
            voided = "T01|R1|void" in self.journal.keys
            self.sent.append((win["award_id"], win["state"], voided))
            super().win(link, win)

    clock, journal = Clock(), Recorded()
    broadcaster = Watched(journal)
    app = build_server(
        journal=journal, clock=clock, outcome_wait_s=0.01, broadcaster=broadcaster
    ).app
    award = "T01/R1/1/player"
    async with app.router.lifespan_context(app):
        screen = broadcaster.subscribe("stud")
        async with client_of(app) as client:
            await post_a_pending_royal_flush(client, clock)
            await asyncio.sleep(0.05)  # a coalescing window
            state = (await client.get("/v1/links/stud")).json()
            assert [w["award_id"] for w in state["pending"]] == [award]

            clock.now += 100  # past its deal: the voided award keeps its place (5.20)
            void = {"reason": "foreign card found (5.8.1)"}
            r = await client.post("/v1/tables/T01/rounds/R1/void", json=void, headers=T01)
            assert r.status_code == 200, r.text
            await asyncio.sleep(0.05)
            messages: list[dict[str, Any]] = []
            while screen.pending():
                messages.append(json.loads(await screen.__anext__()))
            wins = [(m["award_id"], m["state"]) for m in messages if m["type"] == "win"]
            assert wins == [(award, "pending"), (award, "void")]
            [voided] = [m for m in messages if m["type"] == "win" and m["state"] == "void"]
            assert "amount" not in voided  # nobody is paid it
            assert broadcaster.sent == [(award, "pending", False), (award, "void", True)]
            state = (await client.get("/v1/links/stud")).json()
            assert state["pending"] == []
            assert all(w["award_id"] != award for w in state["recent_wins"])

            # Later finalising (R0's outcome, past hold) shows nothing more of it.
            losing = {
                "boxes": [
                    {"box": 1, "dealt_at": clock.at(), "cards": ["2C", "7D", "9H", "JS", "4C"]}
                ]
            }
            clock.now += 5_000
            r = await client.post("/v1/tables/T01/rounds/R0/outcome", json=losing, headers=T01)
            assert r.status_code == 200, r.text
            await asyncio.sleep(0.05)
            assert [(a, s) for a, s, _ in broadcaster.sent] == [(award, "pending"), (award, "void")]
            state = (await client.get("/v1/links/stud")).json()
            assert state["pending"] == [] and state["recent_wins"] == []
