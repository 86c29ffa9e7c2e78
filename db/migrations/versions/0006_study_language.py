"""study language: every study says which language its texts are in

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25

The language is a study setting (`study_setting` key "language", an ISO 639-1 code). A
study made before languages existed was scored as English, so it is recorded as English.
The schema revision goes up with it so that an older MeaningBench, which knows nothing of
languages and would score a German study with English tokenizers and formulas, refuses
to open the study instead.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "INSERT INTO study_setting (key, value) VALUES ('language', '\"en\"') "
        "ON CONFLICT(key) DO NOTHING"
    )


def downgrade() -> None:
    op.execute("DELETE FROM study_setting WHERE key = 'language'")
