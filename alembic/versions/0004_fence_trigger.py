"""The journal's fence as a statement trigger: an append is one COPY again.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Before every INSERT or COPY into the journal, once per statement: the writer's
    # epoch, a setting of its session (app/store/journal.py sets it once per connection
    # and epoch), must be the lease's. The row lock FOR KEY SHARE is held until the
    # statement's own transaction commits, so a takeover (a key update of `epoch`) waits
    # for an append in flight, and an append after a takeover fails (JP001) with nothing
    # written. A session without an epoch may append only while no writer ever took the
    # lease (epoch 0: tools and tests on a fresh database); otherwise JP002.
    op.execute(
        """
        CREATE FUNCTION jackpot_fence_append() RETURNS trigger LANGUAGE plpgsql AS $$
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
    op.execute(
        "CREATE TRIGGER journal_fence BEFORE INSERT ON journal"
        " FOR EACH STATEMENT EXECUTE FUNCTION jackpot_fence_append()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER journal_fence ON journal")
    op.execute("DROP FUNCTION jackpot_fence_append()")
