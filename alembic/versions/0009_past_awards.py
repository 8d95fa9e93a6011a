"""Past awards: the awards that left the writer's memory (app/state/past_awards.py).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNTIME = "jackpot_runtime"  # 0007


def upgrade() -> None:
    # One row per award, written once (with the journal rows of the entry that made it
    # leave memory) and never changed: `row` is its listing as `GET /v1/awards` shows it
    # (JSON text, its keys in order); the other columns are what the listing filters and
    # orders on. Times are epoch milliseconds, as in the journal.
    op.execute(
        """
        CREATE TABLE past_awards (
            id TEXT PRIMARY KEY,
            link TEXT,
            table_id TEXT NOT NULL,
            round TEXT NOT NULL,
            meter TEXT,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            box INTEGER NOT NULL,
            dealt_at BIGINT NOT NULL,
            sequence BIGINT NOT NULL,
            kind_rank INTEGER NOT NULL,
            seq BIGINT NOT NULL,
            row TEXT NOT NULL
        )
        """
    )
    # The listing's order (newest dealt first), whole and per filter: a page of 25 reads
    # 25 index entries however many awards the table holds.
    order = (
        'dealt_at DESC, sequence DESC, table_id COLLATE "C" DESC, round COLLATE "C" DESC, '
        'box DESC, kind_rank DESC, id COLLATE "C" DESC'
    )
    op.execute(f"CREATE INDEX past_awards_listing ON past_awards ({order})")
    for column in ("table_id", "link", "kind", "state"):
        op.execute(f"CREATE INDEX past_awards_{column} ON past_awards ({column}, {order})")
    op.execute("REVOKE ALL ON past_awards FROM PUBLIC")
    # The runtime role (0007, docs/operations.md "Roles and privileges") appends and reads.
    op.execute(f"GRANT SELECT, INSERT ON past_awards TO {RUNTIME}")


def downgrade() -> None:
    op.execute("DROP TABLE past_awards")
