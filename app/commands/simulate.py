"""`meaningbench simulate STUDY`: how early each selection strategy settles the metric ranking."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.commands.metaeval import add_grouping_argument
from meaningbench.commands.protocol import SELECTIONS


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "simulate",
        run,
        help="replay the study's ratings in a selection strategy's order: how soon the "
        "ranking of metrics settles, against random order",
        description="Replay the study's existing ratings in the order a selection strategy "
        "(see `protocol --selection`) would have asked for them, and after every --step % "
        "of the ratings rank the metrics as `metaeval` does (Pearson over all outputs, "
        "clusters by PERM-BOTH) against the ranking on all the data: Kendall's τ between "
        "the rankings and whether the top cluster is the same. Reports, per strategy and "
        "over --seeds seeds, the share of the ratings from which τ ≥ 0.9 and the top "
        "cluster stay the same, beside random order's, and the field's protocol "
        "(subset2evaluate: Kendall's τ averaged over budgets of 5–50 % of the items, and "
        "parity, the share of random's data a strategy needs for random's accuracy). "
        "--target systems ranks the study's systems by their mean human score instead, by "
        "the field's protocol. Uses no rating to choose items.",
    )
    common.add_dimension_argument(parser)
    common.add_labels_argument(parser)
    _add_replay_arguments(parser)
    _add_ranking_arguments(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the plot of τ over the budget: .svg or .png",
    )
    common.add_json_flag(parser)


def _add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    """Which orders are replayed, for which target, over how many seeds and steps."""
    parser.add_argument(
        "--selection",
        default="disagreement,variance,diversity,mix,balanced",
        help="comma-separated strategies to compare with random (default: all of "
        f"{', '.join(s for s in SELECTIONS if s != 'random')}); random is always included",
    )
    parser.add_argument(
        "--target",
        choices=("metrics", "systems"),
        default="metrics",
        help="what the ratings rank: the metrics (default; by the settle criterion and the "
        "field's protocol) or the study's systems by their mean human score (the field's "
        "protocol; needs three systems or more)",
    )
    parser.add_argument("--seeds", type=int, default=20, help="seeds per strategy (default 20)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="also replay each strategy as a campaign of this many rounds of kits with "
        "adaptive top-up (`kit --top-up --adaptive`): the first round the strategy's own "
        "order, each later one chosen from the ratings of the rounds before, half of the "
        "items in all; rows named STRATEGY+top-up (default 0: none)",
    )
    parser.add_argument(
        "--step",
        type=float,
        default=5.0,
        help="budget step, in %% of the study's ratings (default 5)",
    )
    parser.add_argument(
        "--compare-subset2evaluate",
        action="store_true",
        help="also run subset2evaluate's own methods (metric_var, metric_cons, diversity by "
        "unigram and BLEU, pyirt_diffdisc where py-irt runs) on the same study, metrics and "
        "seeds, as rows marked 's2e'; needs the package: "
        "pip install subset2evaluate==1.0.27 --no-deps",
    )
    parser.add_argument(
        "--baseline-metric",
        default=None,
        help="the metric subset2evaluate's metric_var, metric_cons and pyirt_diffdisc read "
        "(default: the first candidate metric)",
    )


def _add_ranking_arguments(parser: argparse.ArgumentParser) -> None:
    """What is ranked, by which measure, and how its clusters are tested."""
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=None,
        help="the candidate metrics: ranked, and read by the strategies (default: every "
        "metric run)",
    )
    parser.add_argument(
        "--measure",
        default="pearson",
        help="the measure the metrics are ranked by (default pearson; any of `metaeval`'s)",
    )
    add_grouping_argument(parser)
    parser.add_argument(
        "--resamples",
        type=int,
        default=200,
        help="PERM-BOTH resamples per ranking (default 200: a simulation ranks "
        "steps × seeds × strategies times)",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level of the clusters"
    )


def _plot_suffix(out: Path | None) -> str:
    """The plot's kind (.svg or .png; "" without --out), checked before any work is done."""
    from meaningbench.errors import UserError

    if out is None:
        return ""
    suffix = out.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise UserError(f"--out {out}: write the plot as .svg or .png")
    if suffix == ".png":
        from meaningbench.desktop import require_app

        # Qt draws the PNG: said before the simulation runs, not after.
        require_app(f"--out {out}: a PNG plot (an .svg one needs nothing more)", ("PySide6",))
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"--out {out}: no folder {folder} to write the plot into")
    return suffix


def _checked(args: argparse.Namespace) -> tuple[list[str], str]:
    """The strategies and the plot's kind, every option checked before any work is done."""
    from meaningbench.analysis.selection_sim import check_options
    from meaningbench.errors import UserError

    strategies = [s.strip() for s in args.selection.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in SELECTIONS]
    if unknown:
        raise UserError(
            f"--selection: unknown strategy {unknown[0]!r}; choose from {', '.join(SELECTIONS)}"
        )
    check_options(
        seeds=args.seeds,
        step=args.step,
        resamples=args.resamples,
        alpha=args.alpha,
        rounds=args.rounds,
    )
    suffix = _plot_suffix(args.out)
    if args.baseline_metric is not None and not args.compare_subset2evaluate:
        raise UserError("--baseline-metric is read only with --compare-subset2evaluate")
    if args.compare_subset2evaluate:
        from meaningbench.analysis.selection_baselines import require_subset2evaluate

        require_subset2evaluate()  # named before any work, and nothing else runs
    return strategies, suffix


def _write_plot(svg: str, out: Path, suffix: str) -> None:
    with common.writing_output(out):
        if suffix == ".png":
            from meaningbench.ui.svg_image import write_png

            write_png(svg, out)
        else:
            from meaningbench.core.atomic_file import write_text_atomically

            write_text_atomically(out, svg)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.selection_sim import (
        plot_field_svg,
        plot_svg,
        simulate_study,
        simulate_study_systems,
        summary_lines,
    )
    from meaningbench.commands._common import parse_metric_names
    from meaningbench.jobs.terminal import run_with_progress_bar

    strategies, suffix = _checked(args)

    def job(ctx: Any) -> Any:
        with common.open_existing_study(args.study, reading=True) as study:
            names = None
            if args.metrics:
                names = [n for n, _, _ in parse_metric_names(args.metrics, study)]
            baseline = args.baseline_metric
            if baseline is not None:
                # Written as a user writes it ("chrf"), read as the study stores it.
                baseline = parse_metric_names([baseline], study)[0][0]
            baselines = dict(
                compare_subset2evaluate=args.compare_subset2evaluate,
                baseline_metric=baseline,
                rounds=args.rounds,
            )
            if args.target == "systems":
                return simulate_study_systems(
                    study,
                    strategies,
                    dimension=args.dimension,
                    labels=args.labels,
                    metrics=names,
                    seeds=args.seeds,
                    step=args.step,
                    check=ctx.check,
                    **baselines,
                )
            return simulate_study(
                study,
                strategies,
                dimension=args.dimension,
                labels=args.labels,
                metrics=names,
                seeds=args.seeds,
                step=args.step,
                measure=args.measure,
                group_by=args.group_by,
                resamples=args.resamples,
                alpha=args.alpha,
                progress=lambda done, total: ctx.progress(done, total, "replaying"),
                check=ctx.check,
                **baselines,
            )

    sim = run_with_progress_bar(job, description="simulate", quiet=args.json)
    systems = args.target == "systems"
    if args.out is not None:
        title = Path(args.study).stem
        svg = plot_field_svg(sim.field, title=title) if systems else plot_svg(sim, title=title)
        _write_plot(svg, args.out, suffix)
    if args.json:
        common.print_json(sim.to_dict())
        return 0
    print("\n".join(sim.lines() if systems else summary_lines(sim)))
    if args.out is not None:
        print(f"plot: {args.out}")
    return 0
