"""Benchmark: fine-tune a Sentence-BERT bi-encoder from the embedded MiniLM on CSMD train.

Figures: wall time per epoch, total wall time, and Pearson / Spearman / RMSE before and
after training — on the held-out source groups of the group split (the honest figures, from
the model card) and on CSMD's published dev split (scored by the battery's `sbert_cosine`
with the base and the trained folder; most dev sources also occur in train, see the
training README). Run with
`python -m pytest tests/benchmarks/bench_biencoder.py -s -p no:xdist`.
"""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from meaningbench.training import EpochEnd, TrainRequest, train_model
from meaningbench.training.model import available_cores


def read_csmd(path: Path) -> pd.DataFrame:
    # CSV quoting inside a TSV: pandas' csv reader, never a split on tabs.
    return pd.read_csv(path, sep="\t", quotechar='"', keep_default_na=False)


RESULTS = Path(__file__).resolve().parent / "results" / "training_biencoder.json"


def _dev_figures(dev, model: str | None) -> dict:
    from meaningbench.metrics.base import Pair
    from meaningbench.metrics.registry import create_metric
    from meaningbench.training.evaluate import regression_stats

    pairs = [
        Pair(i, s, o, (s,))
        for i, (s, o) in enumerate(zip(dev["original"], dev["simplification"], strict=True))
    ]
    options = {"device": "cpu", "embedding_cache_mb": 0}
    if model is not None:
        options["model"] = model
    values = [s.value for s in create_metric("sbert_cosine", **options).score_batch(pairs)]
    stats = regression_stats(values, dev["label"].astype(float).to_numpy())
    return {k: stats[k] for k in ("n", "pearson", "spearman", "r2", "rmse")}


@pytest.mark.benchmark
def test_train_a_bi_encoder_on_csmd_train(shared_datasets: Path, tmp_path: Path) -> None:
    study = create_study(tmp_path / "csmd.mbstudy")
    import_file(study, shared_datasets / "csmd" / "train.tsv", dataset="csmd-train")
    study.close()
    dev = read_csmd(shared_datasets / "csmd" / "dev.tsv")

    epochs: list[EpochEnd] = []
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    request = TrainRequest(
        study=tmp_path / "csmd.mbstudy", out_dir=tmp_path / "model", kind="bi-encoder"
    )
    result = train_model(
        request, None, lambda e: epochs.append(e) if isinstance(e, EpochEnd) else None
    )
    total = time.monotonic() - started
    card = result.card
    keys = ("n", "pearson", "spearman", "r2", "rmse")
    figures = {
        "machine": {
            "cores": available_cores(),
            "threads": card.get("threads"),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg()[0],
            "python": platform.python_version(),
        },
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": card["config"],
        "split": card["split"]["parts"],
        "epoch_wall_s": [],
        "total_wall_s": total,
        "heldout_before": {k: card["test_before"].get(k) for k in keys},
        "heldout_after": {k: card["test"].get(k) for k in keys},
        "heldout_pearson_ci_before": card["test_before"].get("pearson_ci"),
        "heldout_pearson_ci_after": card["test"].get("pearson_ci"),
        "curve": card["curve"],
        "published_dev_before": _dev_figures(dev, None),
        "published_dev_after": _dev_figures(dev, str(result.model_dir)),
    }
    previous = 0.0
    for event in epochs:
        figures["epoch_wall_s"].append(event.elapsed_s - previous)
        previous = event.elapsed_s
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    assert figures["heldout_after"]["n"] == figures["heldout_before"]["n"] > 0
