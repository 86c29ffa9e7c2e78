"""`meaningbench audit STUDY`: published labels against the raw ratings of the same pairs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.analysis.audit import AuditResult


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "audit",
        run,
        help="check aggregate (published) labels against the raw ratings of the same pairs",
        description="Compare every aggregate label with the mean of the raw per-rater ratings "
        "of the same pair (matched on normalised source + output + dimension), per label set "
        "and source file: matched and unmatched labels, labels equal within a tolerance, mean "
        "absolute difference, Pearson, and the permutation signature (labels that equal the "
        "mean of another pair, and the mapping that explains most of them). --fix NAME adds a "
        "new label set with the raw means; the published labels stay.",
    )
    parser.add_argument(
        "--tolerance",
        type=common.number_option,
        default=0.01,
        help="a label equals the raw mean when they differ by at most this (0–100; default 0.01)",
    )
    parser.add_argument(
        "--scale",
        default=None,
        metavar="SIDE=LO-HI",
        help="map one side linearly onto 0–100 before comparing, e.g. raw=1-5 or labels=1-5 "
        "(without it, sides on different scales are not compared)",
    )
    parser.add_argument(
        "--labels",
        action="append",
        default=None,
        metavar="SET",
        help="audit only this aggregate label set (repeatable; default: all)",
    )
    parser.add_argument(
        "--raters",
        action="append",
        default=None,
        metavar="NAME",
        help="audit against these raters' ratings (repeatable; default: the per-rater ratings "
        "imported from rating files, never the study's own raters)",
    )
    parser.add_argument(
        "--fix",
        default=None,
        metavar="NAME",
        help="add an aggregate label set NAME holding the raw mean of every audited label's "
        "pair (nothing is deleted or overwritten)",
    )
    parser.add_argument(
        "--keep-unmatched",
        action="store_true",
        help="with --fix: copy the published label of pairs that have no raw ratings",
    )
    parser.add_argument(
        "--choose",
        action="store_true",
        help="with --fix: make NAME the study's chosen label set (what commands use by default)",
    )
    parser.add_argument(
        "--csv", type=Path, default=None, help="also write one row per checked label as CSV"
    )
    parser.add_argument(
        "--worst", type=int, default=5, help="list this many worst mismatches (default 5)"
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.audit import audit_study, parse_scale
    from meaningbench.errors import UserError
    from meaningbench.ops.labels import fix_job

    if args.tolerance < 0:
        raise UserError("--tolerance must be 0 or more")
    if (args.keep_unmatched or args.choose) and not args.fix:
        raise UserError("--keep-unmatched and --choose go with --fix NAME")
    scale = parse_scale(args.scale) if args.scale else None
    # Only --fix writes: the audit itself reads, so it runs on a read-only study too.
    with common.open_existing_study(args.study, reading=not args.fix) as study:
        with study.session() as session:
            result = audit_study(
                session,
                tolerance=args.tolerance,
                scale=scale,
                label_sets=args.labels,
                raters=args.raters,
            )
        fixed = None
        if args.fix:
            fixed = common.written(
                fix_job(
                    args.study,
                    args.fix,
                    args.keep_unmatched,
                    args.choose,
                    args.raters,
                    audit=result,
                )
            )
    if args.csv:
        from meaningbench.core.atomic_file import write_text_atomically

        write_text_atomically(Path(args.csv), result.labels.to_csv(index=False))
    if args.json:
        out = result.to_json()
        if fixed is not None:
            out["fix"] = fixed.to_json()
        common.print_json(out)
        return 0
    print(audit_text(result, worst=args.worst))
    if fixed is not None:
        print(fixed.describe())
    return 0


def audit_text(result: AuditResult, *, worst: int = 5) -> str:
    """The audit as a plain-text table with its notes and diagnoses."""
    import pandas as pd

    from meaningbench.analysis.audit_report import group_rows
    from meaningbench.analysis.export import to_text

    lines = [
        f"aggregate labels against raw ratings (tolerance {result.tolerance:g} on 0–100)",
        f"pairs matched on normalised source + output + dimension ({result.normalisation})",
    ]
    how = "named" if result.chosen_raters else "imported from rating files"
    lines.append(f"raw ratings ({how}): {', '.join(result.raters) or 'none'}")
    if result.scale is not None:
        s = result.scale
        lines.append(f"scale: {s.side} mapped from {s.lo:g}–{s.hi:g} onto 0–100")
    if result.groups:
        lines += ["", to_text(group_rows(result))]
    else:
        lines += ["", "no label matched a pair with raw ratings"]
    lines.append("")
    for name, n in sorted(result.unmatched.items()):
        lines.append(f"{name}: {n:,} labels have no raw ratings of the same pair in the study")
    for g in result.groups:
        if g.status != "compared":
            continue
        head = f"{g.label_set} vs {g.source} ({g.dimension}): "
        if g.identity_share is None:
            lines.append(
                head + "pairs found in several files and equal to none of their means; "
                "compared with the pooled mean (no single file order to test)"
            )
            continue
        if g.mapping is None:
            lines.append(head + "no mapping explains the labels better than their own pairs")
            continue
        lines.append(
            head + f"{g.n_other_pair:,} labels equal the raw mean of a different pair; "
            f"{g.mapping_text()}"
        )
    lines += result.notes
    table = result.labels
    if worst > 0 and not table.empty:
        diff = pd.to_numeric(table["diff"], errors="coerce").abs()
        top = table.assign(absdiff=diff).dropna(subset=["absdiff"])
        top = top.sort_values("absdiff", ascending=False).head(worst)
        if not top.empty:
            lines += ["", f"worst {len(top)} mismatches (label vs raw mean, n ratings):"]
            for r in top.itertuples():
                lines.append(
                    f"  {r.label:7.2f} vs {r.raw_mean:7.2f} (n={int(r.n_ratings)}) "
                    f"[{r.source_file}] {_short(r.output)}"
                )
    return "\n".join(lines)


def _short(text: object, width: int = 70) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= width else s[: width - 1] + "…"
