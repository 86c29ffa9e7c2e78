"""BERTScore baselines: the expected score of unrelated sentences, used for rescaling.

Rescaled = (x − b) / (1 − b), where b is the mean P, R or F over shuffled pairs of unrelated
sentences (Zhang et al. 2020, appendix). A baseline file uses bert-score's format — a CSV with
the columns LAYER,P,R,F and one row per layer, row i for layer i — so files from either tool
can be used by the other. Files this project computes live in `models_dir()/baselines/`.
"""

from __future__ import annotations

import csv
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from meaningbench.errors import UserError
from meaningbench.settings import models_dir

BUILTIN_SENTENCES = Path(__file__).with_name("baseline_sentences.txt")


@dataclass(frozen=True)
class Baseline:
    precision: float
    recall: float
    f1: float

    def rescale(self, p: float, r: float, f: float) -> tuple[float, float, float]:
        return (
            (p - self.precision) / (1 - self.precision),
            (r - self.recall) / (1 - self.recall),
            (f - self.f1) / (1 - self.f1),
        )


def baselines_dir() -> Path:
    path = models_dir() / "baselines"
    path.mkdir(parents=True, exist_ok=True)
    return path


def baseline_path(model_key: str) -> Path:
    return baselines_dir() / f"{model_key}.tsv"


def read_rows(path: Path) -> dict[int, Baseline]:
    rows: dict[int, Baseline] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            try:
                values = (float(row["P"]), float(row["R"]), float(row["F"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise UserError(f"{path}: not a baseline file (columns LAYER,P,R,F)") from exc
            if not any(math.isnan(v) for v in values):
                rows[int(row["LAYER"])] = Baseline(*values)
    return rows


def read_baseline(path: Path, layer: int) -> Baseline:
    if not path.exists():
        raise UserError(f"no baseline file at {path}")
    rows = read_rows(path)
    if layer not in rows:
        raise UserError(f"{path} has no baseline for layer {layer}")
    return rows[layer]


def write_rows(path: Path, rows: dict[int, Baseline], n_layers: int) -> None:
    """Write rows 0..n_layers; layers without a value are written as nan (row i = layer i)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["LAYER", "P", "R", "F"])
        for layer in range(n_layers + 1):
            b = rows.get(layer)
            values = (b.precision, b.recall, b.f1) if b else (math.nan,) * 3
            writer.writerow([layer, *(f"{v:.8f}" if not math.isnan(v) else "nan" for v in values)])
    tmp.replace(path)


def builtin_sentences() -> list[str]:
    lines = BUILTIN_SENTENCES.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def unrelated_pairs(sentences: Sequence[str], n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`n` pairs of two different sentences drawn at random (with a fixed seed)."""
    distinct = list(dict.fromkeys(s.strip() for s in sentences if s and s.strip()))
    if len(distinct) < 2:
        raise UserError("a baseline needs at least two different sentences")
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        a, b = rng.sample(range(len(distinct)), 2)
        pairs.append((distinct[a], distinct[b]))
    return pairs


def compute_baseline(
    pairs: Sequence[tuple[str, str]],
    score: Callable[[Sequence[tuple[str, str]]], list[tuple[float, float, float]]],
) -> Baseline:
    """Mean P/R/F of `score` over unrelated (candidate, reference) pairs."""
    results = score(pairs)
    n = len(results)
    if n == 0:
        raise UserError("a baseline needs at least one pair")
    return Baseline(
        sum(r[0] for r in results) / n,
        sum(r[1] for r in results) / n,
        sum(r[2] for r in results) / n,
    )
