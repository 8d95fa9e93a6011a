"""`jackpot`'s interface as argparse gave it, kept on Typer: the commands, their options,
short forms, environment variables and defaults, and the exit status of bad usage (2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from app.cli.commands import cli, main
from app.config.demo import DEMO_FLOOR

COMMON = {"--url": "JACKPOT_URL", "--token": "JACKPOT_TOKEN", "--json": None}
WINDOW = {"--from": None, "--to": None}
PAGE = {"--limit": None, "--offset": None}
STORE = {"--data-dir": None, "--database-url": None}

# Each command's options as `jackpot X --help` listed them before Typer, with the
# environment variable each one falls back to; then its positional arguments.
INTERFACE: dict[str, tuple[dict[str, str | None], list[str]]] = {
    "serve": ({**dict.fromkeys(["--config", "--host", "--port", "--data-dir", "--log-level",
                                "--role"]), "--changed-by": "JACKPOT_CHANGED_BY"}, []),
    # An inspector's: the software identity (docs/operations.md "Software identity").
    "selfcheck": ({"--expect": None}, []),
    # --dual-control/--no-dual-control: the console's second supervisor.
    "demo": (dict.fromkeys(["--port", "--data-dir", "--boost", "--rate", "--dual-control",
                            "--no-dual-control", "--silent-table"]), []),
    "simulate": (dict.fromkeys(["--url", "--config", "--tables", "--rate", "--seed", "--boost",
                                "--duration", "--tokens", "--silent-table"]), []),
    # --expect-head, --signed-heads, --public-key; keygen; migrate: heads kept outside the
    # database and the owner's migrations (issue 27).
    "verify": ({**STORE, "--config": None, "--progress": None, "--no-progress": None,
                "--jobs": None, "--file": None, "--since": None, "--expect-head": None,
                "--signed-heads": None, "--public-key": None}, []),
    "keygen": (dict.fromkeys(["--private-key", "--public-key"]), []),
    "migrate": ({"--database-url": "JACKPOT_OWNER_DATABASE_URL"}, []),
    "export": ({**STORE, **WINDOW, "--output": None, "-o": None}, []),
    "meters": ({**COMMON, "--config": None}, ["link"]),
    "set-seed": ({**COMMON, "--reason": None}, ["link", "meter", "amount"]),
    "reset": ({**COMMON, "--reason": None, "--reason-code": None}, ["link", "meter"]),
    "correct": ({**COMMON, "--amount": None, "--table": None, "--round": None,
                 "--no-reset": None, "--reason": None, "--reason-code": None},
                ["link", "meter", "kind"]),
    "approve": (COMMON, ["change"]),
    "reject": ({**COMMON, "--reason": None}, ["change"]),
    "changes": (COMMON, []),
    "audit": ({**COMMON, **WINDOW, **PAGE}, []),
    "awards": ({**COMMON, "--link": None, "--meter": None, "--table": None, "--kind": None,
                **WINDOW, **PAGE}, []),
    "report": ({**COMMON, **WINDOW, "--csv": None}, []),
    "check-commitment": ({"--from": None, "--by": None}, ["commitment", "trigger", "nonce"]),
}  # fmt: skip


def commands() -> dict[str, typer.core.TyperCommand]:
    group = typer.main.get_command(cli)
    assert isinstance(group, typer.core.TyperGroup)
    found = {}
    for name, command in group.commands.items():
        if name == "operators":  # the accounts' group (tests/unit/app/cli/test_accounts_cli.py)
            continue
        assert isinstance(command, typer.core.TyperCommand)
        found[name] = command
    return found


def test_the_same_commands() -> None:
    assert sorted(commands()) == sorted(INTERFACE)


@pytest.mark.parametrize("name", sorted(INTERFACE))
def test_the_same_options_and_environment_variables(name: str) -> None:
    options, arguments = INTERFACE[name]
    params = commands()[name].params
    found = {
        opt: param.envvar
        for param in params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
    }
    assert found == options
    assert [p.name for p in params if p.param_type_name == "argument"] == arguments


def test_the_same_defaults() -> None:
    def defaults(name: str) -> dict[str | None, object]:
        return {p.name: p.default for p in commands()[name].params}

    assert defaults("demo") == {"port": 8000, "data_dir": Path(".jackpot"), "boost": 2000,
                                "rate": 0.5, "dual_control": True,
                                "silent_table": None}  # fmt: skip
    simulate = defaults("simulate")
    assert (simulate["url"], simulate["config"]) == ("http://127.0.0.1:8000", DEMO_FLOOR)
    assert (simulate["rate"], simulate["boost"], simulate["duration"]) == (1.0, 1.0, None)
    assert defaults("serve")["role"] == "writer"
    assert (defaults("verify")["jobs"], defaults("verify")["progress"]) == (1, None)
    required = {p.name for c in ("set-seed", "reset", "reject") for p in commands()[c].params
                if p.required}  # fmt: skip
    assert required == {"link", "meter", "amount", "reason", "reason_code", "change"}


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["nosuch"],
        ["meters", "--bogus"],
        ["set-seed", "stud", "major"],  # no AMOUNT, no --reason
        ["correct", "stud", "major", "wrong", "--reason", "x"],
        ["serve", "--port", "abc"],
        ["serve", "--role", "x"],
        ["verify", "--jobs", "x"],
        ["export", "-o"],
    ],
)
def test_bad_usage_is_exit_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Error" in err


@pytest.mark.parametrize("help", ["-h", "--help"])
@pytest.mark.parametrize("name", ["", *sorted(INTERFACE)])
def test_help_short_and_long_is_exit_status_0(
    name: str, help: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([name, help] if name else [help]) == 0
    assert f"Usage: jackpot {name}".rstrip() in capsys.readouterr().out
