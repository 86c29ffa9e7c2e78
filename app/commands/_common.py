"""Helpers shared by the subcommands: study arguments, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import StudyNotFoundError, UserError
from app.json_values import clean_json

if TYPE_CHECKING:
    from db.study import Study


def add_study_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", type=Path, help="the study file (.mbstudy)")


def add_dimension_argument(parser: argparse.ArgumentParser) -> None:
    """The human rating dimension an analysis reads; "meaning" is what the study is about."""
    parser.add_argument("--dimension", default="meaning", help="human dimension (default: meaning)")


def add_labels_argument(parser: argparse.ArgumentParser) -> None:
    """Which aggregate label set stands in for unrated items (see `app.analysis.label_sets`)."""
    parser.add_argument(
        "--labels",
        default=None,
        metavar="SET",
        help="the aggregate label set to use (default: the study's chosen set, else the "
        "published labels); `meaningbench audit --fix` makes corrected sets",
    )


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def open_existing_study(path: Path) -> Study:
    """Open a study that must already exist (only `import` creates one)."""
    # Imported here: SQLAlchemy is not needed to print --help or to start the GUI.
    from db.study import open_study

    if not path.exists():
        raise StudyNotFoundError(
            f"{path}: no such study (create one with `meaningbench import {path} FILE`)"
        )
    return open_study(path)


def print_json(obj: Any) -> None:
    json.dump(clean_json(obj), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def parse_metric_names(values: list[str]) -> list[str]:
    """Metric names from repeated and comma-separated options, checked and lower-cased."""
    from app.metrics.registry import get_metric_class

    names = [n.strip() for part in values for n in part.split(",") if n.strip()]
    for name in names:
        try:
            get_metric_class(name)
        except KeyError as exc:
            raise UserError(str(exc).strip("'\"")) from None
    return [n.lower() for n in names]
