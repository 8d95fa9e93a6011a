"""A display's messages written straight to its socket, each frame built once.

`DisplayWebSocketProtocol` (uvicorn's sans-io websocket protocol, what `ws="auto"` picks)
offers each display connection a `FrameSink` in the scope's extensions; the display route
hands it to the subscription, and the Broadcaster writes one pre-built frame to every
sink, with no task wake-up per display. Handshake, pings and close stay uvicorn's. Why:
docs/performance.md "Displays".
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

SINK = "jackpot.display.frames"  # the scope's extension that holds a FrameSink


def text_frame(text: str) -> bytes:
    """One unmasked, final text frame (RFC 6455 5.2: a server never masks)."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        head = bytes((0x81, size))
    elif size < 1 << 16:
        head = bytes((0x81, 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((0x81, 127)) + size.to_bytes(8, "big")
    return head + payload


class FrameSink:
    """Writes whole frames to one open display connection, never waiting."""

    __slots__ = ("_protocol", "_transport")

    def __init__(self, protocol: WebSocketsSansIOProtocol) -> None:
        self._protocol = protocol
        self._transport = protocol.transport

    def write(self, frame: bytes) -> bool:
        """False once the connection is closing: nothing may follow a close frame."""
        protocol, transport = self._protocol, self._transport
        if protocol.close_sent or protocol.disconnected or transport.is_closing():
            return False
        transport.write(frame)
        return True

    def backlog(self) -> int:
        """Bytes written but not yet taken by the socket (the display's lag)."""
        return self._transport.get_write_buffer_size()


class DisplayWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-io websocket protocol, plus a FrameSink for the application."""

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # unset when the handshake was refused
        if scope is not None:
            scope["extensions"][SINK] = FrameSink(self)
