"""Result objects as the dashboard's tables show them (exports use the objects themselves).

The display frames pick, order and name columns for reading on screen; CSV and LaTeX
exports go through `meaningbench.analysis.export` with the full result objects, so a file holds
every column at full precision.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from meaningbench.queries.dashboard import (
    IDENTICAL_THRESHOLDS,
    UNRELATED_THRESHOLDS,
    AgreementResult,
    CorrelationTable,
    QCResult,
    SanityTable,
)
from meaningbench.ui.dashboard.tables import Fmt


def _interval(low: float, high: float) -> str:
    if np.isfinite(low) and np.isfinite(high):
        return f"[{low:.3f}, {high:.3f}]"
    return "–"


def statistics_display(
    table: CorrelationTable, order: list[str] | None = None
) -> tuple[pd.DataFrame, dict[str, Fmt]]:
    pct = round(100 * table.confidence)
    rows = {}
    for name in order or list(table.results):
        r = table.results.get(name)
        if r is None:
            continue
        rows[name] = {
            "n": r.n,
            "pearson": r.pearson,
            "pearson_ci": _interval(*r.pearson_ci),
            "pearson_p": r.pearson_p,
            "spearman": r.spearman,
            "spearman_ci": _interval(*r.spearman_ci),
            "spearman_p": r.spearman_p,
            "kendall": r.kendall,
            "kendall_p": r.kendall_p,
            "r2": r.r2,
            "rmse": r.rmse,
            "system_pearson": r.system_pearson,
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "metric"
    formats = {
        "n": Fmt("int"),
        "pearson": Fmt(label="Pearson r"),
        "pearson_ci": Fmt("num", label=f"{pct}% CI"),
        "pearson_p": Fmt("p", label="p"),
        "spearman": Fmt(label="Spearman ρ"),
        "spearman_ci": Fmt("num", label=f"{pct}% CI"),
        "spearman_p": Fmt("p", label="p"),
        "kendall": Fmt(label="Kendall τ"),
        "kendall_p": Fmt("p", label="p"),
        "r2": Fmt(label="R²"),
        "rmse": Fmt(digits=2, label="RMSE"),
        "system_pearson": Fmt(label="System r"),
    }
    return frame, formats


SANITY_BANDS_TEXT = ("Identical pairs (s, s)", "Unrelated pairs (s, u)")


def sanity_display(
    table: SanityTable,
) -> tuple[pd.DataFrame, dict[str, Fmt], list[tuple[int, int, str]]]:
    """The MeaningBERT study's layout: thresholds as columns, grouped by kind of pair."""
    frame = table.to_frame()
    formats: dict[str, Fmt] = {}
    for t in IDENTICAL_THRESHOLDS:
        col = "identical =100" if t == 100 else f"identical ≥{t}"
        formats[col] = Fmt("percent", 1, "=100" if t == 100 else f"≥{t}")
    for t in UNRELATED_THRESHOLDS:
        col = "unrelated =0" if t == 0 else f"unrelated ≤{t}"
        formats[col] = Fmt("percent", 1, "=0" if t == 0 else f"≤{t}")
    formats["n"] = Fmt("int", label="pairs")
    columns = [c for c in formats if c in frame.columns]
    frame = frame[columns] if len(frame) else pd.DataFrame(columns=columns)
    frame.index.name = "metric"
    n_id, n_un = len(IDENTICAL_THRESHOLDS), len(UNRELATED_THRESHOLDS)
    bands = [(1, n_id, SANITY_BANDS_TEXT[0]), (n_id + 1, n_id + n_un, SANITY_BANDS_TEXT[1])]
    return frame, formats, bands


def agreement_display(result: AgreementResult) -> tuple[pd.DataFrame, dict[str, Fmt]]:
    frame = result.summary_frame()
    return frame, {"value": Fmt("auto")}


def loo_display(result: AgreementResult) -> tuple[pd.DataFrame, dict[str, Fmt]]:
    frame = result.annotators_frame()
    return frame, {"r": Fmt(label="r with the others' mean"), "n": Fmt("int", label="items")}


def qc_display(result: QCResult) -> tuple[pd.DataFrame, dict[str, Fmt]]:
    full = result.to_frame()
    frame = pd.DataFrame(index=full.index)
    frame.index.name = "annotator"
    if len(full):
        frame["status"] = full["status"]
        frame["appraise_p"] = full["appraise_p"]
        frame["degraded_pairs"] = full["degraded_pairs"]
        frame["identical_mean"] = full["identical_mean"]
        frame["unrelated_mean"] = full["unrelated_mean"]
        frame["repeat_mad"] = full["repeat_mad"]
        frame["median_s"] = pd.to_numeric(full["median_ms"], errors="coerce") / 1000.0
        frame["fast_share"] = full["fast_share"]
        frame["n_ratings"] = full["n_ratings"]
    formats = {
        "status": Fmt("status", label="Appraise test"),
        "appraise_p": Fmt("p", label="p"),
        "degraded_pairs": Fmt("int", label="degraded pairs"),
        "identical_mean": Fmt(digits=1, label="identical mean"),
        "unrelated_mean": Fmt(digits=1, label="unrelated mean"),
        "repeat_mad": Fmt(digits=1, label="repeat |Δ|"),
        "median_s": Fmt(digits=1, label="median time (s)"),
        "fast_share": Fmt("percent", 0, label=f"under {result.fast_ms / 1000:g} s"),
        "n_ratings": Fmt("int", label="ratings"),
    }
    return frame, formats


def machine_display(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Fmt]]:
    """The machine raters' table (`queries.raters.machine_raters_frame`)."""
    return frame, {
        "ratings": Fmt("int", label="ratings"),
        "r": Fmt(label="r with the raters' mean"),
        "n": Fmt("int", label="items"),
        "alpha_with": Fmt(label="α with it"),
        "alpha_without": Fmt(label="α without it"),
        "identical_pass": Fmt("percent", 0, label="identical passed"),
        "unrelated_pass": Fmt("percent", 0, label="unrelated passed"),
    }
