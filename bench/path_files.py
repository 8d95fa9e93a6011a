"""Which of our source files (app/, jackpot/, tables/) one bets request's path runs.

    .venv/bin/python bench/path_files.py [--tree DIR ...] [--via asgi|serve] [--requests 5]

In each tree's own interpreter (`DIR/.venv`, from `DIR`, as bench/profile_bets.py runs
other trees), the writer process is built on the demo floor with a memory journal, as
the integration tests build it (tests/integration/app/support.py `build_server`; trees
from before app/compose.py: `create_app` with a `MemoryJournal`), and started. One bets
request (a new round, 7 boxes with a jackpot wager each) warms it up; then each of
`--requests` more runs under `sys.setprofile`, from the moment it enters until its answer
is back, and the distinct files of our packages whose code ran are listed. Start-up,
recovery and the warm-up's lazy imports are outside the window.

`--via asgi` (the default): the request is one ASGI call of the app (what uvicorn calls).
`--via serve`: uvicorn runs in-process with `jackpot serve`'s configuration
(app/cli/serving.py `uvicorn_config`), and the request arrives on a socket: the path as
served, through whatever protocol and lane the tree hands table events to.

Files seen on every measured request are the path; a file seen on some only (the writer's
timer, a probe: background work that happened to run in the window) is listed apart.
`--factory module:function` builds the app instead (a callable taking no argument and
returning the ASGI app with its lifespan).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "jackpot", "tables")
TOKEN = b"Bearer demo-table-T01"


def bets_body() -> bytes:
    closed_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    boxes = [{"box": b, "ante": "10.00", "jackpot": "1.00"} for b in range(1, 8)]
    return json.dumps({"closed_at": closed_at, "boxes": boxes}).encode()


class Files:
    """A profile function: the files of our packages whose functions were entered."""

    def __init__(self, root: Path) -> None:
        self.roots = tuple(f"{root / p}{os.sep}" for p in PACKAGES)
        self.seen: set[str] = set()
        self.functions: dict[str, set[str]] = {}  # per file, the functions entered

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith(self.roots):
                self.seen.add(name)
                self.functions.setdefault(name, set()).add(frame.f_code.co_qualname)


def build_app(factory: str | None) -> Any:
    """The tree's writer process on the demo floor, a memory journal behind it."""
    if factory is not None:
        module, _, name = factory.partition(":")
        built: Callable[[], Any] = getattr(importlib.import_module(module), name)
        return built()
    try:
        from tests.integration.app.support import build_server
    except ImportError:  # a tree from before app/compose.py: its create_app, by name
        from app.config.floor_file import load_floor
        from app.config.settings import Settings
        from app.store.journal import MemoryJournal

        create_app: Any = importlib.import_module("app.api.application").create_app
        return create_app(Settings(), load_floor("app/demo/floor.toml"), journal=MemoryJournal())
    return build_server().app


class Exchange:
    """One request's ASGI messages: its body once, then a disconnect after the answer."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent: list[dict[str, Any]] = []
        self.done = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.sent:  # the answer is out: the client is gone
            await self.done.wait()
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": self.body, "more_body": False}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def status(self) -> int:
        return int(next(m["status"] for m in self.sent if m["type"] == "http.response.start"))


async def via_asgi(app: Any, count: int) -> list[tuple[int, Files]]:
    """Each request as one ASGI call of the app, its lifespan started before."""
    results = []
    async with app.router.lifespan_context(app):
        for i in range(count + 1):
            body = bets_body()
            scope = {
                "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                "method": "POST", "scheme": "http", "root_path": "", "query_string": b"",
                "path": f"/v1/tables/T01/rounds/P{i}/bets",
                "raw_path": f"/v1/tables/T01/rounds/P{i}/bets".encode(),
                "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
                "headers": [
                    (b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                    (b"authorization", TOKEN), (b"content-length", str(len(body)).encode()),
                ],
            }  # fmt: skip
            exchange = Exchange(body)
            files = Files(Path.cwd())
            sys.setprofile(files)
            try:
                await app(scope, exchange.receive, exchange.send)
            finally:
                sys.setprofile(None)
                exchange.done.set()
            status = exchange.status()
            if i:  # the first one warms up
                results.append((status, files))
    return results


async def via_serve(app: Any, count: int) -> list[tuple[int, Files]]:
    """Each request on a socket to uvicorn, in-process, configured as `jackpot serve`."""
    import uvicorn

    from app.cli.serving import uvicorn_config
    from app.config.settings import Settings

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    settings = Settings(host="127.0.0.1", port=port)
    server = uvicorn.Server(uvicorn_config(app, settings, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn's Server has no event for it
        await asyncio.sleep(0.05)
    results = []
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for i in range(count + 1):
            body = bets_body()
            head = (
                f"POST /v1/tables/T01/rounds/P{i}/bets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Content-Type: application/json\r\nAuthorization: {TOKEN.decode()}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            files = Files(Path.cwd())
            sys.setprofile(files)
            try:
                writer.write(head + body)
                status_line = await reader.readline()
                length = 0
                while (line := await reader.readline()) != b"\r\n":
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
            finally:
                sys.setprofile(None)
            if i:
                results.append((int(status_line.split()[1]), files))
    finally:
        writer.close()
        server.should_exit = True
        await serving
    return results


def inside(args: argparse.Namespace) -> None:
    """In the tree's interpreter: one JSON line, the files of each measured request."""
    app = build_app(args.factory)
    run = via_serve if args.via == "serve" else via_asgi
    results = asyncio.run(run(app, args.requests))
    root = str(Path.cwd()) + os.sep
    print(
        json.dumps(
            [
                {
                    "status": status,
                    "files": {f.removeprefix(root): sorted(files.functions[f]) for f in files.seen},
                }
                for status, files in results
            ]
        )
    )


def measure(tree: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    command = [str(tree / ".venv" / "bin" / "python"), str(Path(__file__).resolve()), "--inside"]
    command += ["--via", args.via, "--requests", str(args.requests)]
    if args.factory:
        command += ["--factory", args.factory]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"PYTHONPATH": str(tree), "JACKPOT_DEMO_TOKENS": "1"}
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: exit status {out.returncode}\n{out.stderr[-3000:]}")
    runs: list[dict[str, Any]] = json.loads(out.stdout.strip().splitlines()[-1])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="default: this tree")
    parser.add_argument("--via", choices=("asgi", "serve"), default="asgi")
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--factory", help="module:function returning the app")
    parser.add_argument("--functions", action="store_true", help="and the functions run")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        inside(args)
        return
    started = time.monotonic()
    paths: dict[Path, set[str]] = {}
    for tree in args.tree or [HERE]:
        runs = measure(tree.resolve(), args)
        statuses = sorted({r["status"] for r in runs})
        every = set.intersection(*(set(r["files"]) for r in runs))
        some = set.union(*(set(r["files"]) for r in runs)) - every
        paths[tree] = every
        print(f"{tree} (via {args.via}, {len(runs)} requests, status {statuses}):")
        print(f"  {len(every)} files on every request's path")
        for name in sorted(every):
            print(f"    {name}")
            if args.functions:
                print(f"      {', '.join(runs[-1]['files'][name])}")
        if some:
            print(f"  on some requests only (background work in the window): {len(some)}")
            for name in sorted(some):
                print(f"    {name}")
    if len(paths) == 2:
        (a, first), (b, second) = paths.items()
        print(f"only in {a}: {len(first - second)}; only in {b}: {len(second - first)}")
    print(f"({time.monotonic() - started:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
