"""run owners and interrupted runs

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25

A metric run records the process that claimed it (pid, host, start time), so a second
process scoring the same study neither duplicates it nor waits forever for an owner that
was killed: such a run becomes `interrupted` and is resumed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

NEW_STATUSES = "status IN ('pending', 'running', 'done', 'failed', 'cancelled', 'interrupted')"
OLD_STATUSES = "status IN ('pending', 'running', 'done', 'failed', 'cancelled')"


def upgrade() -> None:
    with op.batch_alter_table("metric_run", recreate="always") as batch_op:
        batch_op.drop_constraint("run_status", type_="check")
        batch_op.add_column(sa.Column("owner_pid", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("owner_host", sa.String(255), nullable=True))
        batch_op.add_column(sa.Column("owner_started", sa.Float(), nullable=True))
    with op.batch_alter_table("metric_run", recreate="always") as batch_op:
        batch_op.create_check_constraint("run_status", sa.text(NEW_STATUSES))


def downgrade() -> None:
    with op.batch_alter_table("metric_run", recreate="always") as batch_op:
        batch_op.drop_constraint("run_status", type_="check")
    # An older program knows no interrupted runs; it resumes cancelled ones the same way.
    op.execute(sa.text("UPDATE metric_run SET status = 'cancelled' WHERE status = 'interrupted'"))
    with op.batch_alter_table("metric_run", recreate="always") as batch_op:
        batch_op.drop_column("owner_started")
        batch_op.drop_column("owner_host")
        batch_op.drop_column("owner_pid")
        batch_op.create_check_constraint("run_status", sa.text(OLD_STATUSES))
