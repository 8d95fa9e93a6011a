"""Helpers of the end-to-end tests: the installed `jackpot` command, a free port, and
waiting for a server process to be healthy."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.support import ROOT

__all__ = ["JACKPOT", "ROOT", "free_port", "wait_healthy"]

JACKPOT = str(Path(sys.executable).parent / "jackpot")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(
    port: int,
    proc: subprocess.Popen[bytes],
    seconds: float = 120,
    why: Callable[[], str] = lambda: "",
) -> None:
    """Until `/health` answers 200; fails at once if the process exits (`why`: what to
    show then, e.g. the end of its log)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited {proc.returncode}:\n{why()}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"no healthy server within {seconds} s:\n{why()}")
