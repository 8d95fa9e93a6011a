"""The production path: the product installed as deploy/Dockerfile installs it, then run.

A venv gets deploy/requirements.lock (kept in .venv-prod/, keyed by the lock, pyproject.toml
and the Python version: the same key, the same bytes), then the checkout's folders the
Dockerfile copies, installed afresh each run, not editable, with no index (the lock must
hold every dependency). `jackpot` then runs from that venv, outside the checkout and
without PYTHONPATH: a temporary floor, the embedded PostgreSQL, one bets event
acknowledged, SIGTERM, exit status 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.state.timefmt import format_time
from tests.conftest import server_folder
from tests.e2e.support import ROOT, free_port, wait_healthy

pytestmark = [pytest.mark.production, pytest.mark.integration]

LOCK = ROOT / "deploy" / "requirements.lock"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
CACHE = ROOT / ".venv-prod"
# The two commands of deploy/Dockerfile (test_the_dockerfile_installs_the_same_way).
INSTALL_LOCK = ["pip", "install", "--no-deps", "--require-hashes", "-r", "deploy/requirements.lock"]
INSTALL_SELF = ["pip", "install", "--no-index", "--no-build-isolation", "./src"]


def clean_env() -> dict[str, str]:
    """Nothing of the checkout or of the test session leaks into the installed product."""
    drop = ("PYTHONPATH", "DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("JACKPOT_")}


def run(args: list[str], cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def dockerfile_sources() -> list[str]:
    """What the Dockerfile copies into ./src/ to build the wheel from."""
    sources = []
    for line in DOCKERFILE.read_text().splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "COPY" and words[2].startswith("./src/"):
            sources.append(words[1])
    return sources


def locked_venv() -> Path:
    """A venv holding exactly the locked distributions, built once per key."""
    key = hashlib.sha256(
        LOCK.read_bytes() + (ROOT / "pyproject.toml").read_bytes() + sys.version.encode()
    ).hexdigest()[:16]
    venv = CACHE / key
    if (venv / "locked").is_file():
        return venv
    CACHE.mkdir(exist_ok=True)
    for old in CACHE.iterdir():  # venvs of earlier locks
        shutil.rmtree(old, ignore_errors=True)
    partial = CACHE / f"{key}.partial-{os.getpid()}"
    run([sys.executable, "-m", "venv", str(partial)], cwd=ROOT)
    # `python -m pip`: the venv is renamed below, and pip's own script names its folder.
    run([str(partial / "bin" / "python"), "-m", *INSTALL_LOCK, "--quiet"], cwd=ROOT)
    (partial / "locked").write_text(LOCK.read_text())
    partial.rename(venv)
    return venv


@pytest.fixture(scope="module")
def installed() -> Iterator[Path]:
    """The locked venv with this checkout installed into it (the Dockerfile's steps)."""
    here = (sys.platform, platform.machine(), sys.version_info[:2])
    if here != ("linux", "x86_64", (3, 11)):  # the hashes are of the image's platform's wheels
        pytest.skip(f"deploy/requirements.lock is for CPython 3.11 on linux x86_64, not {here}")
    venv = locked_venv()
    python = str(venv / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="jackpot-prod-src-") as build:
        src = Path(build) / "src"
        src.mkdir()
        for name in dockerfile_sources():
            source = ROOT / name
            if source.is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
                shutil.copytree(source, src / name, ignore=ignore)
            else:
                shutil.copy2(source, src / name)
        run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "jackpot-server"], cwd=ROOT)
        run([python, "-m", *INSTALL_SELF, "--quiet"], cwd=Path(build))
    yield venv


def installed_files(venv: Path) -> tuple[Path, dict[str, object]]:
    """The installed `app` package's folder and jackpot-server's direct_url.json."""
    out = run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import app, importlib.metadata as m, json; print(json.dumps([app.__file__,"
            " json.loads(m.distribution('jackpot-server').read_text('direct_url.json'))]))",
        ],
        cwd=Path(tempfile.gettempdir()),
    )
    app_file, direct_url = json.loads(out)
    return Path(app_file).parent, direct_url


def test_the_dockerfile_installs_the_same_way() -> None:
    text = " ".join(DOCKERFILE.read_text().split())
    assert f"RUN {' '.join(INSTALL_LOCK)}" in text
    assert f"RUN {' '.join(INSTALL_SELF)}" in text
    assert set(dockerfile_sources()) == {"pyproject.toml", "app", "jackpot", "tables", "alembic"}


def test_the_lock_pins_every_distribution_to_one_hash() -> None:
    entries = [line for line in LOCK.read_text().splitlines() if line and line[0].isalpha()]
    names = [line.split("==")[0] for line in entries]
    assert all("==" in line and line.endswith("\\") for line in entries), entries
    assert len(names) == len(set(names))
    # greenlet: SQLAlchemy's asyncio extra, which Alembic over asyncpg needs (2.1 made it
    # optional); setuptools and wheel: the wheel is built with the locked backend.
    assert {"greenlet", "sqlalchemy", "asyncpg", "alembic", "setuptools", "wheel"} <= set(names)
    assert LOCK.read_text().count("--hash=sha256:") == len(entries)


def test_the_checkout_is_installed_whole_and_not_editable(installed: Path) -> None:
    package, direct_url = installed_files(installed)
    assert package.is_relative_to(installed), package  # site-packages, not the checkout
    assert direct_url.get("dir_info", {}) in ({}, {"editable": False}), direct_url
    # Every module and data file of the checkout, the migrations as app/migrations.
    expected = {
        f"{top}/{path.relative_to(ROOT / top)}"
        for top in ("app", "jackpot", "tables")
        for path in (ROOT / top).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    } | {
        f"app/migrations/{path.relative_to(ROOT / 'alembic')}"
        for path in (ROOT / "alembic").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    site = package.parent
    missing = sorted(name for name in expected if not (site / name).is_file())
    assert not missing, missing
    # Every module imports with the production dependencies alone (none of `test`'s).
    modules = [
        name.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        for name in expected
        if name.endswith(".py") and not name.startswith("app/migrations/")
    ]
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"
    run([str(installed / "bin" / "python"), "-c", code, *modules], cwd=Path(tempfile.gettempdir()))


FLOOR = """
currency = "SGD"

[[links]]
id = "main"
  [[links.meters]]
  id = "grand"
  seed = "100.00"
  rate = "0.10"
  reserve_rate = "0.05"

[[tables]]
id = "P1"
game = "casino_stud"
link = "main"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "{token_sha256}"
"""


def test_the_installed_server_starts_acknowledges_and_stops_cleanly(installed: Path) -> None:
    jackpot = str(installed / "bin" / "jackpot")
    assert "serve" in run([jackpot, "--help"], cwd=Path(tempfile.gettempdir()))
    token = secrets.token_urlsafe(16)
    with server_folder() as folder:
        floor = folder / "floor.toml"
        floor.write_text(FLOOR.format(token_sha256=hashlib.sha256(token.encode()).hexdigest()))
        log = folder / "server.log"
        port = free_port()
        with log.open("wb") as out:
            server = subprocess.Popen(
                [jackpot, "serve", "--config", str(floor), "--data-dir", str(folder / "data"),
                 "--port", str(port)],
                cwd=folder, env=clean_env(), stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            wait_healthy(port, server, why=log.read_text)
            answer = httpx.post(
                f"http://127.0.0.1:{port}/v1/tables/P1/rounds/R1/bets",
                json={
                    "closed_at": format_time(time.time_ns() // 1_000_000),
                    "boxes": [{"box": 1, "ante": "10.00", "jackpot": "1.00"}],
                },
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            assert answer.status_code == 200, answer.text
            # 10 % of the 1.00 wager on the 100.00 seed.
            assert answer.json()["meters"] == [
                {"link": "main", "meter": "grand", "value": "100.10"}
            ]
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=60) == 0, log.read_text()
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        # The auditor's command, from the same venv, over what the server journaled.
        verified = run(
            [jackpot, "verify", "--data-dir", str(folder / "data"), "--config", str(floor),
             "--no-progress"],
            cwd=folder,
        )  # fmt: skip
        assert "rounds: 1 (0 void" in verified and "NOT BALANCED" not in verified, verified
        assert "OK: the chain holds" in verified, verified
        # The start recorded by the installed server, with its identity (a wheel).
        assert "start at seq 2 on " in verified and "(wheel) software_sha256" in verified


def test_a_changed_installed_module_refuses_the_start(installed: Path) -> None:
    """Self-authentication: `jackpot selfcheck` gives the identity of the installed wheel;
    one installed module edited, `jackpot serve` refuses to start (status 5) naming it,
    and `selfcheck` exits 1."""
    jackpot = str(installed / "bin" / "jackpot")
    package, _ = installed_files(installed)
    # No bytecode written: the installed files stay as pip recorded them once restored.
    env = {**clean_env(), "JACKPOT_LOCK": str(LOCK), "PYTHONDONTWRITEBYTECODE": "1"}
    cwd = Path(tempfile.gettempdir())

    def jackpot_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [jackpot, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )

    clean = jackpot_run("selfcheck")
    assert clean.returncode == 0, clean.stderr
    identity = json.loads(clean.stdout)
    assert identity["install"] == "wheel" and identity["files"] > 100, identity
    assert identity["lock_sha256"] == hashlib.sha256(LOCK.read_bytes()).hexdigest()
    assert jackpot_run("selfcheck", "--expect", identity["software_sha256"]).returncode == 0
    assert jackpot_run("selfcheck", "--expect", "0" * 64).returncode == 1
    module = package / "state" / "parameters.py"
    original, stat = module.read_bytes(), module.stat()
    try:
        module.write_bytes(original + b"# RATE = 5000\n")
        refused = jackpot_run("serve", "--port", str(free_port()))
        assert refused.returncode == 5, refused.stdout + refused.stderr
        assert "software authentication failed" in refused.stderr
        assert "app/state/parameters.py: changed" in refused.stderr, refused.stderr
        checked = jackpot_run("selfcheck")
        assert checked.returncode == 1 and "app/state/parameters.py: changed" in checked.stderr
    finally:
        module.write_bytes(original)
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert jackpot_run("selfcheck").returncode == 0
