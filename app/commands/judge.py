"""`meaningbench judge`: an LLM judge as a rater of a study, and the judge's templates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common

TEMPLATES = "templates"


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "judge",
        run,
        study=False,
        help="rate a study's items with an LLM judge, stored as a machine rater",
        description="Score every item of STUDY with the metric llm_judge and store the scores "
        "as ratings of a machine rater named by --as-rater, mapped onto the dimension's "
        "scale. Machine ratings never enter an item's human score; `raters`, `agreement` and "
        "`metaeval` show the rater beside the humans. `meaningbench judge templates` lists "
        "the prompt templates.",
    )
    parser.add_argument("study", help=f"the study file (.mbstudy), or '{TEMPLATES}'")
    parser.add_argument(
        "--model", default=None, help="model folder, hub id or .gguf file (default: smollm2)"
    )
    parser.add_argument("--template", default=None, help="template name or file (default: da)")
    parser.add_argument(
        "--backend", default=None, help="transformers, llama-cpp, or an endpoint URL"
    )
    parser.add_argument("--max-tokens", type=int, default=None, help="answer length limit")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="an endpoint's requests in flight at once (default: 1)",
    )
    parser.add_argument("--as-rater", default=None, metavar="NAME", help="the machine rater")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or mps")
    common.add_dimension_argument(parser)
    common.add_json_flag(parser)


def judge_spec(args: argparse.Namespace) -> str:
    """The llm_judge spec the options give: `llm_judge[model=...,template=...]`."""
    options = [
        f"{key}={value}"
        for key, value in (
            ("model", args.model),
            ("template", args.template),
            ("backend", args.backend),
            ("max_tokens", args.max_tokens),
            ("concurrency", args.concurrency),
        )
        if value is not None
    ]
    return f"llm_judge[{','.join(options)}]" if options else "llm_judge"


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import UserError

    if args.study == TEMPLATES:
        return _list_templates(args)
    if not args.as_rater:
        raise UserError("judge STUDY needs --as-rater NAME (the machine rater's name)")
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.judge import judge_as_rater_job

    path = Path(args.study)
    common.open_existing_study(path, reading=True).close()
    spec = judge_spec(args)
    result = run_with_progress_bar(
        lambda ctx: (
            judge_as_rater_job(
                ctx, path, spec, args.as_rater, dimension=args.dimension, device=args.device
            ).value
        ),
        description="judge",
        quiet=args.json,
    )
    if args.json:
        from dataclasses import asdict

        common.print_json(asdict(result))
    elif result.rated == 0 and result.error:
        print(f"{spec}: {result.status}: {result.error}")
    else:
        print(
            f"{result.rater} [machine]: {result.rated} items rated by {spec} "
            f"({result.unrated} without a score); scoring {result.status}"
        )
    return 0 if result.status not in ("failed", "unavailable", "cancelled") else 1


def _list_templates(args: argparse.Namespace) -> int:
    from meaningbench.metrics.neural.support.judge_templates import builtin_templates, load_template

    found = {name: load_template(name) for name in builtin_templates()}
    if args.json:
        common.print_json(
            {
                n: {"scale": [t.low, t.high], "answer": t.answer, "file": str(p)}
                for (n, t), p in zip(found.items(), builtin_templates().values(), strict=True)
            }
        )
        return 0
    for name, path in builtin_templates().items():
        print(found[name].describe())
        print(f"  {path}")
    print("Copy one, edit it, and pass its path: llm_judge[template=FILE] or --template FILE.")
    return 0
