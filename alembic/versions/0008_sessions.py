"""The console's sessions and the sign-in log (app/store/sessions.py).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNTIME = "jackpot_runtime"  # 0007


def upgrade() -> None:
    # A session by the sha256 of its id (the cookie's value is never stored); times are
    # epoch milliseconds, as in the journal.
    op.execute(
        """
        CREATE TABLE operator_sessions (
            id_sha256 TEXT PRIMARY KEY,
            account TEXT NOT NULL,
            generation BIGINT NOT NULL,
            csrf TEXT NOT NULL,
            address TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            last_seen_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            ended_at BIGINT,
            end_reason TEXT
        )
        """
    )
    op.execute(
        "CREATE INDEX operator_sessions_live ON operator_sessions (expires_at) "
        "WHERE ended_at IS NULL"
    )
    op.execute(
        """
        CREATE TABLE signins (
            seq BIGSERIAL PRIMARY KEY,
            at BIGINT NOT NULL,
            event TEXT NOT NULL,
            name TEXT NOT NULL,
            address TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            until BIGINT,
            scope TEXT NOT NULL DEFAULT ''
        )
        """
    )
    # The lockouts read a name's or an address's recent events.
    op.execute("CREATE INDEX signins_name ON signins (name, at)")
    op.execute("CREATE INDEX signins_address ON signins (address, at)")
    op.execute("CREATE INDEX signins_at ON signins (at)")
    # The runtime role (0007, docs/operations.md "Roles and privileges"): sessions are
    # opened, touched and ended; the sign-in log is only appended to and read.
    op.execute("REVOKE ALL ON operator_sessions, signins FROM PUBLIC")
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON operator_sessions TO {RUNTIME}")
    op.execute(f"GRANT SELECT, INSERT ON signins TO {RUNTIME}")
    op.execute(f"GRANT USAGE ON SEQUENCE signins_seq_seq TO {RUNTIME}")


def downgrade() -> None:
    op.execute("DROP TABLE signins")
    op.execute("DROP TABLE operator_sessions")
