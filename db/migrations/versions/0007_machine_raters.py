"""machine raters: an LLM judge's ratings under an annotator of kind `machine`

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27

`meaningbench judge --as-rater` stores a model's ratings beside the humans' so that the rater
statistics can show it, but they never enter an item's human score. The annotator kind check
gains `machine`. The schema revision goes up with it so that an older MeaningBench, which
would count such ratings as a human's, refuses to open the study instead.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

NEW_KINDS = "kind IN ('named', 'anonymous', 'aggregate', 'machine')"
OLD_KINDS = "kind IN ('named', 'anonymous', 'aggregate')"


def _check(kinds: str) -> None:
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.drop_constraint("annotator_kind", type_="check")
    with op.batch_alter_table("annotator", recreate="always") as batch_op:
        batch_op.create_check_constraint("annotator_kind", sa.text(kinds))


def upgrade() -> None:
    _check(NEW_KINDS)


def downgrade() -> None:
    # An older program would count a machine's ratings as a human's: they go.
    op.execute(
        sa.text(
            "DELETE FROM rating WHERE annotator_id IN "
            "(SELECT id FROM annotator WHERE kind = 'machine')"
        )
    )
    op.execute(sa.text("DELETE FROM annotator WHERE kind = 'machine'"))
    _check(OLD_KINDS)
