"""A PostgreSQL proxy for one writer process that, once armed, lets the next COPY
statement and its rows through and holds back its end (CopyDone) and everything its
client sends after it: the server has the rows (its BEFORE trigger ran) and waits for
an end that does not come, as it does for a writer frozen or cut off in the middle of
an append."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from urllib.parse import parse_qs, urlsplit, urlunsplit

from tests.e2e.cluster import free_port


class HeldCopy:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.port = free_port()
        self.armed = threading.Event()
        self.held = threading.Event()  # a COPY was let through and its rows held back
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def proxied(self) -> str:
        """The DSN a writer connects with: this proxy, in plain text (no TLS to read)."""
        parts = urlsplit(self.dsn)
        user = parts.netloc.rpartition("@")[0]
        return urlunsplit(
            ("postgresql", f"{user}@127.0.0.1:{self.port}", parts.path, "sslmode=disable", "")
        )

    async def _upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        parts = urlsplit(self.dsn)
        socket_dir = parse_qs(parts.query).get("host", [""])[0]
        port = parts.port or 5432
        if socket_dir.startswith("/"):
            return await asyncio.open_unix_connection(f"{socket_dir}/.s.PGSQL.{port}")
        return await asyncio.open_connection(parts.hostname or socket_dir, port)

    def __enter__(self) -> HeldCopy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _close(self) -> None:
        for writer in self._open:
            writer.transport.abort()
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        await asyncio.sleep(0.1)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._loop.run_until_complete(server.wait_closed())
            self._loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await self._upstream()
        self._open |= {writer, up_writer}
        back = asyncio.create_task(self._pipe(up_reader, writer))
        try:
            await self._client_to_server(reader, up_writer)
            await back  # held: until the server ends the session
        finally:
            back.cancel()
            for w in (writer, up_writer):
                with contextlib.suppress(OSError, RuntimeError):
                    w.close()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        sink.close()

    async def _client_to_server(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter
    ) -> None:
        """Message by message (the startup message has no type byte, the others one)."""
        started = copying = False
        buffer = b""
        while data := await source.read(65536):
            buffer += data
            while True:
                head = 0 if not started else 1
                if len(buffer) < head + 4:
                    break
                size = head + int.from_bytes(buffer[head : head + 4], "big")
                if len(buffer) < size:
                    break
                message, buffer = buffer[:size], buffer[size:]
                started = True
                if message[:1] == b"c" and copying:  # CopyDone
                    await sink.drain()
                    self.held.set()
                    return  # it, and all that follows, never reach the server
                sink.write(message)
                if message[:1] == b"Q" and message[5:9].upper() == b"COPY" and self.armed.is_set():
                    self.armed.clear()
                    copying = True
            await sink.drain()
