"""Work in a forked child: its answer whole, or streamed back as it is written; a child
that fails ends either with an error, never a short answer that looks whole."""

from __future__ import annotations

import asyncio
import os
import time
from typing import BinaryIO

import pytest

from app.store.aside import AsideFailed, run_aside, stream_aside


async def test_the_first_line_then_every_byte_in_chunks() -> None:
    line = b"x" * 999 + b"\n"

    def work(out: BinaryIO) -> None:
        out.write(b"20000\n")
        for _ in range(20_000):  # 20 MB: far more than a pipe holds
            out.write(line)

    stream = await stream_aside(work)
    assert await stream.readline() == b"20000\n"
    size, chunks = 0, 0
    async for chunk in stream.chunks():
        size += len(chunk)
        chunks += 1
    await stream.close()
    assert size == 20_000 * 1000
    assert chunks > 100  # relayed as it came, not gathered


async def test_a_child_that_fails_midway_is_an_error() -> None:
    def work(out: BinaryIO) -> None:
        out.write(b"3\nrow 1\n")
        out.flush()
        raise ValueError("the state could not be read")

    stream = await stream_aside(work)
    assert await stream.readline() == b"3\n"
    with pytest.raises(AsideFailed):
        async for _ in stream.chunks():
            pass
    await stream.close()


async def test_a_child_that_fails_before_its_first_line_is_an_error() -> None:
    def work(out: BinaryIO) -> None:
        raise ValueError("nothing to say")

    stream = await stream_aside(work)
    with pytest.raises(AsideFailed):
        await stream.readline()
    await stream.close()


async def test_closing_early_ends_the_child() -> None:
    def work(out: BinaryIO) -> None:
        out.write(b"1\n")
        out.flush()
        time.sleep(60)

    stream = await stream_aside(work)
    assert await stream.readline() == b"1\n"
    started = time.monotonic()
    await stream.close()
    for _ in range(100):
        try:
            os.kill(stream.pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the child still runs")
    assert time.monotonic() - started < 5


async def test_the_answer_whole_is_the_childs_view_of_memory_at_the_fork() -> None:
    state = [b"before"]

    def work() -> bytes:
        return b"|".join(state) * 300_000  # 1.8 MB: more than a pipe holds

    answer = run_aside(work)  # forks here, at the call
    state.append(b"after")  # before the child is awaited: a fork made later would see it
    assert await answer == b"before" * 300_000


async def test_a_child_that_raises_is_an_error_for_the_answer_whole() -> None:
    def work() -> bytes:
        raise ValueError("the state could not be read")

    with pytest.raises(RuntimeError, match="exited with status"):
        await run_aside(work)
