"""The software's identity and its self-authentication at every start (docs/operations.md
"Software identity"): every file the installed distribution recorded (its wheel's RECORD,
a sha256 each) is read back and compared, and the lock file it was installed from is
compared with the distributions installed. A program that differs is not the one
approved: the start is refused, naming each file."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata as metadata
import io
import json
import os
import platform
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DISTRIBUTION = "jackpot-server"
PACKAGES = ("app", "jackpot", "tables")
LOCK_NAME = Path("deploy") / "requirements.lock"
_LOCKED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


@dataclass(frozen=True, slots=True)
class Identity:
    """What runs: `install` is `wheel` (checked file by file), `editable` or `source`
    (a checkout: not checked, and it says so); `problems` each name a file that differs."""

    version: str
    install: str
    software_sha256: str
    files: int
    lock: str | None
    lock_sha256: str | None
    python: str
    host: str
    problems: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """As the `start` entry and `GET /v1/about` give it (the problems aside)."""
        return {
            "name": DISTRIBUTION, "version": self.version, "install": self.install,
            "software_sha256": self.software_sha256, "files": self.files,
            "lock": self.lock, "lock_sha256": self.lock_sha256, "python": self.python,
            "host": self.host,
        }  # fmt: skip


def file_hash(path: Path) -> str:
    """As a wheel's RECORD writes it: `sha256=` and the urlsafe base64 digest, unpadded."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _summary(hashes: list[tuple[str, str]]) -> str:
    """One sha256 over the recorded hashes: `path,hash` lines, sorted."""
    lines = "".join(f"{path},{digest}\n" for path, digest in sorted(hashes))
    return hashlib.sha256(lines.encode()).hexdigest()


def _identifying(path: str) -> bool:
    """The wheel's own files: not its console scripts (their first line names the venv's
    Python), its install metadata (where it was installed from) or the bytecode pip
    compiles at install; these are still checked, only not part of the identity."""
    return not (path.startswith("../") or ".dist-info/" in path or "__pycache__" in path)


def _install(dist: metadata.Distribution | None) -> str:
    if dist is None or dist.read_text("RECORD") is None:
        return "source"
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    if direct.get("dir_info", {}).get("editable"):
        return "editable"
    import app

    site = Path(str(dist.locate_file(""))).resolve()
    return "wheel" if Path(app.__file__).resolve().is_relative_to(site) else "source"


def _wheel(dist: metadata.Distribution) -> tuple[list[tuple[str, str]], list[str]]:
    """The recorded hashes that identify the software, and every file that differs."""
    site = Path(str(dist.locate_file("")))
    hashes: list[tuple[str, str]] = []
    problems: list[str] = []
    for row in csv.reader(io.StringIO(dist.read_text("RECORD") or "")):
        if len(row) < 2 or not row[1]:
            continue  # RECORD itself, listed without a hash
        path, recorded = row[0], row[1]
        if _identifying(path):
            hashes.append((path, recorded))
        file = site / path
        if not file.is_file():
            problems.append(f"{path}: missing (recorded {recorded})")
        elif file_hash(file) != recorded:
            problems.append(f"{path}: changed (recorded {recorded}, found {file_hash(file)})")
    return hashes, problems


def _source() -> list[tuple[str, str]]:
    """A checkout's modules and data, hashed as a RECORD would list them."""
    import app

    root = Path(app.__file__).resolve().parent.parent
    return [
        (str(path.relative_to(root)), file_hash(path))
        for top in PACKAGES
        for path in sorted((root / top).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]


def find_lock() -> Path | None:
    """JACKPOT_LOCK, else deploy/requirements.lock in the working folder (the image's), else
    in the checkout the code runs from."""
    named = os.environ.get("JACKPOT_LOCK")
    if named:
        return Path(named)
    import app

    for base in (Path.cwd(), Path(app.__file__).resolve().parent.parent):
        if (base / LOCK_NAME).is_file():
            return base / LOCK_NAME
    return None


def lock_problems(text: str) -> list[str]:
    """Each locked distribution not installed at its locked version."""
    problems = []
    for line in text.splitlines():
        locked = _LOCKED.match(line)
        if locked is None:
            continue
        name, version = locked.groups()
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name}: locked {version}, not installed")
            continue
        if installed != version:
            problems.append(f"{name}: locked {version}, installed {installed}")
    return problems


def authenticate() -> Identity:
    """The identity of the software running, its files checked against their record."""
    try:
        dist: metadata.Distribution | None = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    install = _install(dist)
    problems: list[str] = []
    if install == "wheel":
        assert dist is not None
        hashes, problems = _wheel(dist)
    else:
        hashes = _source()
    lock = find_lock()
    lock_sha256 = None
    if lock is not None and lock.is_file():
        text = lock.read_bytes()
        lock_sha256 = hashlib.sha256(text).hexdigest()
        if install == "wheel":  # a checkout's venv need not be the locked one
            problems.extend(f"{lock}: {p}" for p in lock_problems(text.decode()))
    elif lock is not None:
        problems.append(f"{lock}: the lock file named is not there")
    version = dist.version if dist is not None else "unknown"
    return Identity(
        version=version, install=install, software_sha256=_summary(hashes),
        files=len(hashes), lock=None if lock is None else str(lock),
        lock_sha256=lock_sha256, python=platform.python_version(),
        host=socket.gethostname(), problems=problems,
    )  # fmt: skip
