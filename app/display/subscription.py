"""One display's subscription: a bounded queue of serialised messages, dropped when slow."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Protocol

from app.display.frames import text_frame

# Written straight to a socket (a FrameSink), a display is slow once this many bytes
# per queued message wait unsent: a queue of `size` messages of up to 4 KiB.
BACKLOG_BYTES_PER_MESSAGE = 4096


class SlowConsumer(Exception):
    """The subscriber fell `queue_size` messages behind and was dropped."""


class Sink(Protocol):
    """Where a display's frames go without a queue (app/display/frames.py FrameSink)."""

    def write(self, frame: bytes) -> bool: ...

    def backlog(self) -> int: ...


class Subscription:
    """One display's bounded queue of serialised messages (an async iterator).

    A deque and one waiter future rather than an asyncio.Queue: the fan-out to
    thousands of displays is the broadcast's hot loop. With a sink attached the queue
    is bypassed: `push` writes the message's frame to the socket at once, and the
    display is slow when its socket's unsent bytes pass the bound instead."""

    __slots__ = (
        "link",
        "slow",
        "closed",
        "_queue",
        "_size",
        "_waiter",
        "_on_close",
        "_on_slow",
        "_sink",
    )

    def __init__(self, link: str, size: int, on_close: Callable[[Subscription], None]) -> None:
        self.link = link
        self.slow = False
        self.closed = False
        self._queue: deque[str] = deque()
        self._size = size
        self._waiter: asyncio.Future[None] | None = None
        self._on_close = on_close
        self._on_slow: Callable[[], object] | None = None
        self._sink: Sink | None = None

    def on_slow(self, callback: Callable[[], object]) -> None:
        """Called once if the subscription is dropped for being slow (e.g. to cancel a
        send stuck on a full socket)."""
        self._on_slow = callback

    def attach(self, sink: Sink) -> None:
        """From now on write every message straight to `sink`, those queued first."""
        self._sink = sink
        while self._queue and not self.closed:
            text = self._queue.popleft()
            self._write(sink, text, text_frame(text))

    def push(self, text: str, frame: bytes | None = None) -> bool:
        """Queue one message (written at once with a sink: `frame` is its text_frame,
        built once for every display); False if the subscription is (now) closed."""
        if self.closed:
            return False
        sink = self._sink
        if sink is not None:
            return self._write(sink, text, frame or text_frame(text))
        if len(self._queue) >= self._size:
            self._drop_slow()
            return False
        self._queue.append(text)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

    def _write(self, sink: Sink, text: str, frame: bytes) -> bool:
        if sink.backlog() > self._size * BACKLOG_BYTES_PER_MESSAGE:
            self._drop_slow()
            return False
        if not sink.write(frame):
            self.close()  # the connection is closing: the route sees it leave
            return False
        return True

    def _drop_slow(self) -> None:
        self.slow = True
        self.close()
        if self._on_slow is not None:
            self._on_slow()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.slow:
            self._queue.clear()  # stale now: the client will reconnect to a snapshot
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        self._on_close(self)

    def pending(self) -> int:
        return len(self._queue)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> str:
        while not self._queue:
            if self.closed:
                if self.slow:
                    raise SlowConsumer(f"more than {self._size} messages behind")
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()
