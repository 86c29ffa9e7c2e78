"""`meaningbench corpus STUDY --metrics sari,bleu`: corpus-level scores per system."""

from __future__ import annotations

import argparse
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.commands.score import REFERENCE_MODES


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "corpus",
        run,
        help="corpus-level scores per system (corpus BLEU, EASSE's corpus SARI, ...)",
        description="Score each system's outputs as one corpus: corpus BLEU, chrF and TER "
        "(shown as 100 − TER), corpus SARI as EASSE computes it; other metrics give the mean "
        "of their item values. Regular items only.",
    )
    parser.add_argument(
        "--metrics", default="sari,bleu", help="comma-separated metrics (default: sari,bleu)"
    )
    parser.add_argument("--reference-mode", choices=REFERENCE_MODES, default=None)
    parser.add_argument("--device", default=None, help="for neural metrics")
    parser.add_argument("--model", default=None, help="for neural metrics")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.jobs.corpus import corpus_scores

    # Corpus scores are printed, never stored: a read-only study is fine.
    common.open_existing_study(args.study, reading=True).close()
    options = {
        k: v
        for k, v in {
            "reference_mode": args.reference_mode,
            "device": args.device,
            "model": args.model,
        }.items()
        if v is not None
    }
    result = corpus_scores(args.study, [args.metrics], options)
    if args.json:
        common.print_json(result.to_dict())
    else:
        _print(result)
    return 1 if result.unavailable else 0


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}"


def _print(result: Any) -> None:
    columns: list[str] = []
    for scores in result.systems.values():
        columns += [c for c in scores if c not in columns]
    if not result.systems:
        print("no items")
    else:
        width = max(len("system"), *(len(n) for n in result.systems))
        widths = [max(8, len(c)) for c in columns]
        head = "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True))
        print(f"{'system':<{width}}  {'items':>6}  {head}")
        for name, scores in result.systems.items():
            cells = "  ".join(
                f"{_fmt(scores.get(c)):>{w}}" for c, w in zip(columns, widths, strict=True)
            )
            print(f"{name:<{width}}  {result.items.get(name, 0):>6}  {cells}")
    for label, reason in result.unavailable.items():
        print(f"{label}: unavailable — {reason}")
