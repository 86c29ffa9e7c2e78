"""What opening a study and browsing it imports, loaded before the study is opened.

Apart from `meaningbench.queries.files`, which the browser's queries import: the files
module naming the browser's would make the two import each other.
"""

from __future__ import annotations


def import_study_modules() -> None:
    """Import what opening a study and browsing it needs, without opening anything (the
    app does it on a side thread while its window paints)."""
    import meaningbench.db.study  # noqa: F401 - SQLAlchemy and Alembic
    import meaningbench.queries.browser  # noqa: F401 - pandas, for the score columns
