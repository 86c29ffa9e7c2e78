"""The one rule of which ratings count: a rating row whose state is `current`.

Rating rows are never deleted: an edit supersedes a row (`superseded`), an undo takes it
back (`undone`), and a merge brings another copy's history in beside ours. Every count,
human score, export, queue and screen reads the current rows only; this module writes that
test once for SQL text and once for ORM queries. Every current row is one rating, whatever
its kind (named, anonymous, aggregate).
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import ColumnElement

from meaningbench.db.models import Rating

# The state of a rating row that counts (and of every row a rater writes).
CURRENT: Final = "current"


def current_rating_sql(alias: str = "r") -> str:
    """The test as SQL on the `rating` table known as `alias` in the query (`""`: the bare
    table, for a query on `rating` alone)."""
    column = f"{alias}.state" if alias else "state"
    return f"{column} = '{CURRENT}'"


def is_current() -> ColumnElement[bool]:
    """The test as an ORM condition on `Rating`."""
    return Rating.state == CURRENT


def holds_current(rating: Rating) -> bool:
    """The test on a loaded `Rating` row."""
    return rating.state == CURRENT
