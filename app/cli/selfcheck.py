"""`jackpot selfcheck`: the software identity, for an inspector on the floor (docs/operations.md
"Software identity"): every installed file checked against its recorded sha256."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from app.cli.program import new_app

commands = new_app("the inspector's command")


@commands.command(
    "selfcheck", help="print the software identity; exit 1 if a file changed or it is not --expect"
)
def selfcheck_command(
    expect: Annotated[
        str | None, typer.Option(help="the approved software_sha256: exit 1 when it differs")
    ] = None,
) -> int:
    from app.ops.software import authenticate

    identity = authenticate()
    print(json.dumps(identity.record(), indent=2))
    status = 0
    for problem in identity.problems:
        print(problem, file=sys.stderr)
        status = 1
    if identity.install != "wheel":
        print(
            f"not an installed wheel ({identity.install}): its files are not checked",
            file=sys.stderr,
        )
    if expect is not None and expect.lower() != identity.software_sha256:
        print(
            f"software_sha256 {identity.software_sha256} is not the one expected {expect}",
            file=sys.stderr,
        )
        status = 1
    return status
