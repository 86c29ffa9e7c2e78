"""Read the study as pandas DataFrames: items, item attributes, current ratings, scores.

Raw rows only: how an item's ratings make its human score is a rule of the engine
(`meaningbench.analysis.human`), not of the database layer. What is defined here:
- a current rating is as `meaningbench.db.current_ratings` says (edits and undos supersede);
  every current row is one rating, whatever its kind (named, anonymous, aggregate);
- the scores of a (metric, config hash) are the newest non-error score per item across the
  runs that share that config (a re-run fills gaps; it never duplicates).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.models import ATTRIBUTE_NAMES_KEY, ATTRIBUTES_JSON_PATH

# The columns of an item, as `items_frame` and the exports name them, in the exports' order
# (exports leave out the last two, which the study derives: see meaningbench.datasets.exporters).
ITEM_COLUMNS = [
    "item_id",
    "dataset",
    "external_id",
    "kind",
    "system",
    "source",
    "output",
    "references",
    "source_group",
    "parent_id",
]


def _conn(session_or_conn: Session | Connection) -> Connection:
    if isinstance(session_or_conn, Session):
        return session_or_conn.connection()
    return session_or_conn


def _in_clause(name: str, values: Sequence[object]) -> tuple[str, dict[str, object]]:
    params = {f"{name}{i}": v for i, v in enumerate(values)}
    return "(" + ", ".join(f":{k}" for k in params) + ")", params


def _item_where(
    kinds: Sequence[str] | None, dataset: str | None
) -> tuple[list[str], dict[str, object]]:
    """Conditions on `item i` (kinds) and `dataset d` (name), with their parameters."""
    where: list[str] = ["1=1"]
    params: dict[str, object] = {}
    if kinds is not None:
        clause, p = _in_clause("k", list(kinds))
        where.append(f"i.kind IN {clause}")
        params.update(p)
    if dataset is not None:
        where.append("d.name = :dataset")
        params["dataset"] = dataset
    return where, params


def items_frame(
    session: Session | Connection,
    *,
    kinds: Sequence[str] | None = ("regular",),
    dataset: str | None = None,
) -> pd.DataFrame:
    """Items as rows; `references` decoded to lists. `kinds=None` includes control items."""
    where, params = _item_where(kinds, dataset)
    sql = f"""
        SELECT i.id AS item_id, d.name AS dataset, i.external_id, i.kind, i.system, i.source,
               i.output, i.refs AS "references", i.source_group, i.parent_id
        FROM item i JOIN dataset d ON d.id = i.dataset_id
        WHERE {" AND ".join(where)}
        ORDER BY i.id
    """
    frame = pd.read_sql_query(text(sql), _conn(session), params=params)
    if frame.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS)
    frame["references"] = [json.loads(r) if r else [] for r in frame["references"]]
    return frame


# The attribute names items of the study have, as the writers of attributes (import and
# merge) record them: no scan of the items. One row (the value, JSON) or none.
ATTRIBUTE_NAMES_SQL = f"SELECT value FROM study_setting WHERE key = '{ATTRIBUTE_NAMES_KEY}'"


def decode_attribute_names(raw: object) -> list[str]:
    """The names from the value `ATTRIBUTE_NAMES_SQL` reads (None when there is no row)."""
    names = json.loads(raw) if isinstance(raw, str) else raw
    return [str(n) for n in names] if isinstance(names, list) else []


def attribute_names(session: Session | Connection) -> list[str]:
    """The attribute names items of the study have, sorted."""
    return decode_attribute_names(_conn(session).execute(text(ATTRIBUTE_NAMES_SQL)).scalar())


def item_attributes(
    session: Session | Connection, item_range: tuple[int, int]
) -> dict[int, dict[str, str]]:
    """{item id: {name: value}} for the items with ids in [lo, hi] that have attributes."""
    sql = f"""
        SELECT i.id, json_extract(i.meta, '{ATTRIBUTES_JSON_PATH}') FROM item i
        WHERE i.id BETWEEN :lo AND :hi
          AND json_extract(i.meta, '{ATTRIBUTES_JSON_PATH}') IS NOT NULL
    """
    lo, hi = item_range
    rows = _conn(session).execute(text(sql), {"lo": lo, "hi": hi})
    return {int(iid): json.loads(raw) for iid, raw in rows}


# Items per distinct `meta`, for `attribute_counts`. Grouping the JSON text as it is and
# decoding each distinct text once in Python is twice as fast as json_each in SQL (about
# 0.5 s for 300,000 items on a busy machine): category values repeat.
ITEM_META_COUNTS_SQL = "SELECT meta, COUNT(*) FROM item GROUP BY meta"


def attribute_counts(meta_counts: Iterable[Sequence[Any]]) -> list[tuple[str, str, int]]:
    """(name, value, items) from the rows of `ITEM_META_COUNTS_SQL`: by name, then the
    most frequent value first (`info` and the browser list them so)."""
    counts: dict[tuple[str, str], int] = {}
    for raw, n in meta_counts:
        meta = json.loads(raw) if isinstance(raw, str) and raw else raw
        attrs = meta.get("attributes") if isinstance(meta, dict) else None
        for name, value in (attrs or {}).items():
            key = (str(name), str(value))
            counts[key] = counts.get(key, 0) + int(n)
    return sorted(
        ((name, value, n) for (name, value), n in counts.items()),
        key=lambda t: (t[0], -t[2], t[1]),
    )


def item_attributes_frame(
    session: Session | Connection,
    *,
    kinds: Sequence[str] | None = ("regular",),
    dataset: str | None = None,
) -> pd.DataFrame:
    """Item attributes (categories such as a sentence type) as a wide table.

    Index `item_id` (every item of `kinds` in `dataset`, in id order, with or without
    attributes); one column per attribute name, sorted; values are the strings the import
    kept (`item.meta["attributes"]`), NaN where an item has no value for that attribute.
    `kinds=None` includes control items. No attributes in the study: no columns.
    """
    where, params = _item_where(kinds, dataset)
    sql = f"""
        SELECT i.id AS item_id, json_extract(i.meta, '{ATTRIBUTES_JSON_PATH}') AS attributes
        FROM item i JOIN dataset d ON d.id = i.dataset_id
        WHERE {" AND ".join(where)}
        ORDER BY i.id
    """
    rows = _conn(session).execute(text(sql), params).all()
    ids = [int(r[0]) for r in rows]
    records = [json.loads(r[1]) if r[1] else {} for r in rows]
    names = sorted({name for rec in records for name in rec})
    frame = pd.DataFrame(
        {name: [rec.get(name) for rec in records] for name in names},
        index=pd.Index(ids, name="item_id", dtype="int64"),
        dtype=object,
    )
    return frame.where(frame.notna(), float("nan"))


def ratings_frame(
    session: Session | Connection,
    *,
    dimension: str | None = None,
    annotator_kinds: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    item_range: tuple[int, int] | None = None,
) -> pd.DataFrame:
    """Current ratings, one row per rating row (a rater may have several of one item).

    `annotator_kinds` keeps ratings of those source kinds; `kinds` of those item kinds;
    `item_range` of items with ids in [lo, hi].
    """
    where: list[str] = [current_rating_sql()]
    params: dict[str, object] = {}
    if dimension is not None:
        where.append("dm.name = :dimension")
        params["dimension"] = dimension
    if annotator_kinds is not None:
        clause, p = _in_clause("ak", list(annotator_kinds))
        where.append(f"a.kind IN {clause}")
        params.update(p)
    if item_range is not None:
        where.append("r.item_id BETWEEN :lo AND :hi")
        params["lo"], params["hi"] = item_range
    if kinds is not None:
        clause, p = _in_clause("k", list(kinds))
        where.append(f"i.kind IN {clause}")
        params.update(p)
    sql = f"""
        SELECT r.id AS rating_id, r.item_id, r.annotator_id, a.name AS annotator,
               a.kind AS annotator_kind,
               dm.name AS dimension, dm.scale AS scale, r.value, r.n_raters, r.start_value,
               r.shown_at, r.submitted_at, r.duration_ms, r.flagged, r.comment, r.origin,
               i.kind AS item_kind, i.parent_id
        FROM rating r
        JOIN annotator a ON a.id = r.annotator_id
        JOIN dimension dm ON dm.id = r.dimension_id
        JOIN item i ON i.id = r.item_id
        WHERE {" AND ".join(where)}
        ORDER BY r.id
    """
    return pd.read_sql_query(text(sql), _conn(session), params=params)


def runs_frame(session: Session | Connection) -> pd.DataFrame:
    """One row per (metric, config hash): its newest run's id, label, model and stored config.

    Naming the runs for tables is the application's rule (`meaningbench.analysis.score_columns`),
    which adds a `column` to this frame.
    """
    sql = """
        SELECT m.metric, m.config_hash, m.id AS last_run_id, m.label, m.model_id,
               m.config AS config
        FROM metric_run m
        JOIN (SELECT metric, config_hash, MAX(id) AS last_id, MIN(id) AS first_id
              FROM metric_run GROUP BY metric, config_hash) g ON g.last_id = m.id
        ORDER BY m.metric, g.first_id
    """
    runs = pd.read_sql_query(text(sql), _conn(session))
    runs["config"] = [json.loads(c) if c else {} for c in runs["config"]]
    return runs


def registered_models_frame(session: Session | Connection) -> pd.DataFrame:
    """Models registered in the study: name, metric, path."""
    sql = "SELECT name, metric, path FROM registered_model ORDER BY id"
    return pd.read_sql_query(text(sql), _conn(session))


def current_scores_sql(condition: str = "1") -> str:
    """The one rule of which score counts, as SQL: per (item, metric, config hash), the
    newest run's non-error score. `condition` narrows the rows first (a metric, some items;
    its placeholders are the caller's). Columns: item_id, metric, config_hash, value, raw,
    run_id. SQLite's bare-column rule makes value and raw those of the MAX(run_id) row."""
    return f"""
        SELECT s.item_id, m.metric, m.config_hash, s.value, s.raw, MAX(s.run_id) AS run_id
        FROM score s JOIN metric_run m ON m.id = s.run_id
        WHERE s.error IS NULL AND ({condition})
        GROUP BY s.item_id, m.metric, m.config_hash
    """


def shown_scores_sql(condition: str = "1") -> str:
    """What a screen shows of the scores: per (item, metric, config hash) the score that
    counts (`current_scores_sql`), and where none counts, the newest error, so a failure is
    visible. Columns: those of `current_scores_sql`, then error (NULL on a score that
    counts). `condition` appears twice: its placeholders must be named."""
    return f"""
        SELECT c.item_id, c.metric, c.config_hash, c.value, c.raw, c.run_id, NULL AS error
        FROM ({current_scores_sql(condition)}) c
        UNION ALL
        SELECT s.item_id, m.metric, m.config_hash, s.value, s.raw, MAX(s.run_id) AS run_id,
               s.error
        FROM score s JOIN metric_run m ON m.id = s.run_id
        WHERE s.error IS NOT NULL AND ({condition})
          AND NOT EXISTS (
              SELECT 1 FROM score s2 JOIN metric_run m2 ON m2.id = s2.run_id
              WHERE s2.item_id = s.item_id AND m2.metric = m.metric
                AND m2.config_hash = m.config_hash AND s2.error IS NULL)
        GROUP BY s.item_id, m.metric, m.config_hash
    """


def scores_frame(session: Session | Connection, runs: pd.DataFrame) -> pd.DataFrame:
    """Long table: item_id, metric, config_hash, column, value, raw (newest score per config).

    `runs` is `runs_frame` with a `column` per (metric, config hash)."""
    long = pd.read_sql_query(text(current_scores_sql()), _conn(session))
    if long.empty:
        return pd.DataFrame(columns=["item_id", "metric", "config_hash", "column", "value", "raw"])
    long = long.merge(runs[["metric", "config_hash", "column"]], on=["metric", "config_hash"])
    return long.drop(columns=["run_id"]).reset_index(drop=True)


def score_matrix(
    session: Session | Connection, runs: pd.DataFrame, *, value: str = "value"
) -> pd.DataFrame:
    """Wide table: one row per item (index item_id), one column per (metric, config)."""
    long = scores_frame(session, runs)
    if long.empty:
        return pd.DataFrame()
    wide = long.pivot(index="item_id", columns="column", values=value)
    wide.columns.name = None
    return wide
