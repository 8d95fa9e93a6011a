"""Prints the HTTP figures of issue 5 from one run on loopback (needs `wrk`: apt-get install wrk).

    .venv/bin/python bench/bench_http.py [--seconds 15] [--connections 64]

1. the ceiling of the stack: a no-op FastAPI POST endpoint under the same uvicorn
   settings as the server (requests/s);
2. the durable bets endpoint (`jackpot serve` on the demo floor, embedded PostgreSQL,
   group commit): acknowledged requests/s and latency p50 / p99 at 64 connections,
   every request a new round of 7 boxes with a jackpot wager.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

NOOP_APP = textwrap.dedent(
    """
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse
    app = FastAPI()
    @app.post("/noop")
    async def noop(body: dict) -> JSONResponse:
        return JSONResponse({"ok": True})
    """
)

BETS_LUA = textwrap.dedent(
    """
    local counter = 0
    local thread_id = 0
    local tables = {"T01", "T02"}
    setup = function(thread)
      thread_id = thread_id + 1
      thread:set("tid", thread_id)
    end
    request = function()
      counter = counter + 1
      local t = tables[(counter % 2) + 1]
      local boxes = {}
      for b = 1, 7 do
        boxes[b] = string.format('{"box":%d,"ante":"10.00","jackpot":"1.00"}', b)
      end
      local body = string.format('{"closed_at":"%s","boxes":[%s]}',
        os.date("!%Y-%m-%dT%H:%M:%S.000Z"), table.concat(boxes, ","))
      local headers = {["Content-Type"] = "application/json",
                       ["Authorization"] = "Bearer demo-table-" .. t}
      local path = string.format("/v1/tables/%s/rounds/B%s-%d-%d/bets", t, RUN, tid, counter)
      return wrk.format("POST", path, headers, body)
    end
    response = function(status, headers, body)
      if status ~= 200 then
        io.stderr:write("status " .. status .. " " .. body .. "\\n")
      end
    end
    """
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_health(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} did not become healthy")


def wrk(url: str, seconds: int, connections: int, script: Path) -> dict[str, float]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    figures = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    for pct in ("50", "99"):
        m = re.search(rf"\s{pct}%\s+([\d.]+)(us|ms|s)", out)
        if m:
            scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
            figures[f"p{pct}"] = float(m.group(1)) * scale
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    figures["non2xx"] = float(errors.group(1)) if errors else 0.0
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="jackpot-bench-"))
    (work / "noop_app.py").write_text(NOOP_APP)
    noop_lua = work / "noop.lua"
    noop_lua.write_text(
        'wrk.method = "POST"\nwrk.body = \'{"a": 1}\'\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    bets_lua = work / "bets.lua"
    bets_lua.write_text(f'RUN = "{int(time.time())}"\n' + BETS_LUA)

    port = free_port()
    noop = subprocess.Popen(
        [
            PY,
            "-m",
            "uvicorn",
            "noop_app:app",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        cwd=work,
    )
    try:
        wait_for_port(port)
        ceiling = wrk(f"http://127.0.0.1:{port}/noop", args.seconds, args.connections, noop_lua)
    finally:
        noop.terminate()
        noop.wait()

    port = free_port()
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    server = subprocess.Popen(
        [
            str(Path(PY).parent / "jackpot"),
            "serve",
            "--config",
            str(ROOT / "app/demo/floor.toml"),
            "--data-dir",
            str(work / "data"),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        wait_health(f"http://127.0.0.1:{port}/health")
        bets = wrk(f"http://127.0.0.1:{port}", args.seconds, args.connections, bets_lua)
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"no-op FastAPI POST ceiling:   {ceiling['rps']:,.0f} req/s "
        f"({args.connections} connections)"
    )
    print(
        f"durable bets endpoint:        {bets['rps']:,.0f} acknowledged req/s "
        f"({bets['rps'] / ceiling['rps']:.0%} of the ceiling; 7 contributions each)"
    )
    print(
        f"bets latency:                 p50 {bets.get('p50', 0):.1f} ms, "
        f"p99 {bets.get('p99', 0):.1f} ms"
    )
    print(f"bets non-2xx answers:         {bets['non2xx']:.0f}")


def wait_for_port(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"port {port} did not open")


if __name__ == "__main__":
    main()
