"""Past award counts: how many past awards each filter of `GET /v1/awards` matches, per
span of dealt time, kept by triggers with the rows (app/store/past_award_counts.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUNTIME = "jackpot_runtime"  # 0007
# Spans of 2**scale milliseconds (about 4.7 hours, 3.1 days, 50 days, 2.2 and 35 years),
# each nested in the next: app/store/past_award_counts.py `SCALES`.
SCALES = "ARRAY[24, 28, 32, 36, 40]::smallint[]"
KEY = "scale, bucket, kind, link, meter, table_id, state"


def _add(source: str, sign: str) -> str:
    """Add (or take away) the rows of `source` to the counts, grouped by key."""
    return f"""
        INSERT INTO past_award_counts AS c ({KEY}, n)
        SELECT s.scale, r.dealt_at >> s.scale, r.kind, r.link, r.meter, r.table_id, r.state,
               {sign}count(*)
        FROM {source} r CROSS JOIN unnest({SCALES}) AS s(scale)
        GROUP BY 1, 2, 3, 4, 5, 6, 7
        ORDER BY 1, 2, 3, 4, 5, 6, 7
        ON CONFLICT ({KEY}) DO UPDATE SET n = c.n + excluded.n;
    """


def upgrade() -> None:
    # One row per filter key (kind, link, meter, table, state) and span of dealt time
    # (bucket = dealt_at >> scale, epoch milliseconds): how many past awards it holds. A
    # page's total is summed from the whole spans its time range covers and counted in
    # `past_awards` only at its edges, so it stays exact and costs about the same however
    # many awards the table holds (docs/design.md, "Past awards").
    op.execute(
        """
        CREATE TABLE past_award_counts (
            scale SMALLINT NOT NULL,
            bucket BIGINT NOT NULL,
            kind TEXT NOT NULL,
            link TEXT,
            meter TEXT,
            table_id TEXT NOT NULL,
            state TEXT NOT NULL,
            n BIGINT NOT NULL
        )
        """
    )
    op.execute(
        f"CREATE UNIQUE INDEX past_award_counts_key ON past_award_counts ({KEY}) NULLS NOT DISTINCT"
    )
    # Kept by the table's own triggers, whoever writes it (the writer's append, recovery's
    # write back, the owner by hand): in the same transaction, as the owner (SECURITY
    # DEFINER), so the runtime role needs no right on the counts but to read them.
    op.execute(
        f"""
        CREATE FUNCTION past_award_counts_add() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                {_add("gone", "-")}
                DELETE FROM past_award_counts WHERE n = 0;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                {_add("added", "")}
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER past_award_counts_insert AFTER INSERT ON past_awards "
        "REFERENCING NEW TABLE AS added "
        "FOR EACH STATEMENT EXECUTE FUNCTION past_award_counts_add()"
    )
    op.execute(
        "CREATE TRIGGER past_award_counts_update AFTER UPDATE ON past_awards "
        "REFERENCING OLD TABLE AS gone NEW TABLE AS added "
        "FOR EACH STATEMENT EXECUTE FUNCTION past_award_counts_add()"
    )
    op.execute(
        "CREATE TRIGGER past_award_counts_delete AFTER DELETE ON past_awards "
        "REFERENCING OLD TABLE AS gone "
        "FOR EACH STATEMENT EXECUTE FUNCTION past_award_counts_add()"
    )
    # The counts made again from the rows: at this migration, and by recovery when they
    # do not add up to the rows (app/store/past_award_counts.py); also after a TRUNCATE.
    op.execute(
        f"""
        CREATE FUNCTION past_award_counts_rebuild() RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
            LOCK TABLE past_awards IN SHARE MODE;
            DELETE FROM past_award_counts;
            {_add("past_awards", "")}
            RETURN (SELECT count(*) FROM past_awards);
        END
        $$
        """
    )
    op.execute(
        """
        CREATE FUNCTION past_award_counts_truncate() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
        BEGIN
            DELETE FROM past_award_counts;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER past_award_counts_truncate AFTER TRUNCATE ON past_awards "
        "FOR EACH STATEMENT EXECUTE FUNCTION past_award_counts_truncate()"
    )
    op.execute("SELECT past_award_counts_rebuild()")
    # `?meter=` alone had no index of its own: a page of a meter's awards read the table.
    order = (
        'dealt_at DESC, sequence DESC, table_id COLLATE "C" DESC, round COLLATE "C" DESC, '
        'box DESC, kind_rank DESC, id COLLATE "C" DESC'
    )
    op.execute(
        f"CREATE INDEX past_awards_meter ON past_awards (meter, {order}) WHERE meter IS NOT NULL"
    )
    op.execute("REVOKE ALL ON past_award_counts FROM PUBLIC")
    op.execute("REVOKE ALL ON FUNCTION past_award_counts_add() FROM PUBLIC")
    op.execute("REVOKE ALL ON FUNCTION past_award_counts_truncate() FROM PUBLIC")
    op.execute("REVOKE ALL ON FUNCTION past_award_counts_rebuild() FROM PUBLIC")
    # The runtime role (0007, docs/operations.md "Roles and privileges") reads the counts
    # and may have them made again from the rows; it never writes them itself.
    op.execute(f"GRANT SELECT ON past_award_counts TO {RUNTIME}")
    op.execute(f"GRANT EXECUTE ON FUNCTION past_award_counts_rebuild() TO {RUNTIME}")


def downgrade() -> None:
    op.execute("DROP INDEX past_awards_meter")
    for trigger in ("insert", "update", "delete", "truncate"):
        op.execute(f"DROP TRIGGER past_award_counts_{trigger} ON past_awards")
    op.execute("DROP FUNCTION past_award_counts_add()")
    op.execute("DROP FUNCTION past_award_counts_truncate()")
    op.execute("DROP FUNCTION past_award_counts_rebuild()")
    op.execute("DROP TABLE past_award_counts")
