"""Studies of real rating data (the copies in tests/fixtures/datasets) judged by a tiny
LLM judge stored as a machine rater (`meaningbench judge --as-rater`): CSMD dev pairs, then
more items the judge never saw (the browser's tests), and SimpDA 2022's per-rater ratings
(the judge beside named raters: agreement, rater checks, metaeval)."""

from __future__ import annotations

import csv
import gzip
from dataclasses import dataclass
from pathlib import Path

from meaningbench.cli import main
from tests.conftest import FIXTURE_DATASETS
from tests.metrics.neural.judge_models import tiny_judge

CSMD_DEV = FIXTURE_DATASETS / "csmd" / "dev.tsv"
SIMPDA = FIXTURE_DATASETS / "simpda2022" / "simpDA_2022.csv.gz"
RATER = "tiny-judge"


@dataclass(frozen=True)
class JudgedStudy:
    path: Path
    model: str  # the tiny judge's folder
    judged: list[int]  # item ids the machine rater rated
    unjudged: list[int]  # item ids imported after the judge ran


def _csmd_part(path: Path, rows: range) -> Path:
    with CSMD_DEV.open(encoding="utf-8", newline="") as fh:
        lines = list(csv.reader(fh, delimiter="\t"))
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(
            [lines[0], *(lines[1 + i] for i in rows)]
        )
    return path


def judged_csmd_study(folder: Path, *, judged: int = 5, more: int = 2) -> JudgedStudy:
    path = folder / "csmd.mbstudy"
    first = _csmd_part(folder / "csmd_first.tsv", range(judged))
    assert main(["import", str(path), str(first), "--format", "csmd"]) == 0
    # Characters are tokens: CSMD's long sentences need a long context.
    model = tiny_judge(folder / "judge", writes="0123456789", context=4096)
    args = ["judge", str(path), "--model", model, "--max-tokens", "2", "--device", "cpu"]
    assert main([*args, "--as-rater", RATER]) == 0
    later = _csmd_part(folder / "csmd_later.tsv", range(judged, judged + more))
    assert main(["import", str(path), str(later), "--format", "csmd"]) == 0
    ids = list(range(1, judged + more + 1))
    return JudgedStudy(path, model, ids[:judged], ids[judged:])


def simpda_part(folder: Path, items: int) -> Path:
    """The rows of SimpDA's first `items` (original, simplified, system) pairs, all raters."""
    with gzip.open(SIMPDA, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        keys: list[tuple[str, str, str]] = []
        rows = []
        for row in reader:
            key = (row["Input.original"], row["Input.simplified"], row["Input.system"])
            if key not in keys:
                if len(keys) == items:
                    continue
                keys.append(key)
            rows.append(row)
    out = folder / "simpda_part.csv"
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerows(rows)
    return out


def judged_simpda_study(folder: Path, *, items: int = 8) -> JudgedStudy:
    """SimpDA 2022's per-rater ratings of its first `items` pairs, every item judged."""
    path = folder / "simpda.mbstudy"
    assert main(["import", str(path), str(simpda_part(folder, items))]) == 0
    # Characters are tokens: SimpDA's long sentences need a long context.
    model = tiny_judge(folder / "judge", writes="0123456789", context=4096)
    args = ["judge", str(path), "--model", model, "--max-tokens", "2", "--device", "cpu"]
    assert main([*args, "--as-rater", RATER]) == 0
    return JudgedStudy(path, model, list(range(1, items + 1)), [])
