"""`meaningbench scenes`: the semantic scenes SAMSA scores against — import, propose, list."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.db.study import Study


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = common.add_command(
        subparsers,
        "scenes",
        run,
        help="import, propose or list the scenes of the study's source sentences (for SAMSA)",
        description="Scenes are the units SAMSA scores: a main relation (Process or State) "
        "and its participants. Import them from UCCA XML, propose them with a dependency "
        "parser (spaCy with an English model), or draw them in the scene editor.",
    )
    action = p.add_mutually_exclusive_group()
    action.add_argument(
        "--import-ucca",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="UCCA standard XML files, or folders searched for *.xml",
    )
    action.add_argument(
        "--propose",
        action="store_true",
        help="propose scenes for sources that have none (needs spaCy and an English model)",
    )
    action.add_argument("--list", action="store_true", help="list scenes per source (default)")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="with --propose: replace earlier proposals for every source",
    )
    p.add_argument("--limit", type=int, default=20, help="with --list: sources to show (0 = all)")
    common.add_json_flag(p)


def run(args: argparse.Namespace) -> int:
    study = common.open_existing_study(args.study)
    try:
        if args.import_ucca:
            return _import(study, args)
        if args.propose:
            return _propose(study, args)
        return _list(study, args)
    finally:
        study.close()


def _import(study: Study, args: argparse.Namespace) -> int:
    from meaningbench.ops.scenes import import_ucca_job

    report = common.written(import_ucca_job(study, args.import_ucca))
    if args.json:
        common.print_json(report.__dict__)
    else:
        print(report.summary())
        for line in report.unmatched[:10]:
            print(f"  not in the study: {line}")
    return 0


def _propose(study: Study, args: argparse.Namespace) -> int:
    from meaningbench.errors import UserError
    from meaningbench.metrics.structural.propose import parser_status
    from meaningbench.ops.scenes import propose_scenes_job

    ok, _, message = parser_status()
    if not ok:
        raise UserError(message)
    report = common.written(propose_scenes_job(study, overwrite=args.overwrite))
    if args.json:
        common.print_json({**report.__dict__, "parser": message})
    else:
        print(
            f"proposed {report.scenes} scene(s) for {report.groups} source sentence(s) with "
            f"{message}; {report.skipped} source(s) already had scenes"
        )
    return 0


def _list(study: Study, args: argparse.Namespace) -> int:
    from meaningbench.jobs.scene_import import source_groups
    from meaningbench.jobs.scene_store import load_scenes, scene_counts

    with study.session() as s:
        sources = source_groups(s)
        counts = scene_counts(s)
        scenes = load_scenes(s)
    rows: list[dict[str, Any]] = []
    for group, source in sources.items():
        chosen = scenes.get(group, [])
        rows.append(
            {
                "source_group": group,
                "source": source,
                "origins": counts.get(group, {}),
                "scenes": [
                    {
                        "origin": sc.origin,
                        "main_relation": sc.text(sc.main_relation),
                        "participants": [
                            {"text": sc.text(p.tokens), "centre": sc.text(p.minimal_centre())}
                            for p in sc.participants
                        ],
                    }
                    for sc in chosen
                ],
            }
        )
    if args.json:
        common.print_json(rows)
        return 0
    with_scenes = sum(1 for r in rows if r["scenes"])
    print(f"{with_scenes} of {len(rows)} source sentence(s) have scenes")
    shown = rows if args.limit == 0 else rows[: args.limit]
    for r in shown:
        print(f"\n{r['source']}")
        if not r["scenes"]:
            print("  (no scenes)")
        for sc in r["scenes"]:
            parts = "; ".join(f"{p['text']} [{p['centre']}]" for p in sc["participants"])
            print(f"  {sc['origin']:>6}  {sc['main_relation']}  ←  {parts or '(no participants)'}")
    if len(shown) < len(rows):
        print(f"\n... {len(rows) - len(shown)} more (--limit 0 shows all)")
    return 0
