"""The study as one self-contained HTML file: summary, correlations, sanity, agreement, QC.

`ReportData` holds results already computed (the dashboard passes its own), `render_html`
turns them into HTML with inline CSS and hand-written SVG charts (no external assets, no
scripts), and `build_report` computes everything from a study file for the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench import __version__
from meaningbench.analysis.agreement import AgreementResult, ratings_agreement
from meaningbench.analysis.audit import AuditResult
from meaningbench.analysis.audit_report import audit_section
from meaningbench.analysis.correlation import CorrelationTable
from meaningbench.analysis.html_table import html_table
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.metaeval import MetaEvalTable
from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING
from meaningbench.analysis.metaeval_humans import HumanBaseline
from meaningbench.analysis.metaeval_report import CorrelationView, which_metric_section
from meaningbench.analysis.metaeval_significance import Ranking
from meaningbench.analysis.metaeval_stability import Stability
from meaningbench.analysis.qc import QCResult, study_qc
from meaningbench.analysis.sanity import SanityTable, study_sanity
from meaningbench.analysis.selection_report import selection_section
from meaningbench.analysis.selection_sim import SIMULATED, Simulation, simulate_study
from meaningbench.analysis.svg import bar_chart, scatter
from meaningbench.core.atomic_file import write_text_atomically
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, Dataset, Item, MetricRun, Rating
from meaningbench.db.study import Study
from meaningbench.runtime import CancelToken

CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}
.note{color:#555;font-size:.9em}.fail{color:#b00}.pass{color:#070}
.charts{display:flex;flex-wrap:wrap;gap:1em}
tr.human td{font-style:italic;color:#555}
"""


@dataclass
class ReportData:
    title: str
    summary: dict[str, Any]
    correlations: CorrelationTable | None = None
    scatter_column: str | None = None
    scatter_x: np.ndarray | None = None
    scatter_y: np.ndarray | None = None
    sanity: SanityTable | None = None
    agreement: AgreementResult | None = None
    qc: QCResult | None = None
    williams: pd.DataFrame | None = None
    audit: AuditResult | None = None
    label_sets: list[str] | None = None  # the aggregate label sets the figures read
    metaeval: MetaEvalTable | None = None
    ranking: Ranking | None = None
    # The ranking's human rows (each rater against the others), or why there are none.
    humans: HumanBaseline | None = None
    metaeval_note: str | None = None  # why there is no "Which metric" table
    # Each metric's configuration, for the methods (`metaeval_study.metric_configs`).
    metaeval_configs: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    stopping: Stability | None = None  # is it time to stop rating (with the ranking)
    selection: Simulation | None = None  # the selection strategies replayed (opt-in)
    dimension: str = "meaning"
    notes: list[str] = field(default_factory=list)


def _correlation_section(data: ReportData) -> str:
    table = data.correlations
    if table is None or not table.results:
        return "<h2>Correlation with human ratings</h2><p>No metric scores or no ratings.</p>"
    frame = table.latex_frame()
    frame["Pearson p"] = [r.pearson_p for r in table.results.values()]
    frame["Kendall p"] = [r.kendall_p for r in table.results.values()]
    order = table.sorted_by("pearson")
    res = table.results
    chart = bar_chart(
        order,
        [res[k].pearson for k in order],
        [res[k].pearson_ci[0] for k in order],
        [res[k].pearson_ci[1] for k in order],
        title="Pearson r with 95% interval",
    )
    chart_s = bar_chart(
        table.sorted_by("spearman"),
        [res[k].spearman for k in table.sorted_by("spearman")],
        [res[k].spearman_ci[0] for k in table.sorted_by("spearman")],
        [res[k].spearman_ci[1] for k in table.sorted_by("spearman")],
        title="Spearman ρ with 95% interval",
    )
    scale = "per-annotator z-scores" if table.z else "raw mean ratings"
    parts = [
        "<h2>Correlation with human ratings</h2>",
        f"<p class='note'>Dimension <b>{escape(table.dimension)}</b> on {scale}, "
        f"{table.n_items} rated items. Intervals: percentile bootstrap, {table.n_boot} "
        f"resamples of {escape(table.unit)} (Spearman: {escape(table.spearman_ci_method)}). "
        "R² and RMSE take the 0–100 metric value as the prediction of the rating, without "
        "fitting, so R² is negative for a metric worse than the ratings' mean.</p>",
        html_table(frame.loc[order]),
        f"<div class='charts'>{chart}{chart_s}</div>",
    ]
    if data.scatter_column and data.scatter_x is not None and data.scatter_y is not None:
        parts.append(
            scatter(
                data.scatter_x,
                data.scatter_y,
                title=f"{data.scatter_column} against the human scores",
                x_label=data.scatter_column,
                y_label="human",
            )
        )
    if data.williams is not None and 1 < len(data.williams) <= 30:
        parts.append(
            "<h3>Williams' test</h3><p class='note'>One-sided p that the row metric "
            "correlates better (Pearson) than the column metric.</p>"
        )
        parts.append(html_table(data.williams.loc[order, order]))
    return "".join(parts)


def _sanity_section(data: ReportData) -> str:
    if data.sanity is None:
        return ""
    if not data.sanity.results:
        return "<h2>Sanity checks</h2><p>No metrics checked.</p>"
    frame = data.sanity.to_frame()
    any_result = next(iter(data.sanity.results.values()))
    notes = [f"{escape(k)}: {escape(v.error)}" for k, v in data.sanity.results.items() if v.error]
    return (
        "<h2>Sanity checks</h2><p class='note'>Share of identical pairs (s, s) with "
        "round(score) ≥ X or = 100, and of unrelated pairs with round(score) ≤ X or = 0 "
        f"(unrelated texts: {escape(any_result.unrelated_mode)}).</p>"
        + html_table(frame, digits=2)
        + "".join(f"<p class='note'>{n}</p>" for n in notes)
    )


def _agreement_section(data: ReportData) -> str:
    a = data.agreement
    if a is None:
        return ""
    parts = ["<h2>Agreement</h2>", html_table(a.summary_frame())]
    if a.loo:
        parts.append(html_table(a.annotators_frame()))
    if a.not_shown:
        items = "".join(
            f"<li>{escape(name)}: {escape(why)}</li>" for name, why in a.not_shown.items()
        )
        parts.append(
            f"<p class='note'>{a.n_anonymous:,} ratings have no rater id, so estimators that "
            f"need rater identity are not shown:</p><ul>{items}</ul>"
        )
    if a.reliability_basis:
        parts.append(
            "<p class='note'>Human ceiling = √reliability, with the reliability of the item "
            f"score from {escape(a.reliability_basis)}: a metric's correlation with the human "
            "scores cannot be expected above it.</p>"
        )
    return "".join(parts)


def _qc_section(data: ReportData) -> str:
    q = data.qc
    if q is None:
        return ""
    if not q.raters:
        a = data.agreement
        if a is not None and a.n_anonymous:
            return (
                "<h2>Rater quality control</h2><p>Rater QC tests one named annotator's "
                "ratings; the ratings here have no rater ids.</p>"
            )
        return "<h2>Rater quality control</h2><p>No human ratings.</p>"
    frame = q.to_frame()
    classes = {name: r.status for name, r in q.raters.items() if r.passed is not None}
    return (
        "<h2>Rater quality control</h2><p class='note'>Appraise's test: z-scores, degraded "
        "controls paired with their originals, one-sided Mann–Whitney U (degraded lower), "
        f"p &lt; {q.p_threshold} passes. Very fast: under {q.fast_ms} ms.</p>"
        + html_table(frame, classes={k: v for k, v in classes.items() if v != "n/a"})
    )


def render_html(data: ReportData) -> str:
    summary = pd.DataFrame({"value": data.summary})
    summary.index.name = "study"
    body = [
        f"<h1>{escape(data.title)}</h1>",
        f"<p class='note'>MeaningBench {escape(__version__)}, "
        f"{datetime.now().strftime('%Y-%m-%d %H:%M')}</p>",
        "<h2>Study</h2>",
        html_table(summary, digits=0),
        _correlation_section(data),
        which_metric_section(
            data.metaeval,
            data.ranking,
            dimension=data.dimension,
            note=data.metaeval_note,
            configs=data.metaeval_configs,
            stopping=data.stopping,
            correlations=_correlation_table_view(data.correlations),
            humans=data.humans,
        ),
        selection_section(data.selection),
        audit_section(data.audit, data.label_sets),
        _sanity_section(data),
        _agreement_section(data),
        _qc_section(data),
        *(f"<p class='note'>{escape(n)}</p>" for n in data.notes),
    ]
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(data.title)}</title><style>{CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


def study_summary(session: Session) -> dict[str, Any]:
    def count(stmt: Any) -> int:
        return int(session.scalar(stmt) or 0)

    out: dict[str, Any] = {
        "datasets": count(select(func.count(Dataset.id))),
        "regular items": count(select(func.count(Item.id)).where(Item.kind == "regular")),
        "control items": count(select(func.count(Item.id)).where(Item.kind != "regular")),
        "systems": count(select(func.count(func.distinct(Item.system)))),
        "source groups": count(select(func.count(func.distinct(Item.source_group)))),
        "named annotators": count(
            select(func.count(Annotator.id)).where(Annotator.kind == "named")
        ),
        "anonymous ratings": count(
            select(func.count(Rating.id))
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .where(Annotator.kind == "anonymous", is_current())
        ),
        "aggregate label sources": count(
            select(func.count(Annotator.id)).where(Annotator.kind == "aggregate")
        ),
        "current ratings": count(select(func.count(Rating.id)).where(is_current())),
        "metric runs": count(select(func.count(MetricRun.id))),
    }
    return out


def build_report(
    study: Study,
    *,
    dimension: str = "meaning",
    z: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    groups: str = "items",
    sanity: bool = True,
    sanity_metrics: list[tuple[str, str, dict[str, Any]]] | None = None,
    sanity_n: int | None = 200,
    unrelated: str = "wordsoup",
    cancel: CancelToken | None = None,
    labels: str | None = None,
    group_by: str = DEFAULT_GROUPING,
    by: str | None = None,
    selection_seeds: int = 0,
) -> ReportData:
    """`selection_seeds` > 0 adds the selection strategies replayed with that many seeds."""
    with study.session() as session:
        summary = study_summary(session)
    analysis = StudyAnalysis.from_study(study, dimension, labels)
    table = analysis.correlations(z=z, n_boot=n_boot, seed=seed, groups=groups)
    data = ReportData(title=f"MeaningBench report: {Path(study.path).name}", summary=summary)
    data.correlations = table
    ranked = [k for k in table.sorted_by("pearson") if np.isfinite(table.results[k].pearson)]
    if ranked:
        best = analysis.scatter(ranked[0], z=z)
        data.scatter_column = ranked[0]
        data.scatter_x = best["metric"].to_numpy()
        data.scatter_y = best["human"].to_numpy()
        data.williams = analysis.williams(z=z)
    data.label_sets = analysis.data.label_sets
    data.dimension = dimension
    add_which_metric(data, study, dimension, labels, group_by, by, n_boot, seed)
    if selection_seeds > 0 and data.metaeval is not None:
        data.selection = simulate_study(
            study, SIMULATED, dimension=dimension, labels=labels, seeds=selection_seeds
        )
    data.audit = _audit(study)
    data.agreement = ratings_agreement(analysis.data.ratings, seed=seed)
    data.qc = study_qc(study, dimension)
    if sanity:
        data.sanity = study_sanity(
            study, sanity_metrics, unrelated=unrelated, n=sanity_n, seed=seed, cancel=cancel
        )
    return data


def add_which_metric(
    data: ReportData,
    study: Study,
    dimension: str,
    labels: str | None,
    group_by: str,
    by: str | None,
    n_boot: int,
    seed: int,
) -> None:
    """The default measures, ranked by Pearson with PERM-BOTH (`n_boot` resamples)."""
    from meaningbench.analysis.metaeval import DEFAULT_MEASURES, evaluate
    from meaningbench.analysis.metaeval_humans import human_baseline
    from meaningbench.analysis.metaeval_significance import rank_metrics
    from meaningbench.analysis.metaeval_study import (
        metaeval_data_from_study,
        metric_configs,
        stopping_signal,
    )
    from meaningbench.analysis.metaeval_text import attach_ranking

    meta = metaeval_data_from_study(study, dimension, labels)
    if not meta.metric_names or not meta.common().any():
        data.metaeval_note = "No output has a rating and a score of every metric."
        return
    data.metaeval = evaluate(meta, DEFAULT_MEASURES, group_by=group_by, by=by, seed=seed)
    data.metaeval_configs = metric_configs(study, meta.metric_names)
    if n_boot > 0:
        data.ranking = rank_metrics(
            meta, "pearson", group_by=group_by, test="perm-both", resamples=n_boot, seed=seed
        )
        attach_ranking(data.metaeval, data.ranking)
        data.humans = human_baseline(meta, "pearson", data.ranking.group_by, seed=seed)
        data.stopping = stopping_signal(study, data.ranking, dimension)


def _correlation_table_view(table: CorrelationTable | None) -> CorrelationView | None:
    """What the correlation table correlates, for the Which metric section to compare."""
    if table is None or not table.results:
        return None
    pearson = {k: float(r.pearson) for k, r in table.results.items()}
    return CorrelationView(pearson=pearson, z=bool(table.z))


def _audit(study: Study) -> AuditResult | None:
    """The label audit when the study has both labels and raw ratings of the same pairs."""
    from meaningbench.analysis.audit import audit_study
    from meaningbench.errors import UserError

    with study.session() as session:
        try:
            result = audit_study(session)
        except UserError:  # no aggregate labels: nothing to audit
            return None
    return result if result.groups else None


def write_report(data: ReportData, path: str | Path) -> Path:
    path = Path(path)
    write_text_atomically(path, render_html(data))  # a failure leaves the old page whole
    return path
