"""`jackpot verify`'s bad input: said on stderr, exit status 2, before any journal is read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from app.cli.audit import main_verify
from app.config.demo import DEMO_FLOOR

NOWHERE = "postgresql://nowhere.invalid/x"  # never reached: the input is refused first


@pytest.fixture(autouse=True)
def _demo_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    # The demo floor's must-hit-by level opens with the demo's key, on purpose.
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")


def _args(**extra: Any) -> argparse.Namespace:
    base = {"config": DEMO_FLOOR, "data_dir": None, "database_url": NOWHERE, "progress": False}
    return argparse.Namespace(**{**base, **extra})


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"since": "not-a-checkpoint"}, "--since: "),
        ({"expect_head": ["nonsense"]}, "--expect-head: "),
        ({"signed_heads": "heads"}, "--signed-heads and --public-key go together"),
        (
            {"since": f"3:{'a' * 64}:{'b' * 64}", "file": "absent.jsonl"},
            "--since starts from a stored snapshot: not with --file",
        ),
    ],
)
def test_a_bad_option_exits_2_and_says_which(
    extra: dict[str, Any], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_verify(_args(**extra)) == 2
    assert says in capsys.readouterr().err


def test_a_floor_file_that_cannot_be_used_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text("[[links]]\nid = 7\n")
    assert main_verify(_args(config=floor)) == 2
    assert capsys.readouterr().err.startswith("the floor file is not valid:\n")


def test_a_file_that_cannot_be_read_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_verify(_args(file=tmp_path / "absent.jsonl")) == 2
    assert capsys.readouterr().err.startswith("--file: ")
