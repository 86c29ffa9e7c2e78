"""Bulk writing of an import in one transaction on the study's raw SQLite connection.

Why raw sqlite3 and not the ORM: a million items through ORM objects costs minutes and
gigabytes; `executemany` with tuples costs seconds. Why one transaction: an import is all
or nothing — a bad row anywhere rolls everything back, and the WAL journal guarantees the
main file is untouched until the commit. The connection keeps `synchronous=FULL`: the
commit of a large import costs one or two fsyncs of the journal, not one per row, so
weakening durability would buy almost nothing.

Item ids are assigned here (the write lock is held from BEGIN IMMEDIATE), so ratings can
point at items that are still in the insert buffer.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.datasets.plan import DimInfo

BATCH = 20_000
# Big imports drop the two indexes on random hash keys and build them again before the
# commit: one sort instead of a million random B-tree inserts (about a quarter of the
# insert time). Inside the transaction, so a failed import gets them back by rollback.
DEFERRABLE_INDEXES = ("ix_item_pair_key", "ix_item_source_group")
DEFER_MIN_ROWS = 100_000
# A bigger page cache during the import: index inserts of random hash keys otherwise spill
# pages to the journal over and over. Negative = KiB.
IMPORT_CACHE_KIB = 256 * 1024

# Ratings are looked up by one packed integer key (item, annotator, dimension): a tuple per
# rating would cost three times the memory on a million-rating file.
_ANNOT_SHIFT = 16
_ITEM_SHIFT = 40


def rating_key(item_id: int, annotator_id: int, dimension_id: int) -> int:
    return (item_id << _ITEM_SHIFT) | (annotator_id << _ANNOT_SHIFT) | dimension_id


def sql_now() -> str:
    # The format SQLAlchemy's SQLite DateTime type writes and reads.
    return datetime.now(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


@dataclass
class DatasetState:
    id: int
    name: str
    created: bool
    # (kind, pair_key) -> item id, for every item of the dataset (existing and new).
    items: dict[str, dict[str, int]] = field(default_factory=dict)
    # Current ratings that existed before this import: packed key -> value or values.
    prior: dict[int, Any] = field(default_factory=dict)


@dataclass
class AnnotatorState:
    id: int
    kind: str


class BulkWriter:
    """Looks up and creates datasets, annotators, dimensions, items and ratings in bulk."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.now = sql_now()
        self.items_buf: list[tuple[Any, ...]] = []
        self.ratings_buf: list[tuple[Any, ...]] = []
        self.datasets: dict[str, DatasetState] = {}
        self.annotators: dict[str, AnnotatorState] = {}
        self.dimensions: dict[str, int] = {}
        self.dimension_info: dict[str, DimInfo] = {}
        self.next_item_id = 0
        self.first_new_item_id = 0
        self._old_cache_size: int | None = None
        self._deferred: list[str] = []

    # -- transaction -------------------------------------------------------------------
    def begin(self, *, expected_rows: int = 0) -> None:
        cur = self.conn.cursor()
        self._old_cache_size = cur.execute("PRAGMA cache_size").fetchone()[0]
        cur.execute(f"PRAGMA cache_size=-{IMPORT_CACHE_KIB}")
        # IMMEDIATE: take the write lock now, so the ids assigned below cannot collide with
        # a GUI writing ratings at the same moment (it waits on the busy timeout).
        cur.execute("BEGIN IMMEDIATE")
        self.next_item_id = cur.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM item").fetchone()[0]
        self.first_new_item_id = self.next_item_id
        for aid, name, kind in cur.execute("SELECT id, name, kind FROM annotator"):
            self.annotators[name] = AnnotatorState(aid, kind)
        for did, name in cur.execute("SELECT id, name FROM dimension"):
            self.dimensions[name] = did
        if expected_rows >= DEFER_MIN_ROWS:
            n_items = cur.execute("SELECT COUNT(*) FROM item").fetchone()[0]
            # Rebuilding costs a sort of the whole table: only worth it when the new rows
            # are a good part of it.
            if n_items <= 4 * expected_rows:
                self._drop_deferrable()

    def _drop_deferrable(self) -> None:
        marks = ", ".join("?" for _ in DEFERRABLE_INDEXES)
        rows = self.conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ({marks})",
            DEFERRABLE_INDEXES,
        ).fetchall()
        for name, sql in rows:
            self.conn.execute(f'DROP INDEX "{name}"')
            self._deferred.append(sql)

    def commit(self) -> None:
        self.flush()
        for sql in self._deferred:
            self.conn.execute(sql)
        self._deferred.clear()
        self.conn.execute("COMMIT")
        self._restore()

    def rollback(self) -> None:
        self._deferred.clear()  # the rollback brings the dropped indexes back
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        finally:
            self._restore()

    def _restore(self) -> None:
        if self._old_cache_size is not None:
            self.conn.execute(f"PRAGMA cache_size={int(self._old_cache_size)}")

    # -- reference data ----------------------------------------------------------------
    @staticmethod
    def known_dimensions(conn: sqlite3.Connection) -> dict[str, DimInfo]:
        rows = conn.execute(
            "SELECT name, min_value, max_value, scale FROM dimension ORDER BY position, id"
        )
        return {n: DimInfo(n, float(lo), float(hi), s) for n, lo, hi, s in rows}

    def ensure_dimension(self, info: DimInfo) -> tuple[int, bool]:
        did = self.dimensions.get(info.name)
        if did is not None:
            return did, False
        position = self.conn.execute(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM dimension"
        ).fetchone()[0]
        cur = self.conn.execute(
            "INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high, "
            "question, position, active) VALUES (?, ?, ?, ?, '', '', '', ?, 0)",
            (info.name, info.scale, info.min_value, info.max_value, position),
        )
        did = int(cur.lastrowid or 0)
        self.dimensions[info.name] = did
        return did, True

    def dataset(
        self, name: str, *, source_file: str, fmt: str, meta: dict[str, Any]
    ) -> DatasetState:
        state = self.datasets.get(name)
        if state is not None:
            return state
        row = self.conn.execute("SELECT id FROM dataset WHERE name = ?", (name,)).fetchone()
        if row is None:
            cur = self.conn.execute(
                "INSERT INTO dataset (name, source_file, format, imported_at, meta) "
                "VALUES (?, ?, ?, ?, ?)",
                (name, source_file, fmt, self.now, json.dumps(meta, ensure_ascii=False)),
            )
            state = DatasetState(int(cur.lastrowid or 0), name, created=True)
        else:
            state = DatasetState(int(row[0]), name, created=False)
            self._load_existing(state)
        self.datasets[name] = state
        return state

    def _load_existing(self, state: DatasetState) -> None:
        """What the dataset already holds, so a re-import adds nothing twice."""
        for iid, pkey, kind in self.conn.execute(
            "SELECT id, pair_key, kind FROM item WHERE dataset_id = ?", (state.id,)
        ):
            state.items.setdefault(kind, {})[pkey] = iid
        prior = state.prior
        for iid, aid, did, value in self.conn.execute(
            "SELECT r.item_id, r.annotator_id, r.dimension_id, r.value FROM rating r "
            "JOIN item i ON i.id = r.item_id WHERE i.dataset_id = ? AND r.state = 'current'",
            (state.id,),
        ):
            add_value(prior, rating_key(iid, aid, did), value)

    def annotator(self, name: str, kind: str, meta: dict[str, Any]) -> tuple[AnnotatorState, bool]:
        state = self.annotators.get(name)
        if state is not None:
            return state, False
        cur = self.conn.execute(
            "INSERT INTO annotator (name, kind, created_at, meta) VALUES (?, ?, ?, ?)",
            (name, kind, self.now, json.dumps(meta, ensure_ascii=False)),
        )
        state = AnnotatorState(int(cur.lastrowid or 0), kind)
        self.annotators[name] = state
        return state, True

    # -- rows --------------------------------------------------------------------------
    def add_item(
        self,
        dataset_id: int,
        source: str,
        output: str,
        refs: list[str],
        system: str | None,
        source_group: str,
        pair_key: str,
        kind: str,
        external_id: str | None,
    ) -> int:
        iid = self.next_item_id
        self.next_item_id += 1
        refs_json = json.dumps(refs, ensure_ascii=False) if refs else "[]"
        self.items_buf.append(
            (
                iid,
                dataset_id,
                source,
                output,
                refs_json,
                system,
                source_group,
                pair_key,
                kind,
                external_id,
            )
        )
        if len(self.items_buf) >= BATCH:
            self.flush()
        return iid

    def add_rating(
        self,
        item_id: int,
        annotator_id: int,
        dimension_id: int,
        value: float,
        origin: str,
        n_raters: int | None,
    ) -> None:
        self.ratings_buf.append(
            (item_id, annotator_id, dimension_id, value, self.now, origin, n_raters)
        )
        if len(self.ratings_buf) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.items_buf:
            self.conn.executemany(
                "INSERT INTO item (id, dataset_id, source, output, refs, system, source_group, "
                "pair_key, kind, external_id, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')",
                self.items_buf,
            )
            self.items_buf.clear()
        if self.ratings_buf:
            self.conn.executemany(
                "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, "
                "flagged, state, origin, n_raters) VALUES (?, ?, ?, ?, ?, 0, 'current', ?, ?)",
                self.ratings_buf,
            )
            self.ratings_buf.clear()


def add_value(store: dict[int, Any], key: int, value: float) -> None:
    old = store.get(key)
    if old is None:
        store[key] = value
    elif isinstance(old, tuple):
        store[key] = (*old, value)
    else:
        store[key] = (old, value)


def has_value(store: dict[int, Any], key: int, value: float) -> bool | None:
    """True: this exact value is there; False: another value is; None: nothing is."""
    old = store.get(key)
    if old is None:
        return None
    if isinstance(old, tuple):
        return value in old
    return bool(old == value)
