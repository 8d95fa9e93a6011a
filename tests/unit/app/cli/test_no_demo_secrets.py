"""No demo secrets in production: `jackpot serve` needs a floor file of the casino's own,
never the demo floor's published tokens (outside `jackpot demo`), and bearer tokens are
read with only spaces and tabs stripped."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import app.compose as compose
from app.api.auth import floor_tokens, token_hash
from app.api.problems import AuthError
from app.cli.commands import main
from app.config.demo import DEMO_FLOOR
from app.config.floor_file import FloorError, load_floor


class Started(Exception):
    """`serve` got past its checks: it was about to build the server."""


@pytest.fixture(autouse=True)
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise Started

    monkeypatch.setattr(compose, "writer_process", refuse)
    for name in ("JACKPOT_CONFIG", "JACKPOT_DEMO_TOKENS"):
        monkeypatch.delenv(name, raising=False)


def own_floor(folder: Path) -> Path:
    """The demo floor with tokens of its own."""
    text = DEMO_FLOOR.read_text()
    for n, floor_table in enumerate(load_floor(DEMO_FLOOR).tables):
        text = text.replace(floor_table.token_sha256, token_hash(f"own-table-{n}"))
    for n, operator in enumerate(load_floor(DEMO_FLOOR).operators):
        text = text.replace(operator.token_sha256, token_hash(f"own-operator-{n}"))
    floor = folder / "floor.toml"
    floor.write_text(text)
    return floor


def test_serve_without_a_floor_file_exits_2_saying_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"]) == 2
    assert "--config" in capsys.readouterr().err


def test_serve_refuses_the_demo_floors_tokens(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["serve", "--config", str(DEMO_FLOOR)]) == 2
    err = capsys.readouterr().err
    assert "demo" in err and "T01" in err
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")  # what `jackpot demo` and the tests set
    with pytest.raises(Started):
        main(["serve", "--config", str(DEMO_FLOOR)])


def test_serve_takes_a_floor_with_tokens_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its must-hit-by level needs a mystery key of its own too (docs/operations.md).
    monkeypatch.setenv("JACKPOT_MYSTERY_KEY", "the floor's own mystery key")
    with pytest.raises(Started):
        main(["serve", "--config", str(own_floor(tmp_path))])


def test_the_empty_tokens_hash_is_refused_in_any_floor(tmp_path: Path) -> None:
    empty = hashlib.sha256(b"").hexdigest()
    floor = own_floor(tmp_path)
    first = load_floor(floor).tables[0].token_sha256
    floor.write_text(floor.read_text().replace(first, empty))
    with pytest.raises(FloorError, match="empty"):
        load_floor(floor)


def test_a_bearer_token_is_read_with_only_spaces_and_tabs_stripped(tmp_path: Path) -> None:
    tokens = floor_tokens(load_floor(own_floor(tmp_path)))
    assert tokens.principal("Bearer own-table-0 \t").name == "T01"
    with pytest.raises(AuthError):
        tokens.principal("Bearer own-table-0\u00a0")
    with pytest.raises(AuthError):
        tokens.principal("Bearer \u00a0own-table-0")
