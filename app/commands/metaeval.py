"""`meaningbench metaeval STUDY`: which metric to trust, ranked in significance clusters."""

from __future__ import annotations

import argparse
from typing import Any

from meaningbench.commands import _common as common

DEFAULT_MEASURES = "pearson,spearman,kendall_b,acc_eq_star,pdp,spa,tau_like"


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "metaeval",
        run,
        help="which metric agrees with the humans: tie-aware measures, SPA, tau-like, "
        "permutation tests and significance clusters",
        description="Meta-evaluate every metric run against one human dimension with the "
        "measures the metric literature uses now (Pearson, Spearman, Kendall τ_b/τ_c, "
        "WMT23 τ, acc_eq and tie-calibrated acc*_eq, PDP, SPA, the LENS/SimpEval "
        "tau-like), per item category if asked, and rank the metrics in significance "
        "clusters with a paired resampling test. Prints a methods paragraph.",
    )
    common.add_dimension_argument(parser)
    common.add_labels_argument(parser)
    parser.add_argument(
        "--preset",
        choices=("wmt25",),
        default=None,
        help="wmt25: the two tasks of the WMT25 metrics task (MTME's tasks.WMT25): SPA at "
        "system level, ranked by MTME's permutation test (perm-outputs), and acc*_eq per "
        "source, ranked by MTME's "
        "pairwise permutation test; both stop early as MTME does (blocks of 100, stop at "
        "p < 0.02 or p > 0.50). Sets --measures, --rank-by, --group-by and --test",
    )
    parser.add_argument(
        "--measures",
        default=DEFAULT_MEASURES,
        help=f"comma-separated measures (default: {DEFAULT_MEASURES}); also kendall_c, "
        "tau_a, tau_23, acc_eq",
    )
    parser.add_argument(
        "--rank-by",
        default=None,
        metavar="MEASURE",
        help="the measure the clusters rank by (default: the first of --measures other "
        "than spa; spa is ranked with perm-both, perm-items or perm-systems)",
    )
    add_grouping_argument(parser)
    _add_tau_like_arguments(parser)
    _add_ranking_arguments(parser)
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=None,
        help="metric names (space or comma separated; default: every metric run)",
    )
    parser.add_argument(
        "--no-stopping",
        action="store_true",
        help="leave out the stopping signal (is it time to stop rating?), which replays "
        "the ratings in the order they were given and resamples the ranking (seconds)",
    )
    common.add_json_flag(parser)


def _add_tau_like_arguments(parser: argparse.ArgumentParser) -> None:
    """Per category, and the options of the LENS/SimpEval tau-like."""
    parser.add_argument(
        "--by",
        default=None,
        metavar="ATTR",
        help="also report every measure per value of this item attribute",
    )
    parser.add_argument(
        "--pairs-within",
        default=None,
        metavar="ATTR",
        help="tau-like: compare two outputs only when they share this attribute (LENS's "
        "'All' tau compares only outputs of one sentence type: reproduce it with "
        "--pairs-within sentence_type)",
    )
    parser.add_argument(
        "--tie-threshold",
        type=float,
        default=5.0,
        help="tau-like: a rater's two ratings at most this far apart are a "
        "tie (rating-scale points; default 5)",
    )


def _add_ranking_arguments(parser: argparse.ArgumentParser) -> None:
    """The paired test between metrics and the significance clusters it makes."""
    from meaningbench.analysis.metaeval_choices import TESTS

    parser.add_argument(
        "--test",
        choices=TESTS,
        default="perm-both",
        help="paired test between metrics (default: perm-both); perm-outputs: swap each "
        "output on its own (MTME's PermutationSigDiff; not at system level but for spa); "
        "pairs: MTME's pairwise "
        "permutation test, which swaps outcomes of pairs of outputs (kendall_b, tau_a, "
        "tau_23, acc_eq, acc_eq_star)",
    )
    parser.add_argument("--resamples", type=int, default=1000, help="resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every resampling")
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level of the clusters (default 0.05)",
    )


def add_grouping_argument(parser: argparse.ArgumentParser) -> None:
    """--group-by with the one default and the one name of each grouping (the tab's and
    the report's)."""
    from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING, GROUPING_NAMES

    words = "; ".join(
        f"{key}: {name}" + (" (default)" if key == DEFAULT_GROUPING else "")
        for key, name in GROUPING_NAMES.items()
    )
    parser.add_argument(
        "--group-by", choices=tuple(GROUPING_NAMES), default=DEFAULT_GROUPING, help=words
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.metaeval import evaluate
    from meaningbench.analysis.metaeval_significance import check_resampling
    from meaningbench.analysis.metaeval_text import attach_ranking, methods_paragraph, to_json

    check_resampling(resamples=args.resamples, seed=args.seed, alpha=args.alpha)
    if args.preset == "wmt25":
        return _run_wmt25(args)
    measures, rank_by = _measures(args)
    data, machine, configs = _read_data(args)
    table = evaluate(
        data,
        measures,
        group_by=args.group_by,
        by=args.by,
        pairs_within=args.pairs_within,
        tie_threshold=args.tie_threshold,
        seed=args.seed,
    )
    ranking = _rank(args, data, rank_by, table) if rank_by is not None else None
    attach_ranking(table, ranking)
    methods = methods_paragraph(table, ranking, dimension=args.dimension, configs=configs)
    stopping = _stopping(args, ranking)
    humans = _humans(args, data, ranking)
    if args.json:
        out = to_json(table, ranking, methods, _settings(args, measures, rank_by))
        stop = None if stopping is None else stopping.to_dict()
        common.print_json(
            {**out, "stopping": stop, "machine_raters": machine, "human_rows": humans}
        )
        return 0
    _print_text(args, data, table, ranking, methods)
    _print_humans(humans, ranking)
    if stopping is not None:
        print(f"\nStopping signal: {stopping.verdict()}.")
        print(f"  {stopping.sentence()} {stopping.trend_sentence()}")
    for metric, raters in machine.items():
        print(
            f"\n{metric} is also the machine rater {', '.join(raters)} (judge --as-rater): "
            "ranked here as a metric; its ratings are not part of the human scores"
        )
    return 0


def _run_wmt25(args: argparse.Namespace) -> int:
    """Both WMT25 tasks: two rankings, one methods text naming the preset."""
    from meaningbench.analysis.metaeval import evaluate
    from meaningbench.analysis.metaeval_presets import WMT25
    from meaningbench.analysis.metaeval_significance import rank_metrics
    from meaningbench.analysis.metaeval_text import attach_ranking, methods_paragraph, to_json

    data, machine, configs = _read_data(args)
    measures = [t.measure for t in WMT25.tasks]
    table = evaluate(data, measures, group_by="item", seed=args.seed)
    rankings = [
        rank_metrics(
            data,
            task.measure,
            group_by=task.group_by,
            test=task.test,
            resamples=args.resamples,
            seed=args.seed,
            alpha=args.alpha,
            intervals=WMT25.intervals,
            early_stop=WMT25.early_stop,
            table=table,
        )
        for task in WMT25.tasks
    ]
    for r in rankings:
        attach_ranking(table, r)
    parts = [
        methods_paragraph(table, r, dimension=args.dimension, configs=configs) for r in rankings
    ]
    methods = f"Preset wmt25: {WMT25.source}.\n\n" + parts[0] + "\n\n" + parts[1].split("\n\n")[-1]
    stop = WMT25.early_stop
    settings = {
        "preset": "wmt25",
        "dimension": args.dimension,
        "measures": measures,
        "tasks": [
            {"measure": t.measure, "group_by": t.group_by, "test": t.test} for t in WMT25.tasks
        ],
        "resamples": args.resamples,
        "seed": args.seed,
        "alpha": args.alpha,
        "early_stop": None
        if stop is None
        else {"block": stop.block, "stop_below": stop.low, "stop_above": stop.high},
    }
    humans = _humans(args, data, rankings[-1])
    if args.json:
        out = to_json(table, rankings[-1], methods, settings)
        out["rankings"] = [r.to_dict() for r in rankings]
        common.print_json(
            {**out, "stopping": None, "machine_raters": machine, "human_rows": humans}
        )
        return 0
    from meaningbench.analysis.export import to_text
    from meaningbench.analysis.metaeval_choices import GROUPING_NAMES

    print(
        f"{args.dimension}: {table.n_outputs:,} outputs scored by all "
        f"{len(data.metric_names)} metrics ({table.n_left_out:,} left out); preset wmt25"
    )
    for r in rankings:
        print(
            f"\nRanking by {r.measure}, {GROUPING_NAMES[r.group_by]}, over {r.over} "
            f"({r.test}, up to {r.resamples} resamples with MTME's early stopping, "
            f"seed {r.seed}, α {r.alpha:g})"
        )
        if r.warning:
            print(f"warning: {r.warning}")
        print(to_text(_ranking_frame(r)))
    _print_humans(humans, rankings[-1])
    print("\nMethods:\n" + methods)
    return 0


def _humans(args: argparse.Namespace, data: Any, ranking: Any) -> dict[str, Any] | None:
    """The human rows of the ranking's measure (each rater against the others, and the
    one-rater baseline) with each metric's distance from it; None without a ranking."""
    if ranking is None:
        return None
    from meaningbench.analysis.metaeval_humans import human_baseline

    base = human_baseline(
        data,
        ranking.measure,
        ranking.group_by,
        tie_threshold=getattr(args, "tie_threshold", 5.0),
        seed=args.seed,
    )
    out = base.to_dict()
    out["gap_to_one_rater"] = {m: base.gap(ranking.values.get(m)) for m in ranking.order}
    return out


def _print_humans(humans: dict[str, Any] | None, ranking: Any) -> None:
    if humans is None:
        return
    if humans["not_defined"]:
        print(f"\nHuman rows: {humans['not_defined']}")
        return
    print(f"\nHuman rows ({ranking.measure}, each rater against the other raters only):")
    for row in humans["rows"]:
        value = "not defined" if row["value"] is None else f"{row['value']:.4f}"
        print(f"  [human] {row['rater']}: {value} over {row['n_outputs']} outputs")
    for metric, gap in humans["gap_to_one_rater"].items():
        if gap is not None:
            print(f"  {metric}: {gap:+.4f} from one rater")


def _stopping(args: argparse.Namespace, ranking: Any) -> Any:
    """The stopping signal on the ranking just made (None: not asked, or no ranking)."""
    if ranking is None or args.no_stopping:
        return None
    from meaningbench.analysis.metaeval_study import stopping_signal

    with common.open_existing_study(args.study, reading=True) as study:
        return stopping_signal(study, ranking, args.dimension, args.tie_threshold)


def _measures(args: argparse.Namespace) -> tuple[list[str], str | None]:
    """The measures asked for, checked, and the one the ranking is by (None: no ranking)."""
    from meaningbench.analysis.metaeval import SYSTEM_ONLY, check_measures
    from meaningbench.errors import UserError

    measures = check_measures([m.strip() for m in args.measures.split(",") if m.strip()])
    if not measures:
        raise UserError("--measures names no measure")
    rank_by = args.rank_by or next((m for m in measures if m not in SYSTEM_ONLY), None)
    if rank_by is not None:
        check_measures([rank_by])
    return measures, rank_by


def _read_data(args: argparse.Namespace) -> tuple[Any, dict[str, list[str]], dict[str, Any]]:
    """The ratings and scores to evaluate, the metrics that are also machine raters
    (`queries.raters.machine_columns`) and each metric's stored configuration; an error
    when no output has them all."""
    from meaningbench.analysis.metaeval_study import metaeval_data_from_study, metric_configs
    from meaningbench.commands._common import parse_metric_names
    from meaningbench.errors import UserError
    from meaningbench.queries.raters import machine_columns

    with common.open_existing_study(args.study, reading=True) as study:
        names = [n for n, _, _ in parse_metric_names(args.metrics, study)] if args.metrics else None
        data = metaeval_data_from_study(study, args.dimension, args.labels, names)
        machine = machine_columns(study, data.metric_names)
        configs = metric_configs(study, data.metric_names)
    if not data.metric_names:
        raise UserError(f"{args.study}: no metric scores yet; run metrics on the study first")
    if not data.common().any():
        raise UserError(
            f"{args.study}: no output has a {args.dimension!r} rating and a score of every "
            "metric; name fewer metrics with --metrics"
        )
    return data, machine, configs


def _rank(args: argparse.Namespace, data: Any, rank_by: str, table: Any) -> Any:
    from meaningbench.analysis.metaeval_significance import rank_metrics

    return rank_metrics(
        data,
        rank_by,
        group_by=args.group_by,
        test=args.test,
        resamples=args.resamples,
        seed=args.seed,
        alpha=args.alpha,
        tie_threshold=args.tie_threshold,
        pairs_within=args.pairs_within,
        table=table,
    )


def _settings(args: argparse.Namespace, measures: list[str], rank_by: str | None) -> dict[str, Any]:
    return {
        "dimension": args.dimension,
        "measures": measures,
        "rank_by": rank_by,
        "group_by": args.group_by,
        "by": args.by,
        "pairs_within": args.pairs_within,
        "tie_threshold": args.tie_threshold,
        "test": args.test,
        "resamples": args.resamples,
        "seed": args.seed,
        "alpha": args.alpha,
    }


def _print_text(
    args: argparse.Namespace, data: Any, table: Any, ranking: Any, methods: str
) -> None:
    from meaningbench.analysis.export import to_text
    from meaningbench.analysis.metaeval_choices import GROUPING_NAMES
    from meaningbench.analysis.metaeval_significance import CLUSTER_MEANING
    from meaningbench.analysis.metaeval_text import overview_frame

    print(
        f"{args.dimension}: {table.n_outputs:,} outputs scored by all "
        f"{len(data.metric_names)} metrics ({table.n_left_out:,} left out); "
        f"grouping: {GROUPING_NAMES[args.group_by]} (--group-by {args.group_by})"
    )
    if ranking is not None:
        print(
            f"\nRanking by {ranking.measure}, {GROUPING_NAMES[ranking.group_by]}, over "
            f"{ranking.over} ({ranking.test}, {ranking.resamples} resamples, "
            f"seed {ranking.seed}, α {ranking.alpha:g})"
        )
        if ranking.warning:
            print(f"warning: {ranking.warning}")
        print(to_text(_ranking_frame(ranking)))
        print(CLUSTER_MEANING)
    print("\nAll measures")
    print(to_text(overview_frame(table)))
    reasons = {(v.measure, v.reason) for v in table.values if v.reason and not v.category}
    for measure, why in sorted(reasons):
        print(f"  {measure}: {why}")
    cats = sorted({v.category for v in table.values if v.category})
    for c in cats:
        print(f"\n{args.by} = {c}")
        print(to_text(overview_frame(table, c)))
    print("\nMethods:\n" + methods)


def _ranking_frame(ranking: Any) -> Any:
    """The ranking as a table: clusters in order, then the metrics left out and why."""
    import pandas as pd

    rows = []
    for m in ranking.order:
        lo_hi = ranking.intervals.get(m)
        rows.append(
            {
                "cluster": ranking.clusters[m],
                "metric": m,
                "value": round(float(ranking.values[m] or 0.0), 4),
                "95% interval": f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]" if lo_hi else "",
            }
        )
    for m, why in ranking.reasons.items():
        rows.append({"cluster": "", "metric": m, "value": why, "95% interval": ""})
    return pd.DataFrame(rows).set_index("cluster")
