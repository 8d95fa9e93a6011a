"""`jackpot check-commitment`: a player or an inspector checks one must-hit-by award by hand."""

from __future__ import annotations

import hashlib

import pytest

from app.cli.commands import main

NONCE = "00112233445566778899aabbccddeeff"
COMMITMENT = hashlib.sha256(f"473.12|{NONCE}".encode()).hexdigest()


def test_a_sound_reveal_is_ok(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check-commitment", COMMITMENT, "473.12", NONCE, "--from", "400.00", "--by", "500.00"]
    assert main(argv) == 0
    assert capsys.readouterr().out == f"ok: sha256(473.12|{NONCE}) = {COMMITMENT}\n"


def test_an_altered_trigger_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-commitment", COMMITMENT, "473.13", NONCE]) == 1
    assert f"is not the commitment {COMMITMENT}" in capsys.readouterr().out


def test_a_trigger_outside_its_range_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check-commitment", COMMITMENT, "473.12", NONCE, "--from", "400.00", "--by", "450.00"]
    assert main(argv) == 1
    assert "outside [400.00, 450.00)" in capsys.readouterr().out
