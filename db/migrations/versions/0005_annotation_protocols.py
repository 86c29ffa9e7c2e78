"""annotation protocols: error spans, side-by-side order, practice with gold

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25

Error span annotation stores each marked span (character offsets, side, severity) with the
rating it came with; a side-by-side rating records where its output stood on screen; and a
study may hold practice items with gold ranges, whose answers are kept apart from ratings.
The protocol itself is a study setting (JSON), so it needs no column.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A nullable column without a default: SQLite adds it in place, no table copy.
    op.add_column("rating", sa.Column("display", sa.JSON(), nullable=True))
    op.create_table(
        "rating_span",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "rating_id",
            sa.Integer(),
            sa.ForeignKey("rating.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("side", sa.String(10), nullable=False),
        sa.Column("start", sa.Integer(), nullable=False),
        sa.Column("end", sa.Integer(), nullable=False),
        sa.Column("severity", sa.String(10), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.CheckConstraint("side IN ('output', 'source')", name="span_side"),
        sa.CheckConstraint("severity IN ('minor', 'major')", name="span_severity"),
        sa.CheckConstraint('start >= 0 AND "end" > start', name="span_offsets"),
    )
    op.create_index("ix_span_rating", "rating_span", ["rating_id"])
    op.create_table(
        "practice_item",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("low", sa.Float(), nullable=False),
        sa.Column("high", sa.Float(), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
    )
    op.create_table(
        "practice_answer",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "practice_item_id",
            sa.Integer(),
            sa.ForeignKey("practice_item.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "annotator_id",
            sa.Integer(),
            sa.ForeignKey("annotator.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_practice_answer_rater", "practice_answer", ["annotator_id"])


def downgrade() -> None:
    op.drop_index("ix_practice_answer_rater", table_name="practice_answer")
    op.drop_table("practice_answer")
    op.drop_table("practice_item")
    op.drop_index("ix_span_rating", table_name="rating_span")
    op.drop_table("rating_span")
    # SQLite drops a plain column in place (3.35+): no copy of the ratings table.
    op.drop_column("rating", "display")
