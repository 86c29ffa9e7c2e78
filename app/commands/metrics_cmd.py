"""`meaningbench metrics`: every metric, where it comes from, whether it can run here and why
not, and every installed metric plugin that failed to load."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.jobs.metric_listing import MetricListing


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "metrics",
        run,
        study=False,
        help="list every metric with its availability and origin (and why one cannot run)",
        description="List the metric battery: name (what --metrics takes), family, what it "
        "needs, whether it can run on this machine, and the package it comes from (metrics "
        "from other packages are plugins, see resources/docs/plugins.md). Plugins that fail "
        "to load are listed with their module and error.",
    )
    parser.add_argument(
        "--study",
        type=Path,
        default=None,
        help="also list the models registered in this study, and say what can run under "
        "its language",
    )
    common.add_json_flag(parser)


def metric_status_text(m: MetricListing) -> str:
    """One metric's availability as the list prints it: what it needs and how to give it."""
    if m.available:
        return "available" + (f" ({m.reason})" if m.reason else "")
    status = m.status or "unavailable"
    if status == "needs weights" and m.fix:
        return f"needs weights: set {m.fix} ({m.reason})"
    if status in ("needs an extra", "needs environment") and m.fix:
        return f"{status}: {m.fix}"
    return f"{status}: {m.reason}"


def run(args: argparse.Namespace) -> int:
    from meaningbench.jobs.metric_listing import list_metrics
    from meaningbench.metrics.registry import broken_plugins

    if args.study is not None:
        from meaningbench.commands._common import open_existing_study

        open_existing_study(args.study).close()
    metrics = list_metrics(args.study)
    broken = broken_plugins()
    if args.json:
        common.print_json(
            {
                "metrics": [m.to_dict() for m in metrics],
                "broken_plugins": [
                    {
                        "name": b.name,
                        "module": b.module,
                        "package": b.distribution,
                        "error": b.error,
                    }
                    for b in broken
                ],
            }
        )
        return 0
    width = max((len(m.name) for m in metrics), default=6)
    source = max((len(m.package) for m in metrics), default=4)
    print(f"{'name':<{width}}  {'family':<12} {'needs':<18} {'from':<{source}}  status")
    for m in metrics:
        needs = ", ".join(
            n for n, flag in (("references", m.needs_references), ("model", m.needs_model)) if flag
        )
        status = metric_status_text(m)
        print(
            f"{m.name:<{width}}  {m.family:<12} {needs or '-':<18} {m.package:<{source}}  {status}"
        )
    return 0
