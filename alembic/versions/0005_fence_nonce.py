"""The fence carries a random nonce beside the epoch: a rollback cannot repeat it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A database rolled back (an asynchronous replica promoted without the last commits)
    # hands an epoch out again; the nonce each takeover draws (app/store/lease.py) does
    # not repeat, so the writer that held the lost takeover neither renews nor appends.
    # NULL until a writer first takes the lease.
    op.execute("ALTER TABLE writer_lease ADD COLUMN nonce TEXT")
    # As 0004's, and the session's `jackpot.nonce` must be the lease's too. The search
    # path is the migration's: pg_restore runs with an empty one.
    op.execute(
        """
        CREATE OR REPLACE FUNCTION jackpot_fence_append() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
        DECLARE
            mine TEXT := current_setting('jackpot.epoch', true);
            mine_nonce TEXT := current_setting('jackpot.nonce', true);
            held BIGINT;
            held_nonce TEXT;
        BEGIN
            SELECT epoch, nonce INTO held, held_nonce FROM writer_lease WHERE id = 1
                FOR KEY SHARE;
            IF mine IS NULL OR mine = '' THEN
                IF held = 0 THEN
                    RETURN NULL;
                END IF;
                RAISE EXCEPTION 'an append without a writer epoch, the lease''s is %', held
                    USING ERRCODE = 'JP002';
            END IF;
            IF mine::BIGINT IS DISTINCT FROM held THEN
                RAISE EXCEPTION 'writer epoch % is not the lease''s epoch %', mine, held
                    USING ERRCODE = 'JP001';
            END IF;
            IF mine_nonce IS DISTINCT FROM held_nonce THEN
                RAISE EXCEPTION 'writer epoch % was handed out again to another writer '
                    '(the lease was rolled back and taken over)', mine
                    USING ERRCODE = 'JP001';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )


def downgrade() -> None:
    op.execute(
        """
        CREATE OR REPLACE FUNCTION jackpot_fence_append() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            mine TEXT := current_setting('jackpot.epoch', true);
            held BIGINT;
        BEGIN
            SELECT epoch INTO held FROM writer_lease WHERE id = 1 FOR KEY SHARE;
            IF mine IS NULL OR mine = '' THEN
                IF held = 0 THEN
                    RETURN NULL;
                END IF;
                RAISE EXCEPTION 'an append without a writer epoch, the lease''s is %', held
                    USING ERRCODE = 'JP002';
            END IF;
            IF mine::BIGINT IS DISTINCT FROM held THEN
                RAISE EXCEPTION 'writer epoch % is not the lease''s epoch %', mine, held
                    USING ERRCODE = 'JP001';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute("ALTER TABLE writer_lease DROP COLUMN nonce")
