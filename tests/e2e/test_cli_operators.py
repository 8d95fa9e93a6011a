"""The operator commands end to end: `app.cli.operators` against a real server subprocess.

One server on the demo floor serves the whole module (its embedded PostgreSQL takes a
few seconds to start); a second one, with dual control on, serves the proposal tests.
The tests share the first server's state, so each keeps to what the others leave
alone: resets go to link `tcp`; seeds and the won round to `stud`, the round last.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.cli import operators
from app.state.timefmt import format_time
from tests.e2e.support import JACKPOT, ROOT, free_port, wait_healthy

pytestmark = [pytest.mark.integration]

DEMO = ROOT / "app/demo/floor.toml"
OPERATOR, SAM, SUE = "demo-operator", "demo-supervisor", "demo-supervisor-2"
TOKENS = (OPERATOR, SAM, SUE)


def serve(config: Path) -> Iterator[str]:
    """A `jackpot serve` subprocess on `config`; its URL; SIGTERM at the end: exit 0."""
    # Run as root, pgserver runs PostgreSQL as its own user: the folder must be open to
    # it (pytest's tmp_path is 0700), so a mkdtemp of our own, opened to 0755.
    folder = Path(tempfile.mkdtemp(prefix="jackpot-opcli-"))
    folder.chmod(0o755)
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "JACKPOT_CONFIG")
    }
    argv = [JACKPOT, "serve", "--config", str(config), "--data-dir", str(folder / "data")]
    with (folder / "server.log").open("ab") as log:
        proc = subprocess.Popen(
            [*argv, "--port", str(port), "--log-level", "warning"], stdout=log, stderr=log, env=env
        )
    try:
        wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}"
        proc.terminate()
        assert proc.wait(timeout=60) == 0, (folder / "server.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    yield from serve(DEMO)


@pytest.fixture(scope="module")
def dual_url() -> Iterator[str]:
    folder = Path(tempfile.mkdtemp(prefix="jackpot-opcli-floor-"))
    config = folder / "floor.toml"
    text = DEMO.read_text()
    assert "dual_control = false" in text
    config.write_text(text.replace("dual_control = false", "dual_control = true"))
    try:
        yield from serve(config)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JACKPOT_URL", "JACKPOT_TOKEN", "JACKPOT_CONFIG"):
        monkeypatch.delenv(name, raising=False)


class Jackpot:
    """`jackpot ...` in-process through `operators.main`: exit status, stdout, stderr."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, url: str, token: str | None, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        auth = ["--token", token] if token else []
        code = operators.main([argv[0], "--url", url, *auth, *argv[1:]])
        out, err = self.capsys.readouterr()
        for secret in TOKENS:  # the token is never printed
            assert secret not in out and secret not in err
        return code, out, err


@pytest.fixture
def jackpot(capsys: pytest.CaptureFixture[str]) -> Jackpot:
    return Jackpot(capsys)


def row(out: str, *first: str) -> list[str]:
    """The line of a table whose first cells are `first`, split on runs of spaces."""
    for line in out.splitlines():
        cells = line.split()
        if cells[: len(first)] == list(first):
            return cells
    raise AssertionError(f"no row {first} in:\n{out}")


def column(out: str, header: str, cells: list[str]) -> str:
    """The cell under `header` (two-word headers are one cell) of a table row."""
    heads = out.splitlines()[0].replace("NEXT SEED", "NEXT_SEED").replace("RESERVE RATE", "RR")
    return cells[heads.split().index(header)]


# -- reading -----------------------------------------------------------------------------


def test_meters_of_every_link_of_the_floor_file(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, OPERATOR, "meters", "--config", str(DEMO))
    assert (code, err) == (0, "")
    stud = row(out, "stud", "major")
    assert column(out, "SEED", stud) == "10000.00"
    assert column(out, "CEILING", stud) == "2000000.00"
    assert column(out, "RATE", stud) == "0.25"
    assert column(out, "CEILING", row(out, "tcp", "major")) == "-"  # no ceiling


def test_meters_json_is_the_servers_answers(jackpot: Jackpot, url: str) -> None:
    code, out, _ = jackpot(url, OPERATOR, "meters", "stud", "--json")
    assert code == 0
    [meter] = json.loads(out)
    assert (meter["link"], meter["meter"], meter["seed"]) == ("stud", "major", "10000.00")


def test_an_unknown_link_is_the_servers_404(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, OPERATOR, "meters", "nosuch")
    assert (code, out) == (1, "")
    assert err.startswith("HTTP 404")


def test_without_a_token_the_401_says_how_to_give_one(jackpot: Jackpot, url: str) -> None:
    code, _, err = jackpot(url, None, "meters", "stud")
    assert code == 1
    assert "HTTP 401" in err and "JACKPOT_TOKEN" in err


def test_token_and_url_from_the_environment(
    jackpot: Jackpot, url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JACKPOT_URL", url)
    monkeypatch.setenv("JACKPOT_TOKEN", OPERATOR)
    assert operators.main(["meters", "tcp"]) == 0
    assert row(capsys.readouterr().out, "tcp", "major")


def test_no_server_is_one_line_and_exit_2(jackpot: Jackpot) -> None:
    code, out, err = jackpot(f"http://127.0.0.1:{free_port()}", OPERATOR, "meters", "stud")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "cannot reach the jackpot server" in err


# -- changes -----------------------------------------------------------------------------


def test_set_seed_by_a_supervisor_then_meters_shows_the_next_seed(
    jackpot: Jackpot, url: str
) -> None:
    code, out, err = jackpot(url, SAM, "set-seed", "stud", "major", "15000.00", "--reason", "promo")
    assert (code, err) == (0, "")
    assert row(out, "seed_before") == ["seed_before", "10000.00"]
    assert row(out, "seed") == ["seed", "15000.00"]
    code, out, _ = jackpot(url, OPERATOR, "meters", "stud")
    stud = row(out, "stud", "major")
    assert (column(out, "SEED", stud), column(out, "NEXT_SEED", stud)) == ("10000.00", "15000.00")


def test_set_seed_by_an_operator_is_refused(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, OPERATOR, "set-seed", "stud", "major", "1.00", "--reason", "x")
    assert (code, out) == (1, "")
    assert err.startswith("HTTP 403")


def test_an_invalid_amount_names_the_field(jackpot: Jackpot, url: str) -> None:
    code, _, err = jackpot(url, SAM, "set-seed", "stud", "major", "12.345", "--reason", "x")
    assert code == 1
    assert err.startswith("HTTP 422") and "body.seed:" in err


def test_a_refused_correction_says_why_once(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, SAM, "correct", "stud", "major", "void_round", "--reason", "x",
                             "--reason-code", "error_correction")  # fmt: skip
    assert (code, out) == (1, "")
    assert err.splitlines()[0] == "HTTP 422 Invalid request"
    assert err.count("void_round needs the table and the round") == 1 and "body.round:" in err


def test_audit_shows_the_seed_change_with_who_and_why(jackpot: Jackpot, url: str) -> None:
    jackpot(url, SAM, "set-seed", "stud", "major", "16000.00", "--reason", "audit-me")
    code, out, _ = jackpot(url, OPERATOR, "audit")
    assert code == 0
    [line] = [line for line in out.splitlines() if "audit-me" in line]
    assert " sam " in line and " seed " in line and " stud " in line
    assert "seed=16000.00" in line  # after
    code, out, _ = jackpot(url, OPERATOR, "audit", "--json")
    entries = json.loads(out)["audit"]
    [entry] = [e for e in entries if e["reason"] == "audit-me"]
    assert (entry["who"], entry["action"], entry["after"]["seed"]) == ("sam", "seed", "16000.00")


def test_audit_filters_are_passed_on(jackpot: Jackpot, url: str) -> None:
    code, out, _ = jackpot(url, OPERATOR, "audit", "--from", "2999-01-01T00:00:00Z")
    assert code == 0
    assert out.splitlines()[0].split()[:3] == ["ID", "AT", "WHO"]
    assert out.splitlines()[-1] == "(0 of 0 entries)"
    code, _, err = jackpot(url, OPERATOR, "audit", "--to", "yesterday")
    assert code == 1 and "to" in err


def test_reset_returns_the_meter_to_its_seed(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, SAM, "correct", "tcp", "major", "adjust", "--amount", "12.50",
                             "--reason", "count")  # fmt: skip
    assert (code, err) == (0, "")
    assert row(out, "value_after") == ["value_after", "5012.50"]
    code, out, err = jackpot(url, SAM, "reset", "tcp", "major", "--reason", "end of promo",
                             "--reason-code", "closure")  # fmt: skip
    assert (code, err) == (0, "")
    assert row(out, "reason") == ["reason", "end", "of", "promo"]
    code, out, _ = jackpot(url, OPERATOR, "audit", "--json")
    assert json.loads(out)["audit"][-1]["reason_code"] == "closure"
    code, out, _ = jackpot(url, OPERATOR, "meters", "tcp")
    assert column(out, "VALUE", row(out, "tcp", "major")) == "5000.00"


def test_awards_of_a_link_without_any_print_the_header(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, OPERATOR, "awards", "--link", "tcp")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split()[:4] == ["ID", "LINK", "TABLE", "ROUND"]
    assert out.splitlines()[1] == "(0 of 0 awards)"


def test_report_is_a_table_or_says_it_is_not_there_yet(jackpot: Jackpot, url: str) -> None:
    code, out, err = jackpot(url, OPERATOR, "report")
    if code == 1 and "no reconciliation report yet" in err:
        assert out == ""
        return
    assert code == 0, err
    assert out.startswith("reconciliation from")
    assert row(out, "opening_value") and row(out, "closing_value") and row(out, "balanced")
    code, out, _ = jackpot(url, OPERATOR, "report", "--csv")
    assert code == 0 and "," in out.splitlines()[0]


def test_a_won_round_is_in_the_awards(jackpot: Jackpot, url: str) -> None:
    # Last on purpose: the win resets `stud` (to the next seed set above).
    t02 = {"Authorization": "Bearer demo-table-T02"}
    now = time.time_ns() // 1_000_000
    bets = {
        "closed_at": format_time(now),
        "boxes": [{"box": 3, "ante": "10.00", "jackpot": "1.00"}],
    }
    cards = ["AH", "KH", "QH", "JH", "TH"]
    royal = {"boxes": [{"box": 3, "dealt_at": format_time(now + 10), "cards": cards}]}
    with httpx.Client(base_url=url, headers=t02, timeout=30) as client:
        assert client.post("/v1/tables/T02/rounds/CLI1/bets", json=bets).status_code == 200
        assert client.post("/v1/tables/T02/rounds/CLI1/outcome", json=royal).status_code == 200
        client.get("/v1/tables/T02/rounds/CLI1", params={"wait": 10})
    code, out, err = jackpot(url, OPERATOR, "awards", "--link", "stud")
    assert (code, err) == (0, "")
    [award] = [line.split() for line in out.splitlines() if "CLI1" in line]
    assert out.splitlines()[-1] == "(1 of 1 awards)"
    _, later, _ = jackpot(
        url, OPERATOR, "awards", "--link", "stud", "--from", format_time(now + 1000)
    )
    assert later.splitlines()[-1] == "(0 of 0 awards)"  # --from filters on dealt_at
    assert award[1:5] == ["stud", "T02", "CLI1", "3"]
    assert column(out, "STATE", award) == "final"
    assert column(out, "AMOUNT", award) == "10000.25"  # the meter: seed and this round's 0.25
    assert column(out, "KIND", award) == "meter"
    _, fixed, _ = jackpot(url, OPERATOR, "awards", "--link", "stud", "--kind", "fixed")
    assert fixed.splitlines()[-1] == "(0 of 0 awards)"  # --kind filters


# -- dual control ------------------------------------------------------------------------


def test_dual_control_proposal_then_approval_by_another_supervisor(
    jackpot: Jackpot, dual_url: str
) -> None:
    code, out, _ = jackpot(dual_url, SAM, "set-seed", "stud", "major", "20000.00", "--reason", "x")
    assert code == 0
    assert out.startswith("change change-1 awaits approval by a different supervisor")
    code, out, _ = jackpot(dual_url, OPERATOR, "changes")
    assert row(out, "change-1")[:5] == ["change-1", "proposed", "seed", "stud", "major"]
    code, _, err = jackpot(dual_url, SAM, "approve", "change-1")
    assert code == 1 and err.startswith("HTTP 409") and "different supervisor" in err
    code, out, err = jackpot(dual_url, SUE, "approve", "change-1")
    assert (code, err) == (0, "")
    assert row(out, "seed") == ["seed", "20000.00"]
    code, out, _ = jackpot(dual_url, OPERATOR, "changes")
    assert row(out, "change-1")[1] == "approved"


def test_dual_control_rejection(jackpot: Jackpot, dual_url: str) -> None:
    code, out, _ = jackpot(
        dual_url, SAM, "reset", "tcp", "major", "--reason", "y", "--reason-code", "closure"
    )
    change = out.split()[1]
    code, out, err = jackpot(dual_url, SUE, "reject", change, "--reason", "not today")
    assert (code, err) == (0, "")
    assert row(out, "state") == ["state", "rejected"]
