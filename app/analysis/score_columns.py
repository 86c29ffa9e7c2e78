"""The study's score columns, named by the one printer of metric names.

Every table, export, plot and report reads its metric columns from here, so a column is
always the canonical spec of the configuration that produced it (`meaningbench.metrics.names`):
`bleu[refs=source]`, `bertscore[idf=true,refs=references]`, `meaningbert@my-model`.
Such a name, given back to `score`, `sanity` or `report`, configures the same metric and
selects the same scores.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from meaningbench.db import frames
from meaningbench.metrics.model_roles import metrics_for_model
from meaningbench.metrics.names import canonical_name
from meaningbench.metrics.registry import metric_classes
from meaningbench.settings import resolve_model_path


def _registered_by_path(session: Session | Connection) -> dict[tuple[str, str], str]:
    """(metric, resolved model path) -> registered model name."""
    models = frames.registered_models_frame(session)
    return {
        (served, str(Path(resolve_model_path(str(p))).resolve())): str(n)
        for n, m, p in zip(models["name"], models["metric"], models["path"], strict=True)
        for served in metrics_for_model(str(m))
    }


def run_column(metric: str, config: dict[str, Any], registered: dict[tuple[str, str], str]) -> str:
    classes = metric_classes()
    cls = classes.get(metric)
    if cls is None:  # a metric this version does not know: its name and options as stored
        return canonical_name(metric, config, {})
    model_name = None
    model = config.get("model")
    if isinstance(model, str) and model:
        model_name = registered.get((metric, str(Path(model).resolve())))
    return canonical_name(
        metric, config, cls.defaults, runtime_options=cls.runtime_options, model_name=model_name
    )


def runs_frame(session: Session | Connection) -> pd.DataFrame:
    """`meaningbench.db.frames.runs_frame` with the canonical `column` of each (metric, config hash).

    Two configurations can print alike only when they differ in something a spec cannot
    say (an implementation change that made older scores stale): the newest keeps the name,
    older ones get ` (older N)`."""
    runs = frames.runs_frame(session)
    if runs.empty:
        runs["column"] = []
        return runs
    registered = _registered_by_path(session)
    runs["column"] = [
        run_column(str(m), dict(c), registered)
        for m, c in zip(runs["metric"], runs["config"], strict=True)
    ]
    order = runs.sort_values("last_run_id", ascending=False)
    rank = order.groupby("column").cumcount()
    older = rank[rank > 0]
    runs.loc[older.index, "column"] = [
        f"{runs.at[i, 'column']} (older {n})" for i, n in zip(older.index, older, strict=True)
    ]
    return runs


def scores_frame(session: Session | Connection) -> pd.DataFrame:
    return frames.scores_frame(session, runs_frame(session))


def score_matrix(session: Session | Connection, *, value: str = "value") -> pd.DataFrame:
    return frames.score_matrix(session, runs_frame(session), value=value)


def column_runs(session: Session | Connection) -> dict[str, tuple[str, str]]:
    """Each score column's (metric, config hash): what `score_matrix` names its columns by."""
    runs = runs_frame(session)
    return {
        str(c): (str(m), str(h))
        for c, m, h in zip(runs["column"], runs["metric"], runs["config_hash"], strict=True)
    }


ITEM_CHUNK = 500  # SQLite's limit on bound parameters is far above; keeps each IN list short


def column_scores(
    session: Session | Connection, run: tuple[str, str], item_ids: Iterable[int]
) -> dict[int, float]:
    """The scores that count (`meaningbench.db.frames.current_scores_sql`) of these items
    for one (metric, config hash), as `score_matrix` has them: an item without one is
    absent, a score stored without a value is NaN."""
    metric, config_hash = run
    ids = sorted({int(i) for i in item_ids})
    out: dict[int, float] = {}
    connection = session.connection() if isinstance(session, Session) else session
    for start in range(0, len(ids), ITEM_CHUNK):
        chunk = ids[start : start + ITEM_CHUNK]
        marks = ", ".join(f":i{k}" for k in range(len(chunk)))
        sql = frames.current_scores_sql(
            f"m.metric = :metric AND m.config_hash = :hash AND s.item_id IN ({marks})"
        )
        params: dict[str, object] = {"metric": metric, "hash": config_hash}
        params.update({f"i{k}": i for k, i in enumerate(chunk)})
        for row in connection.execute(text(f"SELECT item_id, value FROM ({sql})"), params):
            out[int(row[0])] = float("nan") if row[1] is None else float(row[1])
    return out
