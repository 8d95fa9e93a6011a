"""Work done aside, in a forked child, so that the writer's loop is held up by the fork
alone: the child sees the process's memory as it was at the fork (copy-on-write), whatever
the writer does next, and writes its answer to a pipe.

Two ways back: `run_aside`, the answer's bytes whole (a snapshot, a report); and
`stream_aside`, the bytes streamed while the child goes (an export of any size): the
child blocks while the reader is behind, so neither side holds more than a pipe's and a
chunk's worth. A child that fails, or is killed, ends either with an error, never a
silently short answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
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


def fork_aside(work: Callable[[BinaryIO], object], buffering: int = -1) -> tuple[int, int]:
    """`work(out)` in a forked child at a lower priority, `out` the write end of a pipe: the
    child's pid and the pipe's read end."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns on fork with threads alive (asyncio's executor threads):
        # the child takes no lock another thread could hold: it works, writes, exits.
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: work, write, leave without running any clean-up
        code = 1
        try:
            os.close(read_end)
            # Signals for the server (Ctrl-C, SIGTERM) are not the child's business,
            # nor may they reach the parent's event loop through the inherited wakeup fd.
            signal.set_wakeup_fd(-1)
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_DFL)
            gc.disable()
            # Background work: the writer's requests (and PostgreSQL's commits) come first
            # on a busy machine (docs/performance.md "Snapshots in a forked child").
            os.nice(10)
            with os.fdopen(write_end, "wb", buffering=buffering) as out:
                work(out)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


# -- the answer whole -------------------------------------------------------------------


def run_aside(work: Callable[[], bytes]) -> Awaitable[bytes]:
    """`work()` in a forked child (`fork_aside`); await its bytes (always: it also reaps the
    child). Without fork (not POSIX) it runs in place. An exception in the child is a
    RuntimeError here."""
    if not hasattr(os, "fork"):
        return _ready(work())
    pid, read_end = fork_aside(lambda out: out.write(work()))
    return _collect(pid, read_end)


async def _ready(data: bytes) -> bytes:
    return data


async def _collect(pid: int, read_end: int) -> bytes:
    try:
        data = await asyncio.to_thread(_read_all, read_end)
    finally:
        os.close(read_end)
        _, status = await asyncio.to_thread(os.waitpid, pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the process aside exited with status {status}")
    return data


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


# -- the answer streamed ----------------------------------------------------------------


async def stream_aside(work: Callable[[BinaryIO], None]) -> AsideStream:
    """`work(out)` in a forked child (`fork_aside`); its writes to `out` stream back."""
    pid, read_end = fork_aside(work, buffering=CHUNK)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=4 * CHUNK)
    pipe = os.fdopen(read_end, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return AsideStream(pid, reader, transport)
