"""Alembic environment: plain SQL migrations run over SQLAlchemy's asyncpg dialect.

There is no alembic.ini: `app.store.database.migrate(dsn)` (what the server and the tests
call) builds the configuration in code and hands over an open connection in
`config.attributes["connection"]`; the migrations run inside its transaction. Without
one (another tool driving Alembic), DATABASE_URL names the database.
"""

from __future__ import annotations

import asyncio
import os

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from alembic import context

config = context.config

# No MetaData: the schema is written as SQL in the versions (no autogenerate).
target_metadata = None


def run_migrations(connection: Connection) -> None:
    # transactional_ddl: PostgreSQL runs DDL in transactions, so a failed migration
    # leaves nothing half-applied.
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


async def run_standalone(url: str) -> None:
    from app.store.database import sqlalchemy_url

    engine = create_async_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported: run them against a database")

shared = config.attributes.get("connection")
if shared is not None:
    run_migrations(shared)
else:
    dsn = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not dsn:
        raise SystemExit("no database: set DATABASE_URL or call app.store.database.migrate(dsn)")
    asyncio.run(run_standalone(dsn))
