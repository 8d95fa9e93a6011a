"""One display's subscription: a bounded queue of serialised messages, dropped when slow."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable


class SlowConsumer(Exception):
    """The subscriber fell `queue_size` messages behind and was dropped."""


class Subscription:
    """One display's bounded queue of serialised messages (an async iterator).

    A deque and one waiter future rather than an asyncio.Queue: the fan-out to
    thousands of displays is the broadcast's hot loop."""

    __slots__ = ("link", "slow", "closed", "_queue", "_size", "_waiter", "_on_close", "_on_slow")

    def __init__(self, link: str, size: int, on_close: Callable[[Subscription], None]) -> None:
        self.link = link
        self.slow = False
        self.closed = False
        self._queue: deque[str] = deque()
        self._size = size
        self._waiter: asyncio.Future[None] | None = None
        self._on_close = on_close
        self._on_slow: Callable[[], object] | None = None

    def on_slow(self, callback: Callable[[], object]) -> None:
        """Called once if the subscription is dropped for being slow (e.g. to cancel a
        send stuck on a full socket)."""
        self._on_slow = callback

    def push(self, text: str) -> bool:
        """Queue one message; False if the subscription is (now) closed."""
        if self.closed:
            return False
        if len(self._queue) >= self._size:
            self.slow = True
            self.close()
            if self._on_slow is not None:
                self._on_slow()
            return False
        self._queue.append(text)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return True

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
