"""The writer's lease: which process may append to the journal, and its fencing epoch.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # One row: the leading writer (`holder`), until when it leads by the database's
    # clock (`expires_at`), and the epoch every takeover increments (app/store/lease.py).
    # `epoch` is UNIQUE so that changing it is a *key* update: it takes FOR UPDATE on the
    # row, which conflicts with the FOR KEY SHARE every fenced append holds
    # (`jackpot_fence`), while a renewal (only `expires_at`) is a non-key update that
    # never waits for an append, nor an append for it.
    op.execute(
        """
        CREATE TABLE writer_lease (
            id SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
            epoch BIGINT NOT NULL UNIQUE,
            holder TEXT,
            acquired_at TIMESTAMPTZ,
            expires_at TIMESTAMPTZ NOT NULL
        )
        """
    )
    op.execute("INSERT INTO writer_lease (id, epoch, expires_at) VALUES (1, 0, '-infinity')")
    # Called first in every fenced append's transaction (app/store/journal.py): the row
    # lock is held until that transaction ends, so a takeover (which changes `epoch`)
    # either waits for the append to commit, or commits first and the append, seeing
    # the new epoch (READ COMMITTED re-reads a row a committed update changed), fails
    # with SQLSTATE JP001 and writes nothing.
    op.execute(
        """
        CREATE FUNCTION jackpot_fence(mine BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
        DECLARE
            held BIGINT;
        BEGIN
            SELECT epoch INTO held FROM writer_lease WHERE id = 1 FOR KEY SHARE;
            IF held IS DISTINCT FROM mine THEN
                RAISE EXCEPTION 'writer epoch % is not the lease''s epoch %', mine, held
                    USING ERRCODE = 'JP001';
            END IF;
        END
        $$
        """
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION jackpot_fence(BIGINT)")
    op.execute("DROP TABLE writer_lease")
