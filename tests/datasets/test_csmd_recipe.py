"""`meaningbench recipe csmd-corrected`: corrected labels against independent pandas means.

On the public files shipped with the tests (CSMD train/dev, SimpDA 2022, QuestEval; CC BY 4.0,
see tests/fixtures/datasets/ATTRIBUTION.md) rows are traced by text; with the full sources
beside the project (../shared/datasets, including ASSET, CC BY-NC, never copied here) the
recipe rebuilds CSMD's seeded split and the published figures are checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[2]


def _recipe(
    out: Path, csmd: Path, preexec: Callable[[], None] | None = None, **sources: Path
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "meaningbench.cli", "recipe", "csmd-corrected", str(out)]
    argv += ["--csmd", str(csmd), "--json"]
    for name, path in sources.items():
        argv += [f"--{name.replace('_', '-')}", str(path)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=300, check=False,
        preexec_fn=preexec,
    )  # fmt: skip


def _strip(text: str) -> str:
    return " ".join(str(text).split())


def _pandas_means(shared: Path) -> dict[tuple[str, str], tuple[float, int]]:
    """Mean and count of each pair's raw meaning ratings, computed here without the project."""
    simpda = pd.read_csv(shared / "simpda2022" / "simpDA_2022.csv")
    q = pd.read_csv(shared / "csmd_sources" / "questeval_likert_ratings_cleaned.csv")
    q = q[q["aspect"] == "meaning"]
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for frame, src, out_col, value in (
        (simpda, "Input.original", "Input.simplified", "Answer.adequacy"),
        (q, "source", "simplification", "rating"),
    ):
        keys = frame[src].map(_strip), frame[out_col].map(_strip)
        grouped = frame.groupby(list(keys))[value].agg(["mean", "size"])
        for key, row in grouped.iterrows():
            out[key] = (float(row["mean"]), int(row["size"]))
    return out


def test_corrected_labels_equal_pandas_means_on_every_checked_row(
    shared_datasets: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    proc = _recipe(
        out,
        shared_datasets / "csmd",
        simpda=shared_datasets / "simpda2022" / "simpDA_2022.csv",
        questeval=shared_datasets / "csmd_sources" / "questeval_likert_ratings_cleaned.csv",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["trace"] == "text"
    means = _pandas_means(shared_datasets)
    for split in ("train", "dev"):
        written = pd.read_csv(out / f"{split}.tsv", sep="\t", keep_default_na=False)
        published = pd.read_csv(
            shared_datasets / "csmd" / f"{split}.tsv", sep="\t", keep_default_na=False
        )
        # Same rows and columns, in the same order, plus the new ones.
        assert list(written.columns[:3]) == list(published.columns)
        assert written[["original", "simplification"]].equals(
            published[["original", "simplification"]]
        )
        assert np.allclose(written["label"], published["label"])
        assert np.allclose(written["label_published"], published["label"])
        checked = written[written["checked"].astype(str) == "True"]
        assert len(checked) > 0.4 * len(written)
        for row in checked.itertuples():
            mean, n = means[(_strip(row.original), _strip(row.simplification))]
            assert row.label_corrected == pytest.approx(mean, abs=1e-9)
            assert int(row.n_ratings) == n
        unchecked = written[written["checked"].astype(str) != "True"]
        assert np.allclose(unchecked["label_corrected"], unchecked["label_published"])
        # Every checked pair of the published files' rows is either right or scrambled.
        wrong = ~np.isclose(checked["label_corrected"], checked["label_published"], atol=0.01)
        assert wrong.mean() > 0.9


def test_a_missing_source_file_is_refused(shared_datasets: Path, tmp_path: Path) -> None:
    proc = _recipe(tmp_path / "o", shared_datasets / "csmd", simpda=tmp_path / "nope.csv")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_a_full_disk_leaves_the_earlier_outputs_as_they_were(
    shared_datasets: Path, tmp_path: Path
) -> None:
    from tests.fault_tools import file_size_limit

    out = tmp_path / "out"
    sources = {"simpda": shared_datasets / "simpda2022" / "simpDA_2022.csv"}
    assert _recipe(out, shared_datasets / "csmd", **sources).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"train.tsv", "dev.tsv", "summary.json"} <= set(before)
    # Train's file fits under the limit, dev's does not: half a new set must not replace
    # the old one.
    limit = max(len(before["train.tsv"]), len(before["dev.tsv"])) - 1
    proc = _recipe(out, shared_datasets / "csmd", preexec=file_size_limit(limit), **sources)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


FULL = {
    "simpda": SHARED_DATASETS / "simpda2022" / "simpDA_2022.csv",
    "questeval": SHARED_DATASETS / "csmd_sources" / "questeval_likert_ratings_cleaned.csv",
    "simplicity_da": SHARED_DATASETS / "csmd_sources" / "simplicity_DA.csv",
    "asset": SHARED_DATASETS / "asset" / "human_ratings.csv",
}


@pytest.mark.skipif(
    not all(p.is_file() for p in FULL.values()),
    reason="the full sources are not beside the project",
)
def test_the_rebuild_reproduces_the_published_figures(tmp_path: Path) -> None:
    proc = _recipe(tmp_path / "out", SHARED_DATASETS / "csmd", **FULL)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["trace"] == "rebuild"
    by_source = {r["source"]: r for r in summary["by_source"]}
    assert by_source["simpda"]["pairs"] == 360 and by_source["questeval"]["pairs"] == 295
    assert by_source["simpda"]["equal to own mean"] == pytest.approx(0.064, abs=0.01)
    assert by_source["questeval"]["equal to own mean"] == pytest.approx(0.010, abs=0.01)
    assert by_source["asset"]["equal to own mean"] == 1.0
    assert by_source["simplicity_da"]["equal to own mean"] == 1.0
    by_split = {r["split"]: r for r in summary["by_split"]}
    for split, share in (("train", 0.531), ("dev", 0.579), ("test", 0.536)):
        assert by_split[split]["correct"] == pytest.approx(share, abs=0.01)
    assert by_split["train"]["rows"] == 853 and by_split["test"]["rows"] == 407
    train = pd.read_csv(tmp_path / "out" / "train.tsv", sep="\t", keep_default_na=False)
    wrong = ~np.isclose(train["label_corrected"], train["label_published"], atol=0.01)
    assert set(train.loc[wrong, "origin"]) == {"simpda", "questeval"}
