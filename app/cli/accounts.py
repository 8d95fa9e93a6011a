"""`jackpot operators ...`: operator accounts (docs/operations.md "Accounts").

`add` and `password` speak to the server on this machine through its local control socket
(app/api/local_control.py) and need no token: the first supervisor comes from there, and
a floor whose supervisors all forgot their passwords is recovered from there. The others
call the HTTP API (docs/api.md "Accounts") with a supervisor's token, as every operator
command does.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.options import DataDir, Json, Token, Url
from app.cli.printing import out, show_table
from app.cli.program import new_app
from app.cli.server_api import loads, session

accounts = new_app("operator accounts: add on the server's machine, manage over the API")

Name = Annotated[str, typer.Argument(metavar="NAME")]
RoleOption = Annotated[str, typer.Option(help="operator, supervisor or auditor")]
PasswordStdin = Annotated[
    bool, typer.Option("--password-stdin", help="read the password from the first line of stdin")
]
ReasonOption = Annotated[str, typer.Option()]


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        print("the two passwords differ", file=sys.stderr)
        raise typer.Exit(2)
    return first


def _socket(data_dir: Path | None) -> Path:
    from app.config.settings import Settings

    return (data_dir or Settings().data_dir) / "control.sock"


def _local(data_dir: Path | None, request: dict[str, Any]) -> int:
    from app.api.local_control import ask

    path = _socket(data_dir)
    try:
        reply = asyncio.run(ask(path, request))
    except OSError as error:
        print(
            f"cannot reach the server's control socket {path}: {error.strerror or error}\n"
            "  (run this on the server's machine, as its user, with its --data-dir, while "
            "it runs)",
            file=sys.stderr,
        )
        return 2
    if "answer" not in reply:
        lines = [f"refused ({reply.get('status')}): {reply.get('detail')}"]
        lines += [f"  {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in reply.get("errors", [])]
        print("\n".join(lines), file=sys.stderr)
        return 1
    out(json.dumps(reply["answer"], indent=2))
    return 0


@accounts.command("add", help="create an account, on the server's machine (no token needed)")
def add(
    name: Name,
    role: RoleOption = "supervisor",
    display_name: Annotated[str | None, typer.Option(help="default: NAME")] = None,
    data_dir: DataDir = None,
    password_stdin: PasswordStdin = False,
) -> int:
    request = {
        "command": "add",
        "name": name,
        "display_name": display_name or name,
        "role": role,
        "password": _password(password_stdin),
    }
    return _local(data_dir, request)


@accounts.command("password", help="set an account's password, on the server's machine")
def password(name: Name, data_dir: DataDir = None, password_stdin: PasswordStdin = False) -> int:
    request = {"command": "password", "name": name, "password": _password(password_stdin)}
    return _local(data_dir, request)


# -- over the API, with a supervisor's token -------------------------------------------


def _call(
    url: str | None, token: str | None, as_json: bool, method: str, path: str, body: Any = None
) -> int:
    with session(url, token) as api:
        answer = api.call(method, path, body=body)
        if as_json:
            out(answer.text)
            return 0
        data = loads(answer.text)
        rows = data.get("accounts", [data])
        headers = ["NAME", "DISPLAY NAME", "ROLE", "ACTIVE", "PENDING ROLE", "PASSWORD"]
        show_table(
            headers,
            [
                [a["name"], a["display_name"], a["role"], a["active"], a.get("pending_role"),
                 "set" if a["has_password"] else "none"]
                for a in rows
            ],
        )  # fmt: skip
    return 0


@accounts.command("list", help="every account")
def list_(url: Url = None, token: Token = None, as_json: Json = False) -> int:
    return _call(url, token, as_json, "GET", "/v1/accounts")


@accounts.command("create", help="create an account over the API (a supervisor's token)")
def create(
    name: Name,
    role: RoleOption = "operator",
    display_name: Annotated[str | None, typer.Option(help="default: NAME")] = None,
    password_stdin: PasswordStdin = False,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    body = {
        "name": name,
        "display_name": display_name or name,
        "role": role,
        "password": _password(password_stdin),
    }
    return _call(url, token, as_json, "POST", "/v1/accounts", body)


@accounts.command("disable", help="disable an account: its sessions and tokens stop at once")
def disable(
    name: Name, reason: ReasonOption, url: Url = None, token: Token = None, as_json: Json = False
) -> int:
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/disable", {"reason": reason})


@accounts.command("enable", help="re-enable a disabled account")
def enable(
    name: Name, reason: ReasonOption, url: Url = None, token: Token = None, as_json: Json = False
) -> int:
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/enable", {"reason": reason})


@accounts.command("reset-password", help="set an account's password over the API")
def reset_password(
    name: Name,
    password_stdin: PasswordStdin = False,
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    body = {"password": _password(password_stdin)}
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/password", body)


@accounts.command("role", help="change an account's role (dual control: a grant to approve)")
def role(
    name: Name,
    new_role: Annotated[str, typer.Argument(metavar="ROLE")],
    url: Url = None,
    token: Token = None,
    as_json: Json = False,
) -> int:
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/role", {"role": new_role})


@accounts.command("approve", help="approve another supervisor's grant of a role")
def approve(name: Name, url: Url = None, token: Token = None, as_json: Json = False) -> int:
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/role/approve")


@accounts.command("reject", help="reject a pending grant of a role")
def reject(name: Name, url: Url = None, token: Token = None, as_json: Json = False) -> int:
    return _call(url, token, as_json, "POST", f"/v1/accounts/{name}/role/reject")


# -- tokens --------------------------------------------------------------------------


def _made(url: str | None, token: str | None, path: str, body: Any, what: str) -> int:
    """A token made on the server: printed once, to stdout alone, for a script to keep."""
    with session(url, token) as api:
        answer = loads(api.call("POST", path, body=body).text)
    print(f"{what}; it is shown this once:", file=sys.stderr)
    out(answer["token"])
    return 0


@accounts.command("new-token", help="a personal token of your account for scripts")
def new_token(
    name: Annotated[str, typer.Argument(metavar="NAME", help="what it is for")],
    days: Annotated[int, typer.Option(help="how long it works (1-366)")] = 90,
    url: Url = None,
    token: Token = None,
) -> int:
    what = f"token {name!r}, working {days} days with your account's role"
    return _made(url, token, "/v1/tokens", {"name": name, "days": days}, what)


@accounts.command("table-token", help="replace a table's token (the old one: for the grace)")
def table_token(
    table: Annotated[str, typer.Argument(metavar="TABLE")], url: Url = None, token: Token = None
) -> int:
    what = f"table {table}'s new token (the old one works for table_token_grace_ms more)"
    return _made(url, token, f"/v1/tables/{table}/token", None, what)
