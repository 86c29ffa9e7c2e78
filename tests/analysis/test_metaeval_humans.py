"""Human rows beside the metrics: each rater against the other raters only, the
one-rater baseline, the reasons when there is none, and the command's output."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_humans import ONE_RATER, human_baseline
from meaningbench.cli import main
from tests.analysis.test_metaeval_wmt25 import built  # noqa: F401  (the study fixture)


def _data(raters: np.ndarray | None, names: list[str] | None = None) -> MetaEvalData:
    n = 30 if raters is None else raters.shape[0]
    rng = np.random.default_rng(0)
    human = rng.normal(size=n) if raters is None else np.nanmean(raters, axis=1)
    return MetaEvalData(
        human,
        (human + rng.normal(0, 0.5, n))[:, None],
        ["m"],
        np.array([f"s{k % 5}" for k in range(n)], object),
        np.array([f"i{k // 5}" for k in range(n)], object),
        raters=raters,
        rater_names=names or [],
    )


def test_each_rater_against_the_others_and_the_one_rater_mean() -> None:
    rng = np.random.default_rng(1)
    truth = rng.normal(50, 10, 40)
    raters = np.column_stack([truth + rng.normal(0, sd, 40) for sd in (3.0, 6.0, 9.0)])
    raters[::4, 2] = np.nan  # the third rater skipped some outputs
    base = human_baseline(_data(raters, ["ann", "bob", "cat"]), "pearson", "none")
    assert base.reason is None
    expected = []
    for r in range(3):
        others = np.delete(raters, r, axis=1)
        keep = np.isfinite(raters[:, r])
        gold = np.nanmean(others[keep], axis=1)
        expected.append(stats.pearsonr(raters[keep, r], gold).statistic)
    rows = {row.name: row for row in base.rows}
    for r, name in enumerate(["ann", "bob", "cat"]):
        assert rows[f"rater {name}"].value == pytest.approx(expected[r])
    assert rows["rater cat"].n_outputs == 30
    assert rows[ONE_RATER].value == pytest.approx(np.mean(expected))
    assert base.gap(0.9) == pytest.approx(0.9 - np.mean(expected))


def test_no_human_row_says_why() -> None:
    assert "no per-rater ratings" in str(human_baseline(_data(None), "pearson", "none").reason)
    one = np.arange(30, dtype=float)[:, None]
    assert "two raters" in str(human_baseline(_data(one), "pearson", "none").reason)
    apart = np.full((30, 2), np.nan)
    apart[:15, 0] = np.arange(15)
    apart[15:, 1] = np.arange(15)
    assert "two raters" in str(human_baseline(_data(apart), "pearson", "none").reason)


def test_the_command_shows_the_human_rows_and_each_metrics_distance(built, capsys) -> None:  # noqa: F811
    path = str(built.path)
    assert main(["metaeval", path, "--measures", "pearson", "--resamples", "50",
                 "--no-stopping", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    humans = out["human_rows"]
    names = [r["rater"] for r in humans["rows"]]
    assert names == ["rater ann", "rater bob", ONE_RATER]
    one = humans["one_rater"]
    for entry in out["ranking"]["ranking"]:
        assert humans["gap_to_one_rater"][entry["metric"]] == pytest.approx(entry["value"] - one)
    assert main(["metaeval", path, "--measures", "pearson", "--resamples", "50",
                 "--no-stopping"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "[human] rater ann" in text and "from one rater" in text
