"""Past awards keep their payment as the state held it, so that a paid award's payout
slip is printed the same once it left memory (app/api/payment_routes.py `slip`).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # JSON text, null for a void award, and for a row written before this revision (its
    # slip is refused as before: the listing row names the payment, `jackpot verify`
    # finds its entries).
    op.execute("ALTER TABLE past_awards ADD COLUMN payment TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE past_awards DROP COLUMN payment")
