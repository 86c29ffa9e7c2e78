"""Item attributes during an import: the columns no field reads, kept per item.

An attribute is a category of the item (SimpEval's `sentence_type`, QuestEval's
`simplification_type`): one value per item, stored as `item.meta["attributes"]`
({name: value}; an empty cell stores nothing). Because it belongs to the item, every row
of one item must give the same values, and an item the study already has must not be
given a different one; either is a bad row (the import rolls back).
"""

from __future__ import annotations

import json

from meaningbench.datasets.plan import attribute_name
from meaningbench.datasets.rows import RowProblem, shown_text
from meaningbench.datasets.store import NO_META

# How many distinct values per attribute the import summary counts one by one.
VALUES_COUNTED = 20
# Beyond this many distinct value combinations, rows keep their own tuples: interning
# helps categories, not an id-like column of a million values.
COMBOS_INTERNED = 10_000
_ROW_BITS = 40


def shown_value(value: str) -> str:
    return shown_text(value) if value else "empty"


class AttributeTracker:
    """Checks and records the attributes of the items one file names."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self.names = [attribute_name(c) for c in columns]
        self._combos: list[tuple[str, ...]] = []
        self._combo_index: dict[tuple[str, ...], int] = {}
        # item id -> combo index << _ROW_BITS | the row that first named the item.
        self._seen: dict[int, int] = {}
        self._meta_texts: dict[tuple[str, ...], str] = {}
        # Per attribute: items per value (the first VALUES_COUNTED values), items beyond.
        self.counts: dict[str, dict[str, int]] = {name: {} for name in self.names}
        self.more: dict[str, int] = {name: 0 for name in self.names}
        # Items the study had that got attributes they lacked.
        self.items_given = 0
        # The names some item got a value of (the study's list of names grows by these).
        self.stored_names: set[str] = set()

    def _combo(self, values: tuple[str, ...]) -> int:
        index = self._combo_index.get(values)
        if index is None:
            index = len(self._combos)
            self._combos.append(values)
            if index < COMBOS_INTERNED:
                self._combo_index[values] = index
        return index

    def _count(self, values: tuple[str, ...]) -> None:
        for name, value in zip(self.names, values, strict=True):
            counts = self.counts[name]
            if value in counts:
                counts[value] += 1
            elif len(counts) < VALUES_COUNTED:
                counts[value] = 1
            else:
                self.more[name] += 1

    def as_dict(self, values: tuple[str, ...]) -> dict[str, str]:
        attrs = {n: v for n, v in zip(self.names, values, strict=True) if v}
        self.stored_names.update(attrs)
        return attrs

    def meta_json(self, values: tuple[str, ...]) -> str:
        """The new item's `meta` as JSON text (one encoding per distinct combination)."""
        text = self._meta_texts.get(values)
        if text is None:
            attrs = self.as_dict(values)
            text = json.dumps({"attributes": attrs}, ensure_ascii=False) if attrs else NO_META
            if len(self._meta_texts) < COMBOS_INTERNED:
                self._meta_texts[values] = text
        return text

    def first_row(self, item_id: int, row_no: int, values: tuple[str, ...]) -> None:
        """The first row of this file that names the item."""
        self._seen[item_id] = self._combo(values) << _ROW_BITS | row_no
        self._count(values)

    def same_as_before(self, item_id: int, values: tuple[str, ...]) -> None:
        """A later row of an item: its values must be the first row's. Raises RowProblem."""
        packed = self._seen[item_id]
        before = self._combos[packed >> _ROW_BITS]
        if before is values or before == values:
            return
        first = packed & ((1 << _ROW_BITS) - 1)
        for column, was, now in zip(self.columns, before, values, strict=True):
            if was != now:
                raise RowProblem(
                    f"the item's {column!r} is {shown_value(now)} here but "
                    f"{shown_value(was)} on row {first} (same source, output and system); "
                    "an attribute belongs to the item, so every row of it must give the "
                    "same value (or drop the column with --drop-column)",
                    column,
                )

    def merged_with_stored(
        self, stored: dict[str, str] | None, values: tuple[str, ...]
    ) -> dict[str, str] | None:
        """The attributes an item the study has gets from this file: None when it has them
        all already; raises RowProblem when the file gives one a different value."""
        stored = stored or {}
        merged = dict(stored)
        for column, name, value in zip(self.columns, self.names, values, strict=True):
            if not value:
                continue
            had = stored.get(name)
            if had is None:
                merged[name] = value
            elif had != value:
                raise RowProblem(
                    f"the item's {column!r} is {shown_value(value)} here but the study has "
                    f"{shown_value(had)} for it; an item keeps one value per attribute "
                    "(or drop the column with --drop-column)",
                    column,
                )
        if merged == stored:
            return None
        self.items_given += 1
        self.stored_names.update(merged)
        return merged
