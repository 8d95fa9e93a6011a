"""Least privilege: the runtime role reads and appends, the journal refuses to change.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNTIME = "jackpot_runtime"  # docs/operations.md "Roles and privileges"


def upgrade() -> None:
    # Migrations run as the owner of the tables; the servers and the audit tools log in as
    # roles that are members of this group, which gets only what they use. Created here if
    # the runbook's script did not (roles are the cluster's: another database's migration
    # may have made it meanwhile).
    op.execute(
        f"""
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{RUNTIME}') THEN
                CREATE ROLE {RUNTIME} NOLOGIN;
            END IF;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END
        $$
        """
    )
    op.execute("REVOKE ALL ON journal, snapshots, writer_lease, alembic_version FROM PUBLIC")
    op.execute(f"GRANT USAGE ON SCHEMA public TO {RUNTIME}")
    op.execute(f"GRANT SELECT, INSERT ON journal, snapshots TO {RUNTIME}")
    op.execute(f"REVOKE UPDATE, DELETE, TRUNCATE ON journal, snapshots FROM {RUNTIME}")
    op.execute(f"GRANT SELECT, UPDATE ON writer_lease TO {RUNTIME}")
    op.execute(f"GRANT SELECT ON alembic_version TO {RUNTIME}")
    # For the owner's own mistakes (a stray statement in psql): the journal is append-only
    # unless a session sets `jackpot.rewrite_history` to 'on' in the same transaction
    # (SET LOCAL), which tests that simulate a database rolled back do, and nothing else.
    op.execute(
        """
        CREATE FUNCTION jackpot_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF current_setting('jackpot.rewrite_history', true) = 'on' THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION 'the journal is append-only: % refused (docs/operations.md, '
                'Roles and privileges)', TG_OP
                USING ERRCODE = 'JP004';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER journal_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON journal"
        " FOR EACH STATEMENT EXECUTE FUNCTION jackpot_append_only()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER journal_append_only ON journal")
    op.execute("DROP FUNCTION jackpot_append_only()")
    op.execute(f"REVOKE ALL ON journal, snapshots, writer_lease, alembic_version FROM {RUNTIME}")
    op.execute(f"REVOKE USAGE ON SCHEMA public FROM {RUNTIME}")
