"""`meaningbench correlate STUDY`: every metric run against the human ratings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "correlate",
        run,
        help="correlate every metric run with the human ratings (Pearson, Spearman, Kendall, ...)",
        description="Pearson, Spearman and Kendall with p-values, R² and RMSE of the 0–100 "
        "value as a prediction of the rating, bootstrap 95%% intervals and the system-level "
        "correlation, for every metric run of the study against one human dimension.",
    )
    common.add_dimension_argument(parser)
    common.add_labels_argument(parser)
    parser.add_argument(
        "--dataset", default=None, help="only the items of this dataset (default: every item)"
    )
    parser.add_argument(
        "--z",
        action="store_true",
        help="correlate with per-annotator z-scores, not raw means (anonymous ratings have "
        "no annotator to standardise by: items rated only anonymously are left out)",
    )
    parser.add_argument(
        "--weighted-raters",
        action="store_true",
        help="weight each named rater's ratings by their rater-quality weight (see "
        "`meaningbench raters`) when averaging an item's raters",
    )
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (0: none)")
    parser.add_argument(
        "--groups",
        choices=("items", "sources"),
        default="items",
        help="what the bootstrap resamples: items, or whole source groups",
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--csv", type=Path, default=None, help="also write the table as CSV")
    parser.add_argument("--latex", type=Path, default=None, help="also write the table as LaTeX")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from meaningbench.analysis.export import to_csv, to_latex, to_text
    from meaningbench.analysis.live import StudyAnalysis
    from meaningbench.errors import UserError

    if args.boot < 0:
        raise UserError("--boot must be 0 or more")
    with common.open_existing_study(args.study, reading=True) as study:
        analysis = StudyAnalysis.from_study(
            study, args.dimension, args.labels, dataset=args.dataset
        )
        if args.weighted_raters:
            from meaningbench.analysis.rater_checks import study_rater_checks

            checks = study_rater_checks(study, args.dimension)
            weights = {c.rater: c.weight for c in checks if not c.machine}
            analysis.data.ratings.rater_weights = weights
    if not analysis.metric_names:
        raise UserError(f"{args.study}: no metric scores yet; run metrics on the study first")
    if not analysis.data.ratings.arrays()[0].size:
        raise UserError(f"{args.study}: no {args.dimension!r} ratings of regular items")
    scores = analysis.data.ratings.scores()
    without_z = int((np.isfinite(scores.raw) & ~np.isfinite(scores.z)).sum())
    if args.z and without_z and not np.isfinite(scores.z).any():
        raise UserError(
            f"{args.study}: no item has a z-score: its {without_z:,} rated items have only "
            "anonymous ratings, and z-scores need to know whose ratings are whose; "
            "correlate the raw means (without --z)"
        )
    table = analysis.correlations(z=args.z, n_boot=args.boot, seed=args.seed, groups=args.groups)
    if args.z:
        table.extra["n_without_z"] = without_z
    table.extra["label_sets"] = analysis.data.label_sets
    if args.dataset:
        table.extra["dataset"] = args.dataset
    if args.weighted_raters:
        table.extra["rater_weights"] = analysis.data.ratings.rater_weights
    if args.csv:
        to_csv(table, args.csv)
    if args.latex:
        to_latex(table, args.latex, caption=f"Correlation with human {args.dimension} ratings")
    if args.json:
        common.print_json(table.to_json())
        return 0
    scale = "z-scores" if args.z else "raw means"
    print(
        f"{args.dimension} ({scale}), {table.n_items} rated items; "
        f"{args.boot} resamples of {table.unit}; labels: "
        f"{', '.join(analysis.data.label_sets or []) or 'none'}"
    )
    if args.z and without_z:
        print(
            f"{without_z:,} items rated only anonymously have no z-score and are left out",
            file=sys.stderr,
        )
    print(to_text(table.latex_frame()))
    return 0
