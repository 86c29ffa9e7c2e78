"""`meaningbench baseline`: compute a BERTScore rescaling baseline for a model."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "baseline",
        run,
        study=False,
        help="compute a BERTScore rescaling baseline for a model",
        description="Compute the mean BERTScore P/R/F of shuffled unrelated sentence pairs "
        "for a model and store it as the model's baseline file (used by --rescale).",
    )
    parser.add_argument(
        "--model", default=None, help="HF id or local directory (default: the embedded MiniLM)"
    )
    parser.add_argument(
        "--layer", type=int, action="append", help="layer to compute (repeatable; default: all)"
    )
    parser.add_argument("--n", type=int, default=2000, help="number of sentence pairs")
    parser.add_argument(
        "--study",
        type=Path,
        default=None,
        help="draw sentences from this study's sources and outputs (default: built-in list)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda", "mps"))
    parser.add_argument("--batch-size", type=int, default=64)
    common.add_json_flag(parser)


def _study_sentences(path: Path) -> list[str]:
    from meaningbench.db.frames import items_frame

    with common.open_existing_study(path) as study, study.session() as session:
        frame = items_frame(session)
    return [*frame["source"].tolist(), *frame["output"].tolist()]


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import UserError
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.metrics.neural.support.baseline_builder import build_baseline
    from meaningbench.metrics.neural.support.baselines import builtin_sentences
    from meaningbench.settings import DEFAULT_ENCODER

    if args.n < 1:
        raise UserError("--n must be at least 1")
    sentences = _study_sentences(args.study) if args.study is not None else builtin_sentences()
    model = args.model or DEFAULT_ENCODER

    def job(ctx: Any) -> Any:
        ctx.progress(0, None, f"encoding {args.n} pairs", force=True)
        return build_baseline(
            model,
            sentences,
            layers=args.layer,
            n_pairs=args.n,
            seed=args.seed,
            device=args.device,
            batch_size=args.batch_size,
            cancel=ctx.cancel,
        )

    result = run_with_progress_bar(job, description="baseline", quiet=args.json)
    rows = {
        str(layer): {"P": b.precision, "R": b.recall, "F": b.f1}
        for layer, b in sorted(result.layers.items())
    }
    if args.json:
        common.print_json(
            {"model": model, "path": str(result.path), "pairs": result.n_pairs, "layers": rows}
        )
        return 0
    print(f"baseline for {model} over {result.n_pairs} unrelated pairs -> {result.path}")
    for layer, v in rows.items():
        print(f"  layer {layer:>2}: P {v['P']:.4f}  R {v['R']:.4f}  F {v['F']:.4f}")
    return 0
