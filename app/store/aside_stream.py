"""Work done in a forked child that streams its bytes back while it goes (an export of any
size): the writer's loop forks and relays chunks, it never walks the state nor holds
the whole answer.

The child sees the process's memory as it was at the fork (copy-on-write, as a snapshot
taken aside: app/store/snapshots.py `run_aside`), writes to a pipe and blocks while the
reader is behind, so neither side holds more than a pipe's and a chunk's worth. A child
that fails, or is killed, ends the stream with an error, never a silently short one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import warnings
from collections.abc import AsyncIterator, Callable
from typing import BinaryIO

CHUNK = 1 << 16
_reaping: set[asyncio.Task[object]] = set()  # reaps of abandoned children, held until done


class AsideFailed(RuntimeError):
    """The child did not finish its work: what was streamed is incomplete."""


class AsideStream:
    """A forked child's output: `readline` for a first line (a header), then `chunks`;
    always `close` (it reaps the child, killing it when the reader gave up early)."""

    def __init__(self, pid: int, reader: asyncio.StreamReader, transport: asyncio.BaseTransport):
        self.pid = pid
        self._reader = reader
        self._transport = transport
        self._reaped = False

    async def readline(self) -> bytes:
        line = await self._reader.readline()
        if not line.endswith(b"\n"):
            await self._finish()  # raises: the child ended before its first line
            raise AsideFailed("the process aside wrote no first line")
        return line

    async def chunks(self) -> AsyncIterator[bytes]:
        while chunk := await self._reader.read(CHUNK):
            yield chunk
        await self._finish()

    async def _finish(self) -> None:
        self._transport.close()
        _, status = await asyncio.to_thread(os.waitpid, self.pid, 0)
        self._reaped = True
        if os.waitstatus_to_exitcode(status) != 0:
            raise AsideFailed(f"the process aside exited with status {status}")

    async def close(self) -> None:
        self._transport.close()
        if self._reaped:
            return
        self._reaped = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        task: asyncio.Task[object] = asyncio.create_task(asyncio.to_thread(os.waitpid, self.pid, 0))
        _reaping.add(task)
        task.add_done_callback(_reaping.discard)


async def stream_aside(work: Callable[[BinaryIO], None]) -> AsideStream:
    """`work(out)` in a forked child, at a lower priority; its writes to `out` stream back."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: work, write, leave without running any clean-up
        code = 1
        try:
            os.close(read_end)
            signal.set_wakeup_fd(-1)
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_DFL)
            gc.disable()
            os.nice(10)  # the writer's requests come first
            with os.fdopen(write_end, "wb", buffering=CHUNK) as out:
                work(out)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=4 * CHUNK)
    pipe = os.fdopen(read_end, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return AsideStream(pid, reader, transport)
