"""The port that carries the writer's messages to other processes, and its in-memory adapter."""

from __future__ import annotations

from typing import Literal, Protocol

Role = Literal["writer", "display"]


class Feed(Protocol):
    """What a backend calls on its Broadcaster."""

    def link_ids(self) -> list[str]: ...

    def state_text(self, link: str) -> str | None: ...

    def receive(self, link: str, text: str) -> bool: ...

    def restore(self, link: str, text: str) -> None: ...

    def feed_lost(self, detail: str) -> None: ...

    def originates(self) -> bool:
        """Writer role: False while a standby writer (nothing of it may be stored)."""
        ...

    def term(self) -> int:
        """Writer role: the lease epoch this writer leads under (app/display/leader_term.py)."""
        ...


class Backend(Protocol):
    """Carries the writer's messages to the other processes (if any)."""

    role: Role

    async def start(self, feed: Feed) -> None: ...

    async def stop(self) -> None: ...

    def publish(self, link: str, text: str | None) -> None:
        """Writer role: ship one message (None: only the stored state changed).

        Must never block or raise: failures are counted and dropped."""
        ...

    def request_resync(self, link: str) -> None:
        """Display role: re-read the link's stored state when the feed looks stale."""
        ...


class MemoryBackend:
    """In-process broadcast: the writer's messages only go to this process's displays."""

    role: Role = "writer"

    async def start(self, feed: Feed) -> None:
        return None

    async def stop(self) -> None:
        return None

    def publish(self, link: str, text: str | None) -> None:
        return None

    def request_resync(self, link: str) -> None:
        return None
