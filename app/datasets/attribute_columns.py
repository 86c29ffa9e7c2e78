"""Item attributes as columns of an export: one column per attribute name, after the
item's own columns, so that importing the file keeps them as attributes again."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from meaningbench.datasets.plan import ATTRIBUTE_SUFFIX
from meaningbench.db.frames import attribute_names, item_attributes


class AttributeColumns:
    """The study's attribute names and their export headers; the cells of a batch."""

    def __init__(self, conn: Connection, taken: Sequence[str]) -> None:
        self.conn = conn
        self.names = attribute_names(conn)
        # A name the export already uses for a column of its own gets a suffix that the
        # import takes off again (`meaningbench.datasets.plan.attribute_name`).
        self.headers = [n if n not in taken else f"{n}{ATTRIBUTE_SUFFIX}" for n in self.names]

    def cells(self, ids: Sequence[int]) -> dict[int, list[str | None]]:
        """Per item id of the batch (ids ascending), its value of each attribute."""
        if not self.names or not ids:
            return {}
        found = item_attributes(self.conn, (ids[0], ids[-1]))
        return {iid: [attrs.get(n) for n in self.names] for iid, attrs in found.items()}

    def row(self, cells: dict[int, list[str | None]], item_id: int) -> list[str | None]:
        return cells.get(item_id) or [None] * len(self.names)
