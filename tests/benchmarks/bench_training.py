"""Benchmark: train the default model on CSMD (train + dev) on this machine.

Figures: wall time per epoch, total wall time of the default configuration (target: at most
20 minutes on a 2-core CPU), test Pearson / Spearman / R² / RMSE on held-out source groups,
sanity pass rates, and the source leak of CSMD's published train/dev split. Run with
`python -m pytest tests/benchmarks/bench_training.py -s -p no:xdist`.
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
from meaningbench.training.splits import leak

RESULTS = Path(__file__).resolve().parent / "results" / "training.json"
BUDGET_S = 20 * 60


def read_csmd(path: Path) -> pd.DataFrame:
    # CSV quoting inside a TSV: pandas' csv reader, never a split on tabs.
    return pd.read_csv(path, sep="\t", quotechar='"', keep_default_na=False)


def import_csmd(study_path: Path, folder: Path):
    """CSMD train and dev through the project's importer (the mean label is an aggregate rating)."""
    study = create_study(study_path)
    for split in ("train", "dev"):
        import_file(study, folder / f"{split}.tsv", dataset=f"csmd-{split}")
    return study


def zero_shot_baseline(study_path: Path, card: dict) -> dict:
    """The battery's SBERT cosine with the untrained MiniLM on the same held-out items: what
    the training has to beat."""
    from meaningbench.db.study import open_study
    from meaningbench.metrics.base import Pair
    from meaningbench.metrics.registry import create_metric
    from meaningbench.training.data import load_targets
    from meaningbench.training.evaluate import regression_stats

    with open_study(study_path) as study, study.session() as session:
        frame = load_targets(session).frame
    held = frame[frame["source_group"].isin(set(card["split"]["heldout_source_groups"]))]
    pairs = [
        Pair(int(i), s, o, (s,))
        for i, s, o in zip(held["item_id"], held["source"], held["output"], strict=True)
    ]
    values = [
        score.value for score in create_metric("sbert_cosine", device="cpu").score_batch(pairs)
    ]
    return regression_stats(values, held["target"].to_numpy(), groups=held["source_group"].tolist())


@pytest.mark.benchmark
def test_train_default_on_csmd(shared_datasets: Path, tmp_path: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    train = read_csmd(shared_datasets / "csmd" / "train.tsv")
    dev = read_csmd(shared_datasets / "csmd" / "dev.tsv")
    split_leak = leak(train["original"].tolist(), dev["original"].tolist())

    study = import_csmd(tmp_path / "csmd.mbstudy", shared_datasets / "csmd")
    study.close()

    epochs: list[dict] = []

    def on_event(event) -> None:
        if isinstance(event, EpochEnd):
            epochs.append(
                {
                    "epoch": event.epoch,
                    "elapsed_s": event.elapsed_s,
                    "train_loss": event.train_loss,
                    "val_loss": event.val_loss,
                }
            )

    started = time.monotonic()
    request = TrainRequest(study=tmp_path / "csmd.mbstudy", out_dir=tmp_path / "model")
    result = train_model(request, on_event=on_event)
    wall = time.monotonic() - started

    baseline = zero_shot_baseline(tmp_path / "csmd.mbstudy", result.card)
    per_epoch = [
        b["elapsed_s"] - a["elapsed_s"]
        for a, b in zip([{"elapsed_s": 0.0}, *epochs[:-1]], epochs, strict=True)
    ]
    figures = {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "usable_cores": available_cores(),
            "device": result.card.get("device"),
            "threads": result.card.get("threads"),
            "load_average_at_end": os.getloadavg()[0],
        },
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "note": "the machine was shared with other test runs: timings are pessimistic",
        "data": {
            "items": result.card["data"]["n_items"],
            "groups": result.card["data"]["n_groups"],
            "split": result.card["split"]["parts"],
        },
        "config": {
            k: result.card["config"][k]
            for k in ("epochs", "batch_size", "learning_rate", "max_length", "augment")
        },
        "epoch_wall_s": per_epoch,
        "mean_epoch_wall_s": sum(per_epoch) / len(per_epoch) if per_epoch else None,
        "total_wall_s": wall,
        "test": result.test,
        "zero_shot_sbert_cosine_same_test_items": baseline,
        "sanity": result.card.get("sanity"),
        "curve": epochs,
        "csmd_published_split_leak": split_leak.to_json(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2, default=str))
    assert wall <= BUDGET_S, f"the default training took {wall:.0f} s (budget {BUDGET_S} s)"
    assert result.test["pearson"] > 0.2  # it learned something about unseen sources
