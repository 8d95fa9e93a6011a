"""Display frames built once and written straight to a socket (app/display/frames.py)."""

from __future__ import annotations

from collections.abc import Generator

from hypothesis import given
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from app.cli.serving import uvicorn_config
from app.config.settings import Settings
from app.display.frames import DisplayWebSocketProtocol, text_frame
from app.display.subscription import BACKLOG_BYTES_PER_MESSAGE, Subscription


def parse(data: bytes) -> Frame:
    """The frame as a client reads it (the websockets library's parser)."""
    reader = StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    parser: Generator[None, None, Frame] = Frame.parse(reader.read_exact, mask=False, max_size=None)
    try:
        next(parser)
    except StopIteration as done:
        frame: Frame = done.value
        return frame
    raise AssertionError("the frame is incomplete")


@given(st.text(max_size=70_000) | st.text(min_size=120, max_size=140))
def test_a_text_frame_reads_back_as_the_same_text_whole_and_unmasked(text: str) -> None:
    frame = parse(text_frame(text))
    assert frame.opcode is Opcode.TEXT and frame.fin
    assert bytes(frame.data).decode() == text


def test_a_frame_of_125_126_and_65536_bytes_uses_rfc_6455_length_forms() -> None:
    # RFC 6455 5.2: payload length 0-125 in 7 bits, then 126 + 16 bits, then 127 + 64 bits.
    assert text_frame("x" * 125)[:2] == b"\x81\x7d"
    assert text_frame("x" * 126)[:4] == b"\x81\x7e\x00\x7e"
    assert text_frame("x" * 65536)[:10] == b"\x81\x7f" + b"\x00\x00\x00\x00\x00\x01\x00\x00"


class Sink:
    """A socket's side as the subscription sees it: what was written, what waits unsent."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.unsent = 0
        self.open = True

    def write(self, frame: bytes) -> bool:
        if self.open:
            self.frames.append(frame)
        return self.open

    def backlog(self) -> int:
        return self.unsent


def subscription(size: int = 4) -> tuple[Subscription, list[Subscription], list[str]]:
    closed: list[Subscription] = []
    events: list[str] = []
    sub = Subscription("stud", size, closed.append)
    sub.on_slow(lambda: events.append("slow"))
    return sub, closed, events


def test_attaching_a_sink_writes_what_was_queued_first_then_each_message_at_once() -> None:
    sub, _, _ = subscription()
    sub.push('{"type":"snapshot"}')
    sink = Sink()
    sub.attach(sink)
    assert sub.push('{"type":"meters"}', text_frame('{"type":"meters"}'))
    assert sub.push('{"type":"ping"}')  # no frame given: built here
    assert sink.frames == [
        text_frame('{"type":"snapshot"}'),
        text_frame('{"type":"meters"}'),
        text_frame('{"type":"ping"}'),
    ]
    assert sub.pending() == 0


def test_a_display_whose_socket_holds_too_many_unsent_bytes_is_dropped_as_slow() -> None:
    sub, closed, events = subscription(size=4)
    sink = Sink()
    sub.attach(sink)
    sink.unsent = 4 * BACKLOG_BYTES_PER_MESSAGE
    assert sub.push("a")  # at the bound: still written
    sink.unsent += 1
    assert not sub.push("b")
    assert sub.slow and sub.closed and closed == [sub] and events == ["slow"]
    assert sink.frames == [text_frame("a")]
    assert not sub.push("c")  # closed: nothing more is written
    assert sink.frames == [text_frame("a")]


def test_a_display_whose_connection_is_closing_is_unsubscribed_but_not_counted_slow() -> None:
    sub, closed, events = subscription()
    sink = Sink()
    sub.attach(sink)
    sink.open = False
    assert not sub.push("a")
    assert sub.closed and not sub.slow and closed == [sub] and events == []


def test_jackpot_serve_serves_websockets_with_the_frame_sink_protocol() -> None:
    config = uvicorn_config(object(), Settings())
    assert config.ws is DisplayWebSocketProtocol
