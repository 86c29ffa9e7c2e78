"""What the study browser reads: which items pass the filters (as an id list), the rows
and scores of one page, the score columns and the filter choices.

Why an id list: with a million items, OFFSET paging costs a scan per page and a filter
such as "unrated" makes every scan expensive, while the ids of the filtered set (8 bytes
each) are fetched once per filter change, on a worker thread, and then any page is a
primary-key lookup of a few hundred rows however far the user scrolls.

The "mean" column and sort are the item's human score by the one rule of
`meaningbench.analysis.human` (each rater's ratings averaged first; aggregate labels where no rater
rated), computed from the raw rating rows — never an SQL average, which would weigh a
rater's repeated ratings twice.

Plain sqlite3 on the browser's own read-only connection (the table model keeps one open
for paging), so it is tested and benchmarked without a window.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from meaningbench.analysis.human import item_scores
from meaningbench.analysis.label_sets import resolve_label_sets, select_labels
from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import (
    ATTRIBUTE_NAMES_SQL,
    ITEM_META_COUNTS_SQL,
    attribute_counts,
    current_scores_sql,
    decode_attribute_names,
)
from meaningbench.db.models import ATTRIBUTES_JSON_PATH
from meaningbench.metrics.names import name_and_options as name_and_options  # a column's two lines
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.queries.item_detail import ItemDetail, fetch_detail
from meaningbench.queries.raters import MachineRater, machine_raters, rater_kind_sql

if TYPE_CHECKING:
    pass

# An attribute with more values than this is an identifier or a number, not a category:
# the filter does not offer it.
MAX_FILTER_VALUES = 50

SORT_KEYS = ("id", "dataset", "system", "kind", "source", "output", "ratings", "mean", "score")


@dataclass(frozen=True)
class BrowserFilter:
    dataset: str | None = None
    system: str | None = None
    rated: str = "any"  # any | rated | unrated (current ratings of the `raters`)
    # Whose ratings count for `rated` and the sort by ratings: all | people | machine
    # (`meaningbench.queries.raters`).
    raters: str = "all"
    flagged: bool = False  # only items flagged in a note or a rating
    kinds: str = "regular"  # regular | control | all
    search: str = ""  # substring of the source or the output (case-insensitive for ASCII)
    sort: str = "id"  # one of SORT_KEYS
    descending: bool = False
    # With sort == "score": the (metric, config hash) whose newest scores order the rows.
    sort_score: tuple[str, str] | None = None
    # With sort == "mean": the dimension whose item human score orders the rows.
    sort_dimension: int | None = None
    # Only items whose attribute (a category kept from an imported column) has this value:
    # (attribute name, value).
    attribute: tuple[str, str] | None = None

    def with_(self, **changes: Any) -> BrowserFilter:
        return replace(self, **changes)


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def where_clause(f: BrowserFilter) -> tuple[str, list[Any]]:
    """SQL conditions on `item i` and their parameters (no join: the id list stays cheap)."""
    conds: list[str] = []
    params: list[Any] = []
    if f.kinds == "regular":
        conds.append("i.kind = 'regular'")
    elif f.kinds == "control":
        conds.append("i.kind != 'regular'")
    if f.dataset:
        conds.append("i.dataset_id = (SELECT id FROM dataset WHERE name = ?)")
        params.append(f.dataset)
    if f.system:
        conds.append("i.system = ?")
        params.append(f.system)
    whose = rater_kind_sql(f.raters)
    if f.rated == "rated":
        conds.append(
            "EXISTS (SELECT 1 FROM rating r WHERE r.item_id = i.id"
            f" AND {current_rating_sql()} AND {whose})"
        )
    elif f.rated == "unrated":
        conds.append(
            "NOT EXISTS (SELECT 1 FROM rating r WHERE r.item_id = i.id"
            f" AND {current_rating_sql()} AND {whose})"
        )
    if f.flagged:
        conds.append(
            "(EXISTS (SELECT 1 FROM item_note n WHERE n.item_id = i.id AND n.flagged)"
            " OR EXISTS (SELECT 1 FROM rating r WHERE r.item_id = i.id"
            f" AND {current_rating_sql()} AND r.flagged))"
        )
    if f.attribute is not None:
        # json_each rather than a JSON path: any attribute name works, quotes and dots too.
        conds.append(
            f"EXISTS (SELECT 1 FROM json_each(i.meta, '{ATTRIBUTES_JSON_PATH}') a "
            "WHERE a.key = ? AND a.value = ?)"
        )
        params.extend(f.attribute)
    term = f.search.strip()
    if term:
        like = f"%{_escape_like(term)}%"
        conds.append("(i.source LIKE ? ESCAPE '\\' OR i.output LIKE ? ESCAPE '\\')")
        params.extend([like, like])
    return (" AND ".join(conds) if conds else "1=1"), params


def ids_sql(f: BrowserFilter) -> tuple[str, list[Any]]:
    where, params = where_clause(f)
    direction = "DESC" if f.descending else "ASC"
    joins = ""
    join_params: list[Any] = []
    simple = {
        "dataset": "d.name",
        "system": "i.system",
        "kind": "i.kind",
        "source": "i.source",
        "output": "i.output",
    }
    if f.sort in simple:
        if f.sort == "dataset":
            joins = " JOIN dataset d ON d.id = i.dataset_id"
        order = f"{simple[f.sort]} {direction}, i.id {direction}"
    elif f.sort == "ratings":
        order = (
            "(SELECT COUNT(*) FROM rating r WHERE r.item_id = i.id"
            f" AND {current_rating_sql()} AND {rater_kind_sql(f.raters)}) "
            f"{direction}, i.id {direction}"
        )
    elif f.sort == "mean":
        # Ordered by `load_ids` after the human scores are computed (see the module notes).
        order = f"i.id {direction}"
    elif f.sort == "score" and f.sort_score is not None:
        current = current_scores_sql("m.metric = ? AND m.config_hash = ?")
        joins = (
            f" LEFT JOIN (SELECT item_id, value AS v FROM ({current})) srt ON srt.item_id = i.id"
        )
        join_params.extend(f.sort_score)
        order = f"srt.v IS NULL, srt.v {direction}, i.id {direction}"
    else:
        order = f"i.id {direction}"
    sql = f"SELECT i.id FROM item i{joins} WHERE {where} ORDER BY {order}"
    return sql, join_params + params


def connect_readonly(path: str) -> sqlite3.Connection:
    """A reading connection of its own (WAL lets it read while a worker writes scores).

    `mode=rw` where the study is writable: a study file that vanished is an error, never
    silently re-created empty; on a read-only medium, meaningbench.db.access says how to read it.
    """
    from meaningbench.db.access import reading_uri
    from meaningbench.db.study_files import connect

    uri = reading_uri(path)
    conn = connect(uri, path, timeout=10.0)
    conn.execute("PRAGMA query_only = ON")
    return conn


def fresh_connection(conn: sqlite3.Connection | None, path: str) -> sqlite3.Connection:
    """`conn`, or a new reading connection where it was closed because the study's
    write-ahead log was replaced under it (see meaningbench.db.study_files)."""
    from meaningbench.db.study_files import is_open, reopen_if_replaced

    reopen_if_replaced(path)
    if conn is not None and is_open(conn):
        return conn
    return connect_readonly(path)


def load_ids(
    conn: sqlite3.Connection, f: BrowserFilter, *, chunk: int = 65536, cancelled: Any = None
) -> array[int]:
    """The ids of the items passing `f`, in display order."""
    sql, params = ids_sql(f)
    ids = array("q")
    cur = conn.execute(sql, params)
    while True:
        rows = cur.fetchmany(chunk)
        if not rows:
            break
        ids.extend(r[0] for r in rows)
        if cancelled is not None and cancelled():
            break
    if f.sort == "mean" and ids:
        ids = _by_human_score(conn, ids, f.sort_dimension, descending=f.descending)
    return ids


def _rating_rows(
    conn: sqlite3.Connection, dimension_id: int, ids: Sequence[int] | None
) -> pd.DataFrame:
    sql = (
        "SELECT r.item_id, a.name AS annotator, a.kind AS annotator_kind, r.value "
        "FROM rating r JOIN annotator a ON a.id = r.annotator_id "
        f"WHERE {current_rating_sql()} AND r.dimension_id = ?"
    )
    params: list[Any] = [dimension_id]
    if ids is not None:
        sql += f" AND r.item_id IN ({','.join('?' * len(ids))})"
        params.extend(ids)
    rows = conn.execute(sql, params).fetchall()
    return pd.DataFrame(rows, columns=["item_id", "annotator", "annotator_kind", "value"])


def human_scores(
    conn: sqlite3.Connection, dimension_id: int | None, ids: Sequence[int] | None = None
) -> dict[int, float]:
    """Item id → human score on the dimension (items of `ids`, or all), by the one rule."""
    if dimension_id is None:
        return {}
    rows = select_labels(_rating_rows(conn, dimension_id, ids), resolve_label_sets(conn))
    scores = item_scores(rows)
    return {
        int(i): float(v)
        for i, v in zip(scores["item_id"], scores["score"], strict=True)
        if np.isfinite(v)
    }


def _by_human_score(
    conn: sqlite3.Connection, ids: array[int], dimension_id: int | None, *, descending: bool
) -> array[int]:
    """`ids` ordered by human score (unscored last), ties by id, in the chosen direction."""
    scores = human_scores(conn, dimension_id)
    order_ids = np.frombuffer(ids, dtype=np.int64) if ids.itemsize == 8 else np.asarray(ids)
    values = np.array([scores.get(int(i), np.nan) for i in order_ids], dtype=np.float64)
    missing = np.isnan(values)
    sign = -1.0 if descending else 1.0
    # lexsort: the last key is the primary one.
    order = np.lexsort((sign * order_ids, sign * np.nan_to_num(values), missing))
    return array("q", order_ids[order].tolist())


@dataclass(frozen=True)
class ItemRow:
    item_id: int
    dataset: str
    system: str | None
    kind: str
    source: str
    output: str
    n_ratings: int  # current ratings, people's and machines'
    mean_rating: float | None  # the item's human score on the primary dimension
    flagged: bool
    n_machine: int = 0  # of `n_ratings`, those of machine raters (never in the mean)


def primary_dimension(conn: sqlite3.Connection) -> tuple[int, str] | None:
    row = conn.execute(
        "SELECT id, name FROM dimension ORDER BY active DESC, position, id LIMIT 1"
    ).fetchone()
    return (int(row[0]), str(row[1])) if row else None


def fetch_rows(
    conn: sqlite3.Connection, ids: Sequence[int], dimension_id: int | None
) -> dict[int, ItemRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sql = f"""
        SELECT i.id, d.name, i.system, i.kind, i.source, i.output,
               (SELECT COUNT(*) FROM rating r
                 WHERE r.item_id = i.id AND {current_rating_sql()}),
               EXISTS (SELECT 1 FROM item_note n WHERE n.item_id = i.id AND n.flagged)
               OR EXISTS (SELECT 1 FROM rating r
                 WHERE r.item_id = i.id AND {current_rating_sql()} AND r.flagged),
               (SELECT COUNT(*) FROM rating r
                 WHERE r.item_id = i.id AND {current_rating_sql()}
                 AND {rater_kind_sql("machine")})
        FROM item i JOIN dataset d ON d.id = i.dataset_id
        WHERE i.id IN ({marks})
    """
    scores = human_scores(conn, dimension_id, list(ids))
    out: dict[int, ItemRow] = {}
    for r in conn.execute(sql, list(ids)):
        out[int(r[0])] = ItemRow(
            item_id=int(r[0]),
            dataset=r[1],
            system=r[2],
            kind=r[3],
            source=r[4],
            output=r[5],
            n_ratings=int(r[6]),
            mean_rating=scores.get(int(r[0])),
            flagged=bool(r[7]),
            n_machine=int(r[8]),
        )
    return out


@dataclass(frozen=True)
class ScoreColumn:
    """One (metric, config) column, named as meaningbench.analysis.score_columns names it."""

    metric: str
    config_hash: str
    column: str


def score_columns(handle: StudyHandle) -> list[ScoreColumn]:
    """The study's score columns, named as the exports and tables name them."""
    study = study_of(handle)
    from meaningbench.analysis.score_columns import runs_frame

    with study.engine.connect() as conn:
        runs = runs_frame(conn)
    return [
        ScoreColumn(str(m), str(h), str(c))
        for m, h, c in zip(runs["metric"], runs["config_hash"], runs["column"], strict=True)
    ]


def fetch_scores(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> dict[tuple[int, str, str], float | None]:
    """(item, metric, config hash) → value of the score that counts (meaningbench.db.frames)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    sql = f"SELECT item_id, metric, config_hash, value FROM ({current_scores_sql(f's.item_id IN ({marks})')})"
    return {
        (int(item_id), metric, config_hash): value
        for item_id, metric, config_hash, value in conn.execute(sql, list(ids))
    }


def distinct_values(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """Dataset names and systems for the filter combos (systems through their index)."""
    datasets = [r[0] for r in conn.execute("SELECT name FROM dataset ORDER BY name")]
    systems = [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT system FROM item WHERE system IS NOT NULL ORDER BY system"
        )
    ]
    return datasets, systems


def has_items(conn: sqlite3.Connection) -> bool:
    """Whether the study holds any item at all (an empty one gets an import hint)."""
    return conn.execute("SELECT 1 FROM item LIMIT 1").fetchone() is not None


@dataclass(frozen=True)
class AttributeChoice:
    """One value of an item attribute the filter offers, with its number of items."""

    name: str
    value: str
    items: int


def attribute_choices(conn: sqlite3.Connection) -> list[AttributeChoice]:
    """The item attributes' values for the filter, by name, the most frequent value first;
    attributes with more than MAX_FILTER_VALUES values are left out."""
    row = conn.execute(ATTRIBUTE_NAMES_SQL).fetchone()
    if not decode_attribute_names(row[0] if row else None):
        return []  # no attributes: no scan of the items
    by_name: dict[str, list[AttributeChoice]] = {}
    for name, value, items in attribute_counts(conn.execute(ITEM_META_COUNTS_SQL)):
        by_name.setdefault(str(name), []).append(AttributeChoice(str(name), str(value), int(items)))
    return [c for values in by_name.values() if len(values) <= MAX_FILTER_VALUES for c in values]


class BrowserReader:
    """The browser's own reading connection to one study, kept private: the screens hold
    this handle and ask it questions, and it answers with ids, rows and dataclasses.

    Each question goes through `fresh_connection`, so a connection closed because the
    study's write-ahead log was replaced under it is opened again transparently.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = connect_readonly(path)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"the browser's connection to {self.path} is closed")
        self._conn = fresh_connection(self._conn, self.path)
        return self._conn

    def primary_dimension(self) -> tuple[int, str] | None:
        return primary_dimension(self._connection())

    def ids(self, f: BrowserFilter, *, cancelled: Any = None) -> array[int]:
        return load_ids(self._connection(), f, cancelled=cancelled)

    def rows(self, ids: Sequence[int], dimension_id: int | None) -> dict[int, ItemRow]:
        return fetch_rows(self._connection(), ids, dimension_id)

    def scores(self, ids: Sequence[int]) -> dict[tuple[int, str, str], float | None]:
        return fetch_scores(self._connection(), ids)

    def filter_values(self) -> tuple[list[str], list[str]]:
        return distinct_values(self._connection())

    def attribute_choices(self) -> list[AttributeChoice]:
        return attribute_choices(self._connection())

    def machine_raters(self) -> list[MachineRater]:
        return machine_raters(self._connection())

    def has_items(self) -> bool:
        return has_items(self._connection())

    def detail(self, item_id: int) -> ItemDetail | None:
        return fetch_detail(self._connection(), item_id)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
