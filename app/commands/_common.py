"""Helpers shared by the subcommands: study arguments, JSON output."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import StudyNotFoundError

if TYPE_CHECKING:
    from db.study import Study


def add_study_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", type=Path, help="the study file (.mbstudy)")


def add_dimension_argument(parser: argparse.ArgumentParser) -> None:
    """The human rating dimension an analysis reads; "meaning" is what the study is about."""
    parser.add_argument("--dimension", default="meaning", help="human dimension (default: meaning)")


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


def _clean(obj: Any) -> Any:
    # JSON has no NaN or infinity; a statistic that cannot be computed is null.
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _clean(obj.item())
    return obj


def print_json(obj: Any) -> None:
    json.dump(_clean(obj), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
