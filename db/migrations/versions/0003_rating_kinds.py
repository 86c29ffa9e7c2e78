"""rating kinds: named, anonymous, aggregate

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24

Annotators were `human` or `aggregate`. A file of single ratings without rater ids is a
third kind of source, `anonymous`, and `human` is renamed `named` (an anonymous rating is
human too; what sets a named rater apart is the identity the rater statistics need).
Existing `human` annotators become `named`, `aggregate` ones stay `aggregate`.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

NEW_KINDS = "kind IN ('named', 'anonymous', 'aggregate')"
OLD_KINDS = "kind IN ('human', 'aggregate')"


def upgrade() -> None:
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.drop_constraint("annotator_kind", type_="check")
    op.execute(sa.text("UPDATE annotator SET kind = 'named' WHERE kind = 'human'"))
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.create_check_constraint("annotator_kind", sa.text(NEW_KINDS))


def downgrade() -> None:
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.drop_constraint("annotator_kind", type_="check")
    # An older program knows no anonymous sources: their ratings read as one aggregate.
    op.execute(sa.text("UPDATE annotator SET kind = 'aggregate' WHERE kind = 'anonymous'"))
    op.execute(sa.text("UPDATE annotator SET kind = 'human' WHERE kind = 'named'"))
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.create_check_constraint("annotator_kind", sa.text(OLD_KINDS))
