"""`jackpot operators add` and `password` on the server's machine: through the server's
local control socket, with no token and no network path (app/api/local_control.py)."""

from __future__ import annotations

import asyncio
import io
import os
import stat
from pathlib import Path

import pytest
from argon2 import PasswordHasher, profiles

from app.api.passwords import Passwords
from app.cli.commands import main
from app.compose import writer_process
from app.config.floor_file import parse_floor
from app.config.settings import Settings
from app.store.journal import MemoryJournal
from tests.integration.app.support import running
from tests.support import DEMO, SUPERVISOR

CHEAP = Passwords(PasswordHasher.from_parameters(profiles.CHEAPEST))
# The demo floor without its [[operators]]: a new floor, nobody to sign in yet.
NO_OPERATORS = DEMO.read_text().split("[[operators]]")[0]


async def jackpot(monkeypatch: pytest.MonkeyPatch, stdin: str, *argv: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return await asyncio.to_thread(main, list(argv))


async def test_the_first_supervisor_is_added_on_the_servers_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = writer_process(
        Settings(data_dir=tmp_path, demo_tokens=True),  # the demo floor's key, on purpose
        parse_floor(NO_OPERATORS),
        journal=MemoryJournal(),
        passwords=CHEAP,
        control_socket=tmp_path / "control.sock",
    )
    async with running(server.app) as client:
        mode = os.stat(tmp_path / "control.sock").st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        code = await jackpot(
            monkeypatch, "a long first password\n",
            "operators", "add", "root", "--data-dir", str(tmp_path), "--password-stdin",
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
        account = server.writer.service.accounts.by_name["root"]
        assert account.role == "supervisor" and account.created_by == "local"
        assert account.password is not None and account.password.startswith("$argon2id$")
        # The same name again: refused, nothing changed.
        code = await jackpot(
            monkeypatch, "a long first password\n",
            "operators", "add", "root", "--data-dir", str(tmp_path), "--password-stdin",
        )  # fmt: skip
        assert code == 1 and "already exists" in capsys.readouterr().err
        code = await jackpot(
            monkeypatch, "short\n",
            "operators", "password", "root", "--data-dir", str(tmp_path), "--password-stdin",
        )  # fmt: skip
        assert code == 1 and "password" in capsys.readouterr().err
        # The floor file's tokens never named an operator here: still nobody by token.
        assert (await client.get("/v1/accounts", headers=SUPERVISOR)).status_code == 401
    assert not (tmp_path / "control.sock").exists()


async def test_without_a_running_server_add_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await jackpot(
        monkeypatch, "a long first password\n",
        "operators", "add", "root", "--data-dir", str(tmp_path), "--password-stdin",
    )  # fmt: skip
    assert code == 2
    assert "control.sock" in capsys.readouterr().err
