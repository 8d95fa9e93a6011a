"""`jackpot migrate`: the schema brought to head, run as the tables' owner (the servers log
in as the runtime role, which may not change the schema: docs/operations.md, "Roles and
privileges")."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from app.cli.program import new_app

commands = new_app("the database's schema")


@commands.command("migrate", help="bring the database's schema to head, as its owner")
def migrate_command(
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="JACKPOT_OWNER_DATABASE_URL",
            help="the owner role's DSN (default: JACKPOT_OWNER_DATABASE_URL)",
        ),
    ] = None,
) -> int:
    """0 once the schema is at head; 2 without a database."""
    from app.store.database import migrate

    if not database_url:
        print("--database-url (or JACKPOT_OWNER_DATABASE_URL): the owner's DSN", file=sys.stderr)
        return 2
    asyncio.run(migrate(database_url))
    print("the schema is at head")
    return 0
