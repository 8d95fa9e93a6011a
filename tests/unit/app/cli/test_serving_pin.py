"""What `GuardedHttpProtocol` (app/cli/serving.py) takes from uvicorn's httptools protocol
beyond its public API: the parser callbacks it hooks and the per-connection state it reads.
A uvicorn upgrade that moves any of it fails here, not silently on a floor."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from app.cli.serving import GuardedHttpProtocol, HeadWithBody, ServingConfig


class Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.reading = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await asyncio.Event().wait()  # never answers: the test looks at the state in between


def test_the_pinned_uvicorn_minor_version() -> None:
    major, minor = (int(part) for part in version("uvicorn").split(".")[:2])
    assert (major, minor) == (0, 54)  # pyproject.toml pins >=0.54,<0.55


def test_the_callbacks_hooked_are_uvicorns() -> None:
    for name in (
        "data_received",
        "on_message_begin",
        "on_headers_complete",
        "on_message_complete",
        "handle_websocket_upgrade",
        "connection_made",
        "connection_lost",
    ):
        assert callable(getattr(HttpToolsProtocol, name)), name


def test_a_pipelined_request_is_queued_with_reading_paused() -> None:
    async def main() -> None:
        config = ServingConfig(app, http=GuardedHttpProtocol, lifespan="off")
        protocol = GuardedHttpProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
        transport = Transport()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        protocol.data_received(
            b"GET / HTTP/1.1\r\nhost: x\r\n\r\nHEAD / HTTP/1.1\r\nhost: x\r\n\r\nGET /par"
        )
        assert isinstance(protocol.cycle, RequestResponseCycle)
        assert [cycle for cycle, _ in protocol.pipeline] == [protocol.cycle]  # the HEAD waits
        assert protocol.cycle.scope["method"] == "HEAD"
        assert isinstance(protocol.cycle.transport, HeadWithBody)
        assert not protocol.cycle.response_started and not protocol.cycle.response_complete
        assert protocol.flow.read_paused and not transport.reading
        assert protocol._reading == "head"  # the third request's head is being read
        protocol.connection_lost(None)
        for task in list(protocol.tasks):
            task.cancel()

    asyncio.run(main())
