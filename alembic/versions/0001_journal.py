"""The journal (append-only, hash-chained entries) and state snapshots.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # seq is assigned by the single writer (DESIGN.md "One writer"), not by a sequence:
    # a sequence would hand out numbers outside the writer's order and leave gaps on
    # rollback. entry and answer are canonical JSON as TEXT, not JSONB: the hash chain
    # is computed over their exact bytes, which JSONB would reorder and re-space.
    # idem_key is "table|round|kind" for a table's round event and NULL otherwise;
    # UNIQUE makes idempotency hold across restarts and processes (NULLs never clash).
    op.execute(
        """
        CREATE TABLE journal (
            seq            BIGINT PRIMARY KEY,
            recorded_at_ms BIGINT NOT NULL,
            kind           TEXT   NOT NULL,
            idem_key       TEXT   UNIQUE,
            body_sha256    TEXT,
            entry          TEXT   NOT NULL,
            answer         TEXT,
            hash           TEXT   NOT NULL
        )
        """
    )
    # A snapshot is the writer's whole state after entry `seq`; recovery loads the
    # latest and replays the journal after it.
    op.execute(
        """
        CREATE TABLE snapshots (
            seq         BIGINT PRIMARY KEY,
            taken_at_ms BIGINT NOT NULL,
            state       TEXT   NOT NULL
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE snapshots")
    op.execute("DROP TABLE journal")
