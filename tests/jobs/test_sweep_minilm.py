"""The done-criterion of the sweep: MiniLM's 6 layers × idf on/off on CSMD dev, from the
command line, per-layer correlations equal to separate `score` runs of each configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.jobs.sweep_plan import SweepRequest, plan_sweep
from meaningbench.metrics.neural.support.cache import MEMORY
from meaningbench.runtime import JobContext

pytestmark = pytest.mark.slow


def test_minilm_sweep_equals_separate_score_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from meaningbench.analysis.live import correlation_table
    from meaningbench.db.study import copy_study, open_study
    from tests.conftest import FIXTURE_DATASETS

    swept = tmp_path / "swept.mbstudy"
    assert main(["import", str(swept), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    separate = copy_study(swept, tmp_path / "separate.mbstudy")
    out = tmp_path / "sweep.json"
    capsys.readouterr()
    assert main(["sweep", str(swept), "--layers", "all", "--idf", "none,sources", "--boot",
                 "200", "--quiet", "--out", str(out)]) == 0  # fmt: skip
    table = json.loads(out.read_text())
    rows = table["rows"]
    assert len(rows) == 12 and {r["layer"] for r in rows} == set(range(1, 7))
    assert sum(r["best"] for r in rows) == 1
    # Each configuration on its own, the way `meaningbench score --metrics SPEC` runs it,
    # with no embedding shared with the sweep.
    MEMORY.clear()
    for config in plan_sweep(SweepRequest(separate, layers="all", idf=["none", "sources"])):
        summaries = score_study(
            ScoreRequest(separate, [config.spec], {"embedding_cache_mb": 0}), JobContext()
        )
        assert [s.status for s in summaries] == ["done"], config.spec
    study = open_study(separate)
    try:
        alone = correlation_table(study, n_boot=200).results
    finally:
        study.close()
    assert {r["column"] for r in rows} == set(alone)
    for row in rows:
        ref = alone[row["column"]]
        for stat in ("pearson", "spearman", "kendall"):
            assert row[stat] == pytest.approx(getattr(ref, stat), abs=1e-6), (row["column"], stat)
        assert row["pearson_ci_low"] == pytest.approx(ref.pearson_ci[0], abs=1e-6)
        assert row["pearson_ci_high"] == pytest.approx(ref.pearson_ci[1], abs=1e-6)
