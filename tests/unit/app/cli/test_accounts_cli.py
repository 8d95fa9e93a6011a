"""`jackpot operators ...`: the accounts' commands and their options."""

from __future__ import annotations

import typer

from app.cli.commands import cli

LOCAL = ["--data-dir", "--password-stdin"]
API = ["--url", "--token", "--json"]
INTERFACE = {
    "add": ["--role", "--display-name", *LOCAL],
    "password": LOCAL,
    "list": API,
    "create": ["--role", "--display-name", "--password-stdin", *API],
    "disable": ["--reason", *API],
    "enable": ["--reason", *API],
    "reset-password": ["--password-stdin", *API],
    "role": API,
    "approve": API,
    "reject": API,
    "new-token": ["--days", "--url", "--token"],
    "table-token": ["--url", "--token"],
}


def test_operators_is_a_group_of_account_commands() -> None:
    group = typer.main.get_command(cli)
    assert isinstance(group, typer.core.TyperGroup)
    operators = group.commands["operators"]
    assert isinstance(operators, typer.core.TyperGroup)
    assert sorted(operators.commands) == sorted(INTERFACE)
    for name, options in INTERFACE.items():
        found = {o for p in operators.commands[name].params for o in p.opts if o.startswith("-")}
        assert set(options) <= found, name
