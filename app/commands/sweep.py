"""`meaningbench sweep STUDY`: which encoder, which layer, idf or not — scored and compared.

Every configuration (model × metric × layer × idf corpus × rescaling) is scored as an
ordinary metric run (a sweep over all layers of a model encodes each text once), then
correlated with the human ratings: one table row per configuration, the best marked and
tested against the runner-up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.settings import DEFAULT_ENCODER, DEVICE_CHOICES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "sweep",
        run,
        help="score BERTScore / SBERT cosine over models × layers × idf × rescaling and "
        "compare them against the human ratings",
        description="Score every configuration of a model/layer sweep as an ordinary metric "
        "run (each text is encoded once for all layers of a model; runs stored before are "
        "reused) and print one row per configuration: Pearson, Spearman and Kendall with "
        "bootstrap intervals, RMSE and MAE on a common 0–1 scale, the best configuration "
        "marked and tested against the runner-up (Williams test, paired bootstrap).",
    )
    parser.add_argument(
        "--models",
        default=DEFAULT_ENCODER,
        help=f"comma-separated models: Hugging Face ids or local folders (default: "
        f"{DEFAULT_ENCODER}, the bundled MiniLM)",
    )
    parser.add_argument(
        "--layers",
        default="all",
        help="all (1 to the last), a range such as 1-6, a list such as 2,4, or a mix; "
        "0 is the embedding layer (default: all)",
    )
    parser.add_argument(
        "--idf",
        default="none",
        help="BERTScore idf weights: none, sources, references, outputs, or a text file "
        "with one document per line; a comma list gives one variant each (e.g. none,sources)",
    )
    parser.add_argument(
        "--rescale",
        default="off",
        help="BERTScore baseline rescaling: on, off, or on,off for both (a layer without a "
        "baseline is listed as such; `meaningbench baseline` computes one)",
    )
    parser.add_argument(
        "--metrics",
        default="bertscore",
        help="comma-separated: bertscore, sbert_cosine (default: bertscore)",
    )
    parser.add_argument(
        "--reference-mode",
        choices=("source", "references"),
        default=None,
        help="BERTScore compares outputs with the source (default) or the human references",
    )
    common.add_dimension_argument(parser)
    common.add_labels_argument(parser)
    parser.add_argument(
        "--rank-by",
        choices=("pearson", "spearman"),
        default="pearson",
        help="the correlation that picks the best configuration (default: pearson)",
    )
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="also write the table: .csv, or .json (rows, the best-vs-runner-up test)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_json_flag(parser)


def request_from_args(args: argparse.Namespace) -> Any:
    from meaningbench.jobs.sweep_plan import SweepRequest, parse_rescale, split_list

    options = {
        "device": args.device,
        "batch_size": args.batch_size,
        "reference_mode": args.reference_mode,
    }
    return SweepRequest(
        study_path=args.study,
        models=split_list(args.models),
        layers=args.layers,
        idf=split_list(args.idf),
        rescale=parse_rescale(split_list(args.rescale)),
        metrics=split_list(args.metrics),
        options={k: v for k, v in options.items() if v is not None},
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import InputError
    from meaningbench.jobs.sweep_plan import plan_sweep
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.sweep import sweep_job

    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if args.boot < 0:
        raise InputError("--boot must be 0 or more")
    if args.out is not None and args.out.suffix.lower() not in (".csv", ".json"):
        raise InputError(f"--out {args.out}: write a .csv or a .json file")
    common.open_existing_study(args.study).close()
    request = request_from_args(args)
    plan_sweep(request)  # bad options fail here, before a progress bar
    table = run_with_progress_bar(
        lambda ctx: (
            sweep_job(
                ctx,
                request,
                args.dimension,
                args.boot,
                args.rank_by,
                labels=args.labels,
                seed=args.seed,
            ).value
        ),
        description="Sweep",
        quiet=args.quiet or args.json,
    )
    # The runs' statuses are the screen's; the command says a cancel in its exit status.
    statuses = table.extra.pop("statuses")
    cancelled = "cancelled" in statuses.values()
    if args.out is not None:
        _write(table, args.out)
    if args.json:
        common.print_json({"study": str(args.study), **table.to_json()})
    else:
        from meaningbench.analysis.sweep_text import table_text

        print(table_text(table))
    if cancelled:
        print("meaningbench sweep: cancelled; finished runs were kept", file=sys.stderr)
        return 130
    return 0


def _write(table: Any, path: Path) -> None:
    import json

    from meaningbench.core.atomic_file import write_text_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        text = table.to_frame().to_csv(index=False, lineterminator="\n")
    else:
        text = json.dumps(table.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_text_atomically(path, text)
