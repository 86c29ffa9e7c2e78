"""Bulk writing of an import in one transaction on the study's raw SQLite connection.

Why raw sqlite3 and not the ORM: a million items through ORM objects costs minutes and
gigabytes; `executemany` with tuples costs seconds. Why one transaction: an import is all
or nothing — a bad row anywhere rolls everything back, and the WAL journal guarantees the
main file is untouched until the commit. The connection keeps `synchronous=FULL`: the
commit of a large import costs one or two fsyncs of the journal, not one per row, so
weakening durability would buy almost nothing.

Ids are assigned here (the write lock is held from BEGIN IMMEDIATE), so ratings can point
at items that are still in the insert buffer, and inserts can run on a second thread.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from meaningbench.datasets.plan import DimInfo
from meaningbench.db.current_ratings import CURRENT, current_rating_sql
from meaningbench.db.engine import begin_immediate
from meaningbench.db.models import ATTRIBUTE_NAMES_KEY, ATTRIBUTES_JSON_PATH

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
    # Packed keys (item, annotator, dimension) of the current ratings before this import.
    prior: set[int] = field(default_factory=set)
    # How many current ratings an earlier import of this same file stored, per
    # (packed key, value): a re-import recognises that many occurrences as already there.
    from_this_file: dict[tuple[int, float], int] = field(default_factory=dict)
    # Attributes the dataset's items already have (loaded only when the file has some).
    attributes: dict[int, dict[str, str]] = field(default_factory=dict)


@dataclass
class AnnotatorState:
    id: int
    kind: str
    imported_from: str | None = None  # the file a named rater first came from


class _BackgroundWriter:
    """Runs the inserts on a second thread, so SQLite writes while the next rows are parsed.

    sqlite3 releases the GIL while SQLite works, so on two cores parsing and writing
    overlap. Jobs run in submission order (items before the ratings that point at them).
    The first failure is kept and raised in the importing thread at its next call.
    It is a stage inside the import job, not work of its own: progress, cancel and the
    result stay with the job's context (`meaningbench.runtime.JobContext`) in the
    importing thread.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.queue: queue.Queue[tuple[str, list[tuple[Any, ...]]] | None] = queue.Queue(maxsize=3)
        self.error: BaseException | None = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="meaningbench-import", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            job = self.queue.get()
            try:
                if job is None:
                    return
                if self.error is None and not self.stopping:
                    try:
                        self.conn.executemany(*job)
                    except BaseException as exc:  # handed to the importing thread
                        self.error = exc
            finally:
                self.queue.task_done()

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def submit(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.check()
        self.queue.put((sql, rows))

    def drain(self) -> None:
        """Wait until every submitted job ran (before using the connection directly)."""
        self.queue.join()
        self.check()

    def stop(self, *, discard: bool = False) -> None:
        self.stopping = discard
        self.queue.put(None)
        self.thread.join()


INSERT_ITEMS = (
    "INSERT INTO item (id, dataset_id, source, output, refs, system, source_group, "
    "pair_key, kind, external_id, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Attributes added to an item the study had (a later file brings its categories).
UPDATE_ATTRIBUTES = (
    f"UPDATE item SET meta = json_set(COALESCE(meta, '{{}}'), '{ATTRIBUTES_JSON_PATH}', json(?)) "
    "WHERE id = ?"
)
NO_META = "{}"
INSERT_RATINGS = (
    "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, "
    f"flagged, state, origin, n_raters) VALUES (?, ?, ?, ?, ?, 0, '{CURRENT}', ?, ?)"
)


class BulkWriter:
    """Looks up and creates datasets, annotators, dimensions, items and ratings in bulk.

    Between `begin` and `commit` every write goes through the background writer, with ids
    assigned here, so the importing thread never waits for SQLite except to read what an
    existing dataset holds.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.now = sql_now()
        self.items_buf: list[tuple[Any, ...]] = []
        self.ratings_buf: list[tuple[Any, ...]] = []
        self.attributes_buf: list[tuple[Any, ...]] = []
        # Whether `_load_existing` reads the items' attributes (only a file with some needs them).
        self.load_attributes = False
        self.datasets: dict[str, DatasetState] = {}
        self.annotators: dict[str, AnnotatorState] = {}
        self.dimensions: dict[str, int] = {}
        self.next_item_id = 0
        self.first_new_item_id = 0
        self._next_ids: dict[str, int] = {}
        self._next_position = 0
        self._old_cache_size: int | None = None
        self._deferred: list[str] = []
        self._bg: _BackgroundWriter | None = None

    # -- transaction -------------------------------------------------------------------
    def begin(self, study_path: str | Path, *, expected_rows: int = 0) -> None:
        cur = self.conn.cursor()
        self._old_cache_size = cur.execute("PRAGMA cache_size").fetchone()[0]
        cur.execute(f"PRAGMA cache_size=-{IMPORT_CACHE_KIB}")
        # IMMEDIATE: take the write lock now, so the ids assigned below cannot collide with
        # a GUI writing ratings at the same moment; while another import or merge holds it,
        # wait for it (and say so) as every writer does.
        begin_immediate(self.conn, study_path)
        for table in ("item", "dataset", "annotator", "dimension"):
            self._next_ids[table] = cur.execute(
                f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}"
            ).fetchone()[0]
        self.next_item_id = self.first_new_item_id = self._next_ids["item"]
        self._next_position = cur.execute(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM dimension"
        ).fetchone()[0]
        for aid, name, kind, first in cur.execute(
            "SELECT id, name, kind, json_extract(meta, '$.imported_from') FROM annotator"
        ):
            self.annotators[name] = AnnotatorState(aid, kind, first)
        for did, name in cur.execute("SELECT id, name FROM dimension"):
            self.dimensions[name] = did
        if expected_rows >= DEFER_MIN_ROWS:
            n_items = cur.execute("SELECT COUNT(*) FROM item").fetchone()[0]
            # Rebuilding costs a sort of the whole table: only worth it when the new rows
            # are a good part of it.
            if n_items <= 4 * expected_rows:
                self._drop_deferrable()
        self._bg = _BackgroundWriter(self.conn)

    def _drop_deferrable(self) -> None:
        marks = ", ".join("?" for _ in DEFERRABLE_INDEXES)
        rows = self.conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ({marks})",
            DEFERRABLE_INDEXES,
        ).fetchall()
        for name, sql in rows:
            self.conn.execute(f'DROP INDEX "{name}"')
            self._deferred.append(sql)

    def _new_id(self, table: str) -> int:
        value = self._next_ids[table]
        self._next_ids[table] = value + 1
        return value

    def _submit(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        assert self._bg is not None, "begin() first"
        self._bg.submit(sql, rows)

    def _drain(self) -> None:
        if self._bg is not None:
            self._bg.drain()

    def commit(self) -> None:
        self.flush()
        if self._bg is not None:
            self._bg.drain()
            self._bg.stop()
            self._bg = None
        for sql in self._deferred:
            self.conn.execute(sql)
        self._deferred.clear()
        self.conn.execute("COMMIT")
        self._restore()

    def rollback(self) -> None:
        self._deferred.clear()  # the rollback brings the dropped indexes back
        try:
            if self._bg is not None:
                self._bg.stop(discard=True)
                self._bg = None
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
        did = self._new_id("dimension")
        self._submit(
            "INSERT INTO dimension (id, name, scale, min_value, max_value, label_low, "
            "label_high, question, position, active) VALUES (?, ?, ?, ?, ?, '', '', '', ?, 0)",
            [(did, info.name, info.scale, info.min_value, info.max_value, self._next_position)],
        )
        self._next_position += 1
        self.dimensions[info.name] = did
        return did, True

    def dataset(
        self, name: str, *, source_file: str, fmt: str, meta: dict[str, Any], origin: str
    ) -> DatasetState:
        state = self.datasets.get(name)
        if state is not None:
            return state
        self._drain()  # the connection is read here, so the writer must be idle
        row = self.conn.execute("SELECT id FROM dataset WHERE name = ?", (name,)).fetchone()
        if row is None:
            did = self._new_id("dataset")
            self._submit(
                "INSERT INTO dataset (id, name, source_file, format, imported_at, meta) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(did, name, source_file, fmt, self.now, json.dumps(meta, ensure_ascii=False))],
            )
            state = DatasetState(did, name, created=True)
        else:
            state = DatasetState(int(row[0]), name, created=False)
            self._load_existing(state, origin)
        self.datasets[name] = state
        return state

    def _load_existing(self, state: DatasetState, origin: str) -> None:
        """What the dataset already holds, so a re-import adds nothing twice."""
        for iid, pkey, kind in self.conn.execute(
            "SELECT id, pair_key, kind FROM item WHERE dataset_id = ?", (state.id,)
        ):
            state.items.setdefault(kind, {})[pkey] = iid
        prior, mine = state.prior, state.from_this_file
        for iid, aid, did, value, rating_origin in self.conn.execute(
            "SELECT r.item_id, r.annotator_id, r.dimension_id, r.value, r.origin FROM rating r "
            f"JOIN item i ON i.id = r.item_id WHERE i.dataset_id = ? AND {current_rating_sql()}",
            (state.id,),
        ):
            key = rating_key(iid, aid, did)
            prior.add(key)
            if rating_origin == origin:
                mine[(key, value)] = mine.get((key, value), 0) + 1
        if self.load_attributes:
            for iid, attrs in self.conn.execute(
                f"SELECT id, json_extract(meta, '{ATTRIBUTES_JSON_PATH}') FROM item "
                f"WHERE dataset_id = ? AND json_extract(meta, '{ATTRIBUTES_JSON_PATH}') IS NOT NULL",
                (state.id,),
            ):
                state.attributes[iid] = json.loads(attrs)

    def record_import(self, dataset_id: int, record: dict[str, Any]) -> None:
        """Append what an import did to the dataset's `meta["imports"]` (read by `info`)."""
        self._drain()
        row = self.conn.execute("SELECT meta FROM dataset WHERE id = ?", (dataset_id,)).fetchone()
        meta = json.loads(row[0]) if row and row[0] else {}
        meta.setdefault("imports", []).append(record)
        self.conn.execute(
            "UPDATE dataset SET meta = ? WHERE id = ?",
            (json.dumps(meta, ensure_ascii=False), dataset_id),
        )

    def annotator(self, name: str, kind: str, meta: dict[str, Any]) -> tuple[AnnotatorState, bool]:
        state = self.annotators.get(name)
        if state is not None:
            return state, False
        aid = self._new_id("annotator")
        self._submit(
            "INSERT INTO annotator (id, name, kind, created_at, meta) VALUES (?, ?, ?, ?, ?)",
            [(aid, name, kind, self.now, json.dumps(meta, ensure_ascii=False))],
        )
        state = AnnotatorState(aid, kind, meta.get("imported_from"))
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
        meta_json: str = NO_META,
    ) -> int:
        iid = self.next_item_id
        self.next_item_id += 1
        refs_json = json.dumps(refs, ensure_ascii=False) if refs else "[]"
        self.items_buf.append(
            (iid, dataset_id, source, output, refs_json, system, source_group, pair_key, kind,
             external_id, meta_json)
        )  # fmt: skip
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

    def note_attribute_names(self, names: list[str]) -> None:
        """Add names to the study's list of attribute names (`ATTRIBUTE_NAMES_KEY`)."""
        self._drain()
        row = self.conn.execute(
            "SELECT value FROM study_setting WHERE key = ?", (ATTRIBUTE_NAMES_KEY,)
        ).fetchone()
        known = json.loads(row[0]) if row and row[0] else []
        merged = sorted(set(known) | set(names))
        if merged != known:
            self.conn.execute(
                "INSERT INTO study_setting (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (ATTRIBUTE_NAMES_KEY, json.dumps(merged, ensure_ascii=False)),
            )

    def set_attributes(self, item_id: int, attributes: dict[str, str]) -> None:
        """Give an item the study had before this import its (merged) attributes."""
        self.attributes_buf.append((json.dumps(attributes, ensure_ascii=False), item_id))
        if len(self.attributes_buf) >= BATCH:
            self.flush()

    def flush(self) -> None:
        # Items first: ratings point at them and foreign keys are checked at once.
        if self.items_buf:
            self._submit(INSERT_ITEMS, self.items_buf)
            self.items_buf = []
        if self.attributes_buf:
            self._submit(UPDATE_ATTRIBUTES, self.attributes_buf)
            self.attributes_buf = []
        if self.ratings_buf:
            self._submit(INSERT_RATINGS, self.ratings_buf)
            self.ratings_buf = []
