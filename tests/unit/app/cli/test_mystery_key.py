"""No published key seals a real floor's triggers: a writer whose floor has a must-hit-by
level refuses to start without JACKPOT_MYSTERY_KEY, and the demo's key serves only under
`jackpot demo` (JACKPOT_DEMO_TOKENS=1); `jackpot verify` reads the key the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

import app.compose as compose
from app.api.auth import token_hash
from app.cli.commands import main
from app.config.floor_file import parse_floor
from app.config.mystery_key import MysteryKeyError, mystery_key
from app.config.settings import Settings
from app.state.sealing import DEMO_KEY
from app.store.journal import MemoryJournal

MYSTERY_FLOOR = f"""
currency = "SGD"
[[links]]
id = "tiers"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.20"
  reserve_rate = "0"
  [[links.meters]]
  id = "mystery"
  seed = "50.00"
  rate = "0.05"
  reserve_rate = "0"
  must_hit_by = "500.00"
[[tables]]
id = "T01"
game = "multi_link_casino_stud"
link = "tiers"
boxes = 7
jackpot_wager = "1.00"
token_sha256 = "{token_hash("own-table")}"
"""
PLAIN_FLOOR = MYSTERY_FLOOR.replace(
    """  [[links.meters]]
  id = "mystery"
  seed = "50.00"
  rate = "0.05"
  reserve_rate = "0"
  must_hit_by = "500.00"
""",
    "",
)


class Started(Exception):
    """`serve` got past its checks: it was about to build the server."""


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise Started

    monkeypatch.setattr(compose, "writer_process", refuse)


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JACKPOT_CONFIG", "JACKPOT_DEMO_TOKENS", "JACKPOT_MYSTERY_KEY"):
        monkeypatch.delenv(name, raising=False)


def floor_file(folder: Path, text: str = MYSTERY_FLOOR) -> Path:
    path = folder / "floor.toml"
    path.write_text(text)
    return path


@pytest.mark.usefixtures("no_server")
def test_serve_refuses_a_must_hit_by_level_without_its_own_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--config", str(floor_file(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "JACKPOT_MYSTERY_KEY" in err and "tiers/mystery" in err


@pytest.mark.usefixtures("no_server")
def test_serve_starts_with_its_own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JACKPOT_MYSTERY_KEY", "the casino's own, from its vault")
    with pytest.raises(Started):
        main(["serve", "--config", str(floor_file(tmp_path))])


@pytest.mark.usefixtures("no_server")
def test_serve_refuses_the_demo_key_given_as_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JACKPOT_MYSTERY_KEY", DEMO_KEY)
    assert main(["serve", "--config", str(floor_file(tmp_path))]) == 2
    assert "demo" in capsys.readouterr().err


@pytest.mark.usefixtures("no_server")
def test_serve_needs_no_key_without_a_must_hit_by_level(tmp_path: Path) -> None:
    with pytest.raises(Started):
        main(["serve", "--config", str(floor_file(tmp_path, PLAIN_FLOOR))])


@pytest.mark.usefixtures("no_server")
def test_under_the_demo_switch_serve_starts_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")  # what `jackpot demo` sets
    with pytest.raises(Started):
        main(["serve", "--config", str(floor_file(tmp_path))])


def test_the_demo_key_seals_only_under_the_demo_switch() -> None:
    floor = parse_floor(MYSTERY_FLOOR)
    assert mystery_key(floor, Settings(demo_tokens=True)) == DEMO_KEY
    assert mystery_key(floor, Settings(demo_tokens=True, mystery_key="own")) == "own"
    assert mystery_key(floor, Settings(mystery_key="own")) == "own"
    assert mystery_key(parse_floor(PLAIN_FLOOR), Settings()) is None
    for settings in (Settings(), Settings(mystery_key=""), Settings(mystery_key=DEMO_KEY)):
        with pytest.raises(MysteryKeyError):
            mystery_key(floor, settings)


def test_no_writer_is_built_on_the_demo_key_by_default() -> None:
    with pytest.raises(MysteryKeyError, match="JACKPOT_MYSTERY_KEY"):
        compose.writer_process(Settings(), parse_floor(MYSTERY_FLOOR), journal=MemoryJournal())
    built = compose.writer_process(
        Settings(mystery_key="own"), parse_floor(MYSTERY_FLOOR), journal=MemoryJournal()
    )
    assert built.writer.service.config.mystery_key == "own"


def test_verify_refuses_a_must_hit_by_floor_without_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = tmp_path / "all.jsonl"
    exported.write_text("")
    assert main(["verify", "--config", str(floor_file(tmp_path)), "--file", str(exported)]) == 2
    assert "JACKPOT_MYSTERY_KEY" in capsys.readouterr().err
