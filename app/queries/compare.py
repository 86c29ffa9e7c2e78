"""What the comparison view shows for one source sentence, read from the study, and the
explanations of its scores, asked of each metric's `explain` hook.

Queries are limited to the items of one source group, so opening a source in a study with
millions of scores stays instant. Current ratings only; an item's human score is the one
rule of `meaningbench.analysis.human` (each rater's ratings averaged first, then the raters;
aggregate labels where no rater rated); per (metric, config) the newest non-error score,
named by the same column names as every other table (`meaningbench.analysis.score_columns`).
The view never names a metric: which scores can be explained, and how, is the registry's and
the metrics' business.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.analysis.human import item_scores, source_means
from meaningbench.analysis.label_sets import resolve_label_sets, select_labels
from meaningbench.analysis.score_columns import runs_frame
from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import current_scores_sql
from meaningbench.metrics.explain import Explanation
from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.queries.files import StudyHandle, study_of


@dataclass(frozen=True)
class SystemRow:
    item_id: int
    system: str
    output: str
    references: list[str]
    # Per-rater source -> its mean rating of the item (a named rater's repeated ratings,
    # or a dataset's anonymous ratings, averaged for display).
    ratings: dict[str, float] = field(default_factory=dict)
    aggregate: dict[str, float] = field(default_factory=dict)  # published means (kind aggregate)
    metrics: dict[str, float] = field(default_factory=dict)  # column -> 0–100 value
    # The item's human score and the raters behind it, by the one rule.
    mean: float | None = None
    n_raters: int = 0


@dataclass(frozen=True)
class SourceComparison:
    source_group: str
    source: str
    dimension: str
    rows: list[SystemRow]
    raters: list[str]  # human raters, in name order
    aggregates: list[str]  # aggregate annotators (a dataset's published mean)
    metrics: list[str]  # score columns present for these items


@dataclass(frozen=True)
class SourceEntry:
    source_group: str
    source: str
    n_items: int


def _in(name: str, values: Sequence[object]) -> tuple[str, dict[str, object]]:
    params = {f"{name}{i}": v for i, v in enumerate(values)}
    return "(" + ", ".join(f":{k}" for k in params) + ")", params


@dataclass(frozen=True)
class StudyOverview:
    sources: list[SourceEntry]
    dimensions: list[str]  # rating dimensions, the active ones first


def overview(handle: StudyHandle) -> StudyOverview:
    """The sources to navigate and the rating dimensions to choose from."""
    study = study_of(handle)
    with study.session() as s:
        return StudyOverview(list_sources(s), dimensions(s))


def group_of_item(handle: StudyHandle, item_id: int) -> str | None:
    study = study_of(handle)
    with study.session() as s:
        return s.execute(
            text("SELECT source_group FROM item WHERE id = :i"), {"i": item_id}
        ).scalar()


def comparison(
    handle: StudyHandle, source_group: str, dimension: str = "meaning"
) -> SourceComparison:
    """Every system's output of one source, with its ratings and metric values."""
    study = study_of(handle)
    with study.session() as s:
        return load_comparison(s, source_group, dimension)


def list_sources(session: Session) -> list[SourceEntry]:
    """Every source sentence with regular items, in the order it was first imported."""
    rows = session.execute(
        text(
            """
            SELECT source_group, MIN(id) AS first_id, COUNT(*) AS n
            FROM item WHERE kind = 'regular'
            GROUP BY source_group ORDER BY first_id
            """
        )
    ).all()
    if not rows:
        return []
    clause, params = _in("i", [r.first_id for r in rows])
    sources: dict[int, str] = dict(
        session.execute(text(f"SELECT id, source FROM item WHERE id IN {clause}"), params).all()
    )
    return [SourceEntry(r.source_group, sources[r.first_id], int(r.n)) for r in rows]


def dimensions(session: Session) -> list[str]:
    return list(
        session.execute(text("SELECT name FROM dimension ORDER BY active DESC, position")).scalars()
    )


def load_comparison(
    session: Session, source_group: str, dimension: str = "meaning"
) -> SourceComparison:
    items = session.execute(
        text(
            """
            SELECT id, source, output, refs, system FROM item
            WHERE source_group = :g AND kind = 'regular' ORDER BY id
            """
        ),
        {"g": source_group},
    ).all()
    rows = [
        SystemRow(
            item_id=int(r.id),
            system=r.system or f"item {r.id}",
            output=r.output,
            references=json.loads(r.refs) if isinstance(r.refs, str) else list(r.refs or []),
        )
        for r in items
    ]
    by_id = {row.item_id: row for row in rows}
    raters: set[str] = set()
    aggregates: set[str] = set()
    metrics: list[str] = []
    if rows:
        clause, params = _in("i", list(by_id))
        ratings = session.execute(
            text(
                f"""
                SELECT r.item_id, a.name, a.kind, r.value FROM rating r
                JOIN annotator a ON a.id = r.annotator_id
                JOIN dimension d ON d.id = r.dimension_id
                WHERE {current_rating_sql()} AND d.name = :dim AND r.item_id IN {clause}
                ORDER BY r.id
                """
            ),
            {**params, "dim": dimension},
        ).all()
        frame = pd.DataFrame(ratings, columns=["item_id", "annotator", "annotator_kind", "value"])
        shown = source_means(frame)
        for item_id, name, kind, value in zip(
            shown["item_id"], shown["annotator"], shown["annotator_kind"], shown["value"],
            strict=True,
        ):  # fmt: skip
            if kind == "aggregate":
                by_id[item_id].aggregate[name] = float(value)
                aggregates.add(name)
            else:
                by_id[item_id].ratings[name] = float(value)
                raters.add(name)
        scores = item_scores(select_labels(frame, resolve_label_sets(session)))
        for item_id, score, n in zip(
            scores["item_id"], scores["score"], scores["n_raters"], strict=True
        ):
            row = by_id[int(item_id)]
            by_id[int(item_id)] = replace(
                row,
                mean=None if math.isnan(score) else float(score),
                n_raters=int(n) if row.ratings else 0,
            )
        metrics = _attach_scores(session, by_id, clause, params)
    source = items[0].source if items else ""
    return SourceComparison(
        source_group,
        source,
        dimension,
        list(by_id.values()),
        sorted(raters),
        sorted(aggregates),
        metrics,
    )


def _attach_scores(
    session: Session, by_id: dict[int, SystemRow], clause: str, params: dict[str, object]
) -> list[str]:
    current = current_scores_sql(f"s.item_id IN {clause}")
    scores = session.execute(
        text(
            f"SELECT item_id, metric, config_hash, value FROM ({current}) WHERE value IS NOT NULL"
        ),
        params,
    ).all()
    if not scores:
        return []
    runs = runs_frame(session)
    column = {
        (m, h): c
        for m, h, c in zip(runs["metric"], runs["config_hash"], runs["column"], strict=True)
    }
    seen: list[str] = []
    for item_id, metric, config_hash, value in scores:
        name = column.get((metric, config_hash), metric)
        by_id[item_id].metrics[name] = float(value)
        if name not in seen:
            seen.append(name)
    order = {c: n for n, c in enumerate(runs["column"])}
    return sorted(seen, key=lambda c: order.get(c, len(order)))


@dataclass(frozen=True)
class StoredScore:
    run_id: int
    metric: str
    label: str  # the run's canonical name, as the table's column says
    value: float | None
    details: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)


def stored_scores(session: Session, item_id: int, metric: str | None = None) -> list[StoredScore]:
    """The score that counts (`current_scores_sql`) of each config of each metric (or of
    `metric`) for one item, newest run first."""
    condition = "s.item_id = :i" + (" AND m.metric = :m" if metric is not None else "")
    rows = session.execute(
        text(
            f"""
            SELECT c.run_id, c.metric, m.label, c.value, s.details, m.config
            FROM ({current_scores_sql(condition)}) c
            JOIN metric_run m ON m.id = c.run_id
            JOIN score s ON s.run_id = c.run_id AND s.item_id = c.item_id
            ORDER BY c.run_id DESC
            """
        ),
        {"i": item_id, "m": metric},
    ).all()
    out: list[StoredScore] = []
    for run_id, name, label, value, details, config in rows:
        parsed = json.loads(details) if isinstance(details, str) else (details or {})
        cfg = json.loads(config) if isinstance(config, str) else (config or {})
        out.append(StoredScore(int(run_id), name, label or name, value, parsed, cfg))
    return out


@dataclass(frozen=True)
class ExplainChoice:
    """A score of one output the view can explain: a stored run, or a metric that explains
    from the texts alone (`Metric.explains_live`) and has no stored score here."""

    key: str  # the same choice on every output: the run's name, or the metric's name
    label: str  # what the menu shows
    metric: str
    config: dict[str, Any]
    stored: StoredScore | None = None


def explain_choices(handle: StudyHandle, item_id: int) -> list[ExplainChoice]:
    """The stored scores of one output, by name, then the live explanations not stored."""
    study = study_of(handle)
    from meaningbench.metrics.registry import metric_classes

    with study.session() as s:
        stored = stored_scores(s, item_id)
    out = [
        ExplainChoice(sc.label, sc.label, sc.metric, sc.config, sc)
        for sc in sorted(stored, key=lambda sc: sc.label)
    ]
    have = {sc.metric for sc in stored}
    for name, cls in sorted(metric_classes().items()):
        if cls.explains_live and name not in have:
            out.append(ExplainChoice(name, f"{cls.info.label} (computed here)", name, {}))
    return out


def explain_score(handle: StudyHandle, item_id: int, choice: ExplainChoice) -> Explanation:
    """Ask the metric of `choice`, configured as its run was, to explain one output."""
    study = study_of(handle)
    from meaningbench.jobs.study_inputs import StudyFileInputs
    from meaningbench.metrics.base import Pair, resolve_references
    from meaningbench.metrics.explain import ExplainItem, NoExplanation
    from meaningbench.metrics.registry import get_metric_class

    try:
        cls = get_metric_class(choice.metric)
    except KeyError as exc:
        return Explanation(NoExplanation(str(exc.args[0])))
    try:
        metric = cls(**{k: v for k, v in choice.config.items() if k in cls.defaults})
    except (TypeError, ValueError) as exc:
        return Explanation(NoExplanation(f"{choice.label}: {exc}"))
    with study.session() as s:
        row = s.execute(
            text("SELECT source, output, refs, system, source_group FROM item WHERE id = :i"),
            {"i": item_id},
        ).one()
    references = json.loads(row.refs) if isinstance(row.refs, str) else list(row.refs or [])
    pair = Pair(
        item_id,
        row.source,
        row.output,
        resolve_references(row.source, references, metric.reference_mode),
        row.system,
    )
    stored = choice.stored
    item = ExplainItem(
        pair,
        value=stored.value if stored else None,
        details=stored.details if stored else None,
        study=StudyFileInputs(study),
        source_group=row.source_group,
    )
    try:
        return metric.explain(item)
    except Exception as exc:  # a plugin's broken hook must leave the page working
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Explanation(
            NoExplanation(
                f"{choice.label} could not explain this output: {type(exc).__name__}: {exc}"
            )
        )


def source_scenes(handle: StudyHandle, source_group: str) -> list[SceneSpec]:
    """The scenes of one source, of the best origin it has (annotated, UCCA, parser)."""
    study = study_of(handle)
    from meaningbench.jobs.scene_store import load_scenes

    with study.session() as s:
        return load_scenes(s, [source_group]).get(source_group, [])
