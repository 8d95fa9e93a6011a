"""Snapshots stored zlib-compressed, in a column PostgreSQL does not compress again.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A snapshot's JSON reached tens of megabytes under bench_http's load: as TEXT,
    # PostgreSQL compressed it with pglz in the server (84 MB stored as 2.4 MB; the store
    # took 1.4 s) while group commits waited beside it (up to 191 ms). The writer's forked
    # child now packs it with zlib (app/store/journal.py `pack`) into `packed`, stored EXTERNAL:
    # out of line, not compressed a second time. Rows written before keep their `state`
    # text and are read as they are; a row has one or the other.
    op.execute("ALTER TABLE snapshots ALTER COLUMN state DROP NOT NULL")
    op.execute("ALTER TABLE snapshots ADD COLUMN packed BYTEA")
    op.execute("ALTER TABLE snapshots ALTER COLUMN packed SET STORAGE EXTERNAL")
    op.execute(
        "ALTER TABLE snapshots ADD CONSTRAINT snapshots_state_or_packed"
        " CHECK ((state IS NULL) <> (packed IS NULL))"
    )


def downgrade() -> None:
    # SQL cannot unpack a snapshot: packed ones are dropped (snapshots are a cache of the
    # journal; the next start replays more, and an auditor's checkpoint there is gone).
    op.execute("DELETE FROM snapshots WHERE packed IS NOT NULL")
    op.execute("ALTER TABLE snapshots DROP CONSTRAINT snapshots_state_or_packed")
    op.execute("ALTER TABLE snapshots DROP COLUMN packed")
    op.execute("ALTER TABLE snapshots ALTER COLUMN state SET NOT NULL")
