"""How uvicorn serves the app: connection limits and timeouts (docs/operations.md, "Limits").

uvicorn bounds an idle keep-alive connection (`timeout_keep_alive`) but not one that
opens and sends nothing, or trickles its request a byte at a time: each holds a
connection slot for ever, and `limit_concurrency` then refuses everyone else.
`GuardedHttpProtocol` gives every request of a connection, pipelined or not,
`request_read_timeout_s` to arrive whole (head and body) from its first byte (or from
the connection's opening), not counting the time uvicorn stops reading while an earlier
answer is owed; it refuses a head still incomplete after `MAX_HEAD_BYTES` (a head that
comes whole in one read, at most 256 KiB, is parsed as uvicorn does). A refusal is
answered (408, 431) only when no earlier answer is owed, else the connection is just
closed: answers keep the order of the requests. It also applies
`limit_concurrency` to websocket upgrades, which uvicorn lets through uncounted, and
answers a handshake line too long for the websockets library (414 or 431) instead
of leaving the client waiting. An answer's head that declares its length goes out with
its body, in one write (`HeadWithBody`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.config.settings import Settings
from app.display.frames import DisplayWebSocketProtocol

# Displays send only small `shown` acks (docs/api.md, Displays): a websocket message
# above this closes 1009 before it is read; a `shown` fits (at most 16 wins).
WS_MAX_SIZE = 4096
# Request line and headers: a table's are well under 2 KiB (nginx's default buffer is 8).
MAX_HEAD_BYTES = 16_384
# The websockets library's bound on one line of a handshake (8,192), less " HTTP/1.1".
WS_MAX_LINE = 8_000


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a deadline and a size bound on reading each request.

    It hooks uvicorn's parser callbacks and per-connection state (`cycle`, `pipeline`,
    `flow`): uvicorn has no public hook for either bound. `tests/unit/app/cli/
    test_serving_pin.py` fails when the pinned uvicorn no longer has what this relies on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timeout_s: float = getattr(self.config, "request_read_timeout_s", 10.0)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading: Reading = "idle"
        self._head_bytes = 0  # of the head being read, counted from the read after it began
        self._begun = 0  # requests begun in the read being parsed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self._reading == "idle":
            self._arm()  # the first byte of a keep-alive connection's next request
        start = self._reading
        self._begun = 0
        super().data_received(data)
        if self._reading != "head" or self.transport.is_closing():
            return
        # Counted after parsing: a read that ends a head may carry a body or the next
        # request behind it. A head that begins after another request's bytes in the same
        # read counts from the next read: the slack is one read, never more.
        if (start == "head" and self._begun == 0) or (start == "idle" and self._begun == 1):
            self._head_bytes += len(data)
        if self._head_bytes > MAX_HEAD_BYTES:
            self._refuse(b"431 Request Header Fields Too Large")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._begun += 1
        self._reading = "head"
        self._head_bytes = 0
        if self._deadline is None:
            self._arm()  # a request pipelined behind another gets its own deadline

    def on_headers_complete(self) -> None:
        self._reading = "body"
        before = self.cycle
        super().on_headers_complete()
        if self.cycle is not before:  # a request's cycle (not a websocket's upgrade)
            head = self.scope["method"] == "HEAD"  # its answer has no body to wait for
            self.cycle.transport = HeadWithBody(self.cycle.transport, hold=not head)  # type: ignore[assignment]

    def on_message_complete(self) -> None:
        self._reading = "idle"
        self._disarm()  # the whole request is in: the app's time is not ours to bound
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        # The websockets library fails the handshake with a traceback, and the client
        # waits for an answer it never gets, on a line above 8 KiB: answer it here.
        if len(self.url) > WS_MAX_LINE:
            self._refuse(b"414 URI Too Long", has_cycle=False)
            return
        if any(len(name) + len(value) + 2 > WS_MAX_LINE for name, value in self.headers):
            self._refuse(b"431 Request Header Fields Too Large", has_cycle=False)
            return
        limit = self.limit_concurrency
        if limit is not None and len(self.connections) >= limit:
            self.logger.warning("Exceeded concurrency limit (websocket).")
            self._refuse(b"503 FloorState Unavailable", has_cycle=False)
            return
        super().handle_websocket_upgrade()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self._read_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.flow.read_paused:
            # uvicorn stopped reading until an earlier answer is out (a pipelined request
            # waits its turn) or the app reads the body: not the client's delay.
            self._arm()
            return
        self._refuse(b"408 Request Timeout", has_cycle=self._reading == "body")

    def _refuse(self, status: bytes, *, has_cycle: bool = False) -> None:
        # Answers go out in the order of the requests: while an earlier request's answer
        # (or this one's) is owed or under way, the connection is closed without a word.
        cycle = self.cycle
        if has_cycle:
            owed = bool(self.pipeline) or (cycle.response_started and not cycle.response_complete)
        else:
            owed = cycle is not None and not cycle.response_complete
        if not owed:
            self.transport.write(
                b"HTTP/1.1 " + status + b"\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
            )
        self._disarm()
        self.transport.close()


Reading = Literal["idle", "head", "body"]  # what of a request the connection is reading


class HeadWithBody:
    """A request cycle's transport: an answer's head that declares its length waits for
    the body, and both go out in one write, one send(2) instead of two (uvicorn writes
    each ASGI message at once; the two sends were a tenth of the server's CPU under
    bench_http). A chunked (streamed) answer's head goes out at once, as before."""

    __slots__ = ("_transport", "_head", "_fresh")

    def __init__(self, transport: asyncio.Transport, *, hold: bool = True) -> None:
        self._transport = transport
        self._head: bytes | None = None
        # Its first write is the head (or a 100 Continue before it); an answer to HEAD
        # (`hold=False`) has no body, so its head goes out at once.
        self._fresh = hold

    def write(self, data: bytes) -> None:
        if self._fresh and not data.startswith(b"HTTP/1.1 100 "):
            self._fresh = False
            if b"\r\ncontent-length: " in data:
                self._head = data
                return
        if self._head is not None:
            data, self._head = self._head + data, None
        self._transport.write(data)

    def flush(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # is_closing, get_extra_info, abort...
        return getattr(self._transport, name)


class ServingConfig(uvicorn.Config):
    """uvicorn's Config plus what GuardedHttpProtocol reads from it: the read timeout."""

    request_read_timeout_s: float = 10.0


def uvicorn_config(app: Any, settings: Settings, *, log_level: str = "info") -> ServingConfig:
    """The one uvicorn configuration of `jackpot serve` (both roles); tests serve with it."""
    config = ServingConfig(
        app,
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        log_config=None,  # app.ops.logs.configure owns the handlers and the format
        access_log=False,  # JACKPOT_ACCESS_LOG: RequestContextMiddleware logs requests
        lifespan="on",
        http=GuardedHttpProtocol,
        # uvicorn's sans-io websockets, plus a frame sink the display fan-out writes to.
        ws=DisplayWebSocketProtocol,
        # Displays get a few small JSON frames a second: compressing each costs the
        # display process more CPU than it saves on a casino's LAN.
        ws_per_message_deflate=False,
        ws_max_size=WS_MAX_SIZE,
        # A display's websocket answers pings (every 20 s) or is closed 20 s later.
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        limit_concurrency=settings.max_connections,
        timeout_keep_alive=settings.keep_alive_s,
    )
    config.request_read_timeout_s = settings.request_read_timeout_s
    return config
