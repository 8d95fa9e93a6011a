"""Every fenced append proves it follows the journal's head, in its own transaction.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # After every INSERT or COPY into the journal by a writer (a session with an epoch:
    # app/store/journal.py), once per statement and inside its transaction: the rows
    # added have no gap, nothing is above them, the first follows the head before them
    # (seq = head + 1) and its hash chains from the head's hash (docs/journal.md). The
    # writer's rows were chained from its own idea of the head: a database rolled back
    # under it (rows lost) or holding another history refuses the append (JP003) and
    # nothing is written. No round trip more: it runs inside the COPY's statement.
    # Sessions without an epoch (tools and tests on a database no writer ever led, see
    # 0004; a restore) are not checked: they seed journals, broken ones included, for the
    # auditor. The search path is the migration's: pg_restore runs with an empty one.
    op.execute(
        """
        CREATE FUNCTION jackpot_append_follows_head() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
        DECLARE
            first_seq BIGINT;
            last_seq BIGINT;
            added_rows BIGINT;
            first_entry TEXT;
            first_hash TEXT;
            head_seq BIGINT;
            head_hash TEXT;
            why TEXT;
        BEGIN
            IF coalesce(current_setting('jackpot.epoch', true), '') = '' THEN
                RETURN NULL;
            END IF;
            SELECT min(seq), max(seq), count(*) INTO first_seq, last_seq, added_rows
              FROM added;
            IF added_rows = 0 THEN
                RETURN NULL;
            END IF;
            SELECT seq, hash INTO head_seq, head_hash FROM journal
             WHERE seq > last_seq ORDER BY seq DESC LIMIT 1;
            IF FOUND THEN
                why := 'the journal holds entries above the append';
            ELSE
                SELECT seq, hash INTO head_seq, head_hash FROM journal
                 WHERE seq < first_seq ORDER BY seq DESC LIMIT 1;
                IF NOT FOUND THEN
                    head_seq := 0;
                    head_hash := repeat('0', 64);
                END IF;
                IF last_seq - first_seq + 1 <> added_rows THEN
                    why := 'the append has a gap';
                ELSIF head_seq <> first_seq - 1 THEN
                    why := 'the append does not start after the head';
                ELSE
                    SELECT entry, hash INTO first_entry, first_hash FROM added
                     WHERE seq = first_seq;
                    IF encode(sha256(convert_to(head_hash || first_entry, 'UTF8')), 'hex')
                       IS DISTINCT FROM first_hash THEN
                        why := 'the append''s first hash does not chain from the head''s';
                    END IF;
                END IF;
            END IF;
            IF why IS NOT NULL THEN
                RAISE EXCEPTION 'journal continuity: % (the append starts at seq %, the '
                    'journal''s head is seq % with hash %)', why, first_seq, head_seq, head_hash
                    USING ERRCODE = 'JP003',
                          DETAIL = json_build_object('found_seq', head_seq,
                                                     'found_hash', head_hash,
                                                     'first_seq', first_seq)::text;
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER journal_follows_head AFTER INSERT ON journal"
        " REFERENCING NEW TABLE AS added"
        " FOR EACH STATEMENT EXECUTE FUNCTION jackpot_append_follows_head()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER journal_follows_head ON journal")
    op.execute("DROP FUNCTION jackpot_append_follows_head()")
