"""span proposals: error spans a model pre-filled on the ESA screen, and their fate

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27

A study may pre-fill the ESA screen with an LLM judge's error spans. Each proposal a rater
saw is kept with the rating: its offsets and severity as proposed, the model, configuration
hash and template that proposed it, and its fate (kept, edited, or deleted), pointing at the
span it became. The schema revision goes up with the new table so that an older
MeaningBench, which would rewrite a revised rating without its proposals, refuses to open
the study instead.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "span_proposal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rating_id", sa.Integer(), nullable=False),
        sa.Column("span_id", sa.Integer(), nullable=True),
        sa.Column("side", sa.String(length=10), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("severity", sa.String(length=10), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column("template", sa.Text(), nullable=False),
        sa.Column("fate", sa.String(length=10), nullable=False),
        sa.CheckConstraint("side IN ('output', 'source')", name="proposal_side"),
        sa.CheckConstraint("severity IN ('minor', 'major')", name="proposal_severity"),
        sa.CheckConstraint('start >= 0 AND "end" > start', name="proposal_offsets"),
        sa.CheckConstraint("fate IN ('kept', 'edited', 'deleted')", name="proposal_fate"),
        sa.CheckConstraint("(fate = 'deleted') = (span_id IS NULL)", name="proposal_span"),
        sa.ForeignKeyConstraint(["rating_id"], ["rating.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["span_id"], ["rating_span.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_proposal_rating", "span_proposal", ["rating_id"])


def downgrade() -> None:
    op.drop_index("ix_proposal_rating", table_name="span_proposal")
    op.drop_table("span_proposal")
