"""The demo study: illustrative items and ratings written by this project (resources/demo).

Built through the ordinary importer, so the demo is also a working example of the wide
per-rater shape. Never written over an existing file: the study is built beside its
destination and moved into place only when complete.
"""

from __future__ import annotations

import os
from pathlib import Path

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study, remove_study_files
from meaningbench.settings import resources_dir, studies_dir

DEMO_DATASET = "demo"
DEMO_META = {
    "illustrative": True,
    "description": "Sentences, systems and ratings written to demonstrate MeaningBench; "
    "the ratings are illustrative, not measurements.",
}


def demo_data_file() -> Path:
    return resources_dir() / "demo" / "demo_ratings.jsonl"


def default_demo_path() -> Path:
    return studies_dir() / "demo.mbstudy"


def build_demo_study(path: str | Path | None = None) -> Path:
    """The demo study at `path` (default: the user's studies folder), built if missing."""
    dest = Path(path) if path is not None else default_demo_path()
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.building")
    remove_study_files(tmp)
    try:
        study = create_study(tmp)
        try:
            import_file(
                study,
                demo_data_file(),
                fmt="wide",
                dataset=DEMO_DATASET,
                dataset_meta=DEMO_META,
            )
        finally:
            study.close()  # closing checkpoints the WAL, leaving one self-contained file
        if dest.exists():  # someone built it meanwhile: theirs wins
            return dest
        os.replace(tmp, dest)
    finally:
        remove_study_files(tmp)
    return dest
