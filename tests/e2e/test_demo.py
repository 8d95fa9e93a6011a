"""The README's first command, `bash scripts/serve`, end to end in a clean copy of the project.

The tracked files (what a clone has) are copied to a temporary folder; `scripts/serve`
builds a brand-new ./.venv there, starts the demo floor with its embedded PostgreSQL and
the simulated tables; the display websocket must show the meters climbing within
seconds; SIGINT must stop everything, with exit status 0 and no process left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.conftest import server_folder
from tests.e2e.support import ROOT, free_port, wait_healthy

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STARTUP_S = 300  # pip installing into a new venv, then initdb: about a minute here
CLIMB_S = 30  # the simulated tables post a round every two seconds each
STOP_S = 60  # the simulator finishes its rounds in hand, the server drains


def copy_tracked_files(target: Path) -> None:
    """What a fresh clone has: the tracked files, as they are in the work tree now."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # skip files deleted in the work tree but not yet in git
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def clean_environment(data_dir: Path) -> dict[str, str]:
    """The caller's environment (pip's settings included), minus what would let the demo
    use this checkout or its venv instead of the copy, or another database / floor."""
    ours = str(Path(sys.prefix) / "bin")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("JACKPOT_")
        and k not in ("DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    env["JACKPOT_DATA_DIR"] = str(data_dir)
    return env


def tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(errors="replace").splitlines() if log.exists() else []
    # pip warns about the machine's missing extra index folders: noise here.
    return "\n".join([line for line in text if "is ignored: it is neither" not in line][-lines:])


async def first_climb(port: int) -> tuple[str, Decimal, Decimal, float]:
    """Connect a display to link `stud`; return the first meter value seen to rise, as
    (meter, before, after, seconds after the snapshot). A jackpot won meanwhile resets
    a meter to its seed: compare each value with the one seen just before it."""
    async with connect(f"ws://127.0.0.1:{port}/v1/links/stud/ws") as ws:
        async with asyncio.timeout(10):
            snapshot = json.loads(await ws.recv())
        assert snapshot["type"] == "snapshot", snapshot
        assert snapshot["link"] == "stud"
        seen = {m["meter"]: Decimal(m["value"]) for m in snapshot["meters"] if m["value"]}
        assert "major" in seen, snapshot
        start = time.monotonic()
        async with asyncio.timeout(CLIMB_S):
            while True:
                message = json.loads(await ws.recv())
                if message["type"] != "meters":
                    continue
                for entry in message["meters"]:
                    if entry["value"] is None:
                        continue
                    meter, value = entry["meter"], Decimal(entry["value"])
                    before = seen.get(meter)
                    if before is not None and value > before:
                        return meter, before, value, time.monotonic() - start
                    seen[meter] = value


def pids_alive() -> Iterator[int]:
    """Every process that is not a zombie (a zombie has finished; its parent reaps it)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[0] != "Z":
                yield int(entry.name)


def leftovers(sessions: set[int], folder: Path) -> dict[int, str]:
    """Processes still running in one of `sessions`, or whose command line names a path in
    `folder` (the copy's venv, PostgreSQL's data directory): pid -> command line."""
    found: dict[int, str] = {}
    for pid in pids_alive():
        try:
            sid = os.getsid(pid)
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, UnicodeDecodeError):
            continue
        if sid in sessions or str(folder) in cmdline:
            found[pid] = cmdline.strip()
    return found


def postgres_session(data: Path) -> set[int]:
    """The embedded PostgreSQL's session: pg_ctl starts the postmaster in one of its own."""
    try:
        return {os.getsid(int((data / "postgres/postmaster.pid").read_text().split()[0]))}
    except (OSError, ValueError, IndexError):
        return set()


def port_closed(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("ctrl_c", [False, True], ids=["sigint-to-demo", "ctrl-c-to-group"])
def test_scripts_serve_from_a_fresh_copy(ctrl_c: bool) -> None:
    """ctrl_c=False: SIGINT to the demo process alone, which must stop its children itself;
    True: SIGINT to the whole process group, as Ctrl-C at a terminal sends it."""
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know the tracked files")
    # server_folder: a /tmp folder PostgreSQL's own user can reach (conftest explains).
    with server_folder() as folder:
        project, data, log = folder / "project", folder / "data", folder / "serve.log"
        copy_tracked_files(project)
        assert not (project / ".venv").exists()
        port = free_port()
        started = time.monotonic()
        with log.open("wb") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                ["bash", "scripts/serve", "--port", str(port)],
                cwd=project,
                env=clean_environment(data),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own session and process group: ours to check
            )
        sessions = {proc.pid}
        try:
            wait_healthy(port, proc, STARTUP_S, why=lambda: tail(log))
            healthy_s = time.monotonic() - started
            assert (project / ".venv/bin/jackpot").exists(), "scripts/setup made no venv"
            postgres = postgres_session(data)
            assert postgres, "no PostgreSQL running under the data directory"
            sessions |= postgres

            meter, before, after, climb_s = asyncio.run(first_climb(port))
            assert after > before
            assert climb_s < CLIMB_S
            display = f"http://127.0.0.1:{port}/display/stud"
            assert display in log.read_text(), tail(log)
            assert httpx.get(display, timeout=5).status_code == 200
            # The console's demo: a supervisor's seed change waits for a second one.
            assert f"http://127.0.0.1:{port}/console" in log.read_text(), tail(log)
            change = httpx.put(
                f"http://127.0.0.1:{port}/v1/links/stud/meters/major/seed",
                json={"seed": "12000.00", "reason": "demo: dual control"},
                headers={"Authorization": "Bearer demo-supervisor"},
                timeout=5,
            )
            assert change.status_code == 202, change.text

            stopping = time.monotonic()
            if ctrl_c:
                os.killpg(proc.pid, signal.SIGINT)
            else:
                proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired as error:
                message = f"still running {STOP_S} s after SIGINT:\n{tail(log)}"
                raise AssertionError(message) from error
            stop_s = time.monotonic() - stopping
            assert code == 0, tail(log)
            assert leftovers(sessions, folder) == {}
            assert not (data / "postgres/postmaster.pid").exists(), "PostgreSQL was not stopped"
            assert port_closed(port)
            print(
                f"healthy after {healthy_s:.0f} s; {meter} {before} -> {after} "
                f"{climb_s:.1f} s after the snapshot; stopped in {stop_s:.1f} s"
            )
        finally:
            # Never leak a process, whatever failed above.
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            for pid in leftovers(sessions | postgres_session(data), folder):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
