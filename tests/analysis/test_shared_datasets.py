"""The whole pipeline on the public rating data (CSMD and SimpDA 2022, from the vendored copies)."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from meaningbench.analysis.agreement import study_agreement
from meaningbench.analysis.live import StudyAnalysis, correlation_table
from meaningbench.datasets.importer import import_file
from meaningbench.db.frames import items_frame
from meaningbench.db.models import MetricRun, Score
from meaningbench.metrics.base import Pair
from meaningbench.metrics.registry import create_metric


def _score(study, name: str) -> dict[tuple[str, str, str], float]:
    with study.session() as s:
        items = items_frame(s)
    pairs = [Pair(int(r.item_id), r.source, r.output, (r.source,)) for r in items.itertuples()]
    metric = create_metric(name)
    scores = metric.score_batch(pairs)
    with study.session() as s:
        run = MetricRun(
            metric=name,
            config=metric.config,
            config_hash=metric.config_hash(),
            label=name,
            status="done",
        )
        s.add(run)
        s.flush()
        for p, sc in zip(pairs, scores, strict=True):
            s.add(Score(run_id=run.id, item_id=p.item_id, value=sc.value, raw=sc.raw))
    return {
        (r.source, r.output, r.system or ""): sc.value
        for r, sc in zip(items.itertuples(), scores, strict=True)
    }


def test_simpda_agreement_and_correlation(shared_datasets: Path, new_study) -> None:
    path = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    import_file(new_study, path)
    raw = pd.read_csv(path)
    key = ["Input.original", "Input.simplified", "Input.system"]
    wide = raw.pivot_table(index=key, columns="WorkerId", values="Answer.adequacy")
    expected_alpha = krippendorff.alpha(
        reliability_data=wide.to_numpy().T, level_of_measurement="interval"
    )
    result = study_agreement(new_study)
    assert result.n_annotators == raw["WorkerId"].nunique()
    assert result.alpha == pytest.approx(expected_alpha, rel=1e-9)
    assert result.icc_model == "ICC(1,1)"  # 3 of 11 raters per item: an incomplete design
    assert 0 < result.ceiling < 1

    bleu = _score(new_study, "bleu")
    table = correlation_table(new_study, n_boot=200)
    means = raw.groupby(key)["Answer.adequacy"].mean()
    x = np.array([bleu[k] for k in means.index])
    r = table.results["bleu[refs=source]"]
    assert r.n == len(means)
    assert r.pearson == pytest.approx(stats.pearsonr(x, means.to_numpy())[0])
    assert r.kendall == pytest.approx(stats.kendalltau(x, means.to_numpy())[0])


def test_csmd_aggregate_labels_are_the_human_scores(shared_datasets: Path, new_study) -> None:
    path = shared_datasets / "csmd" / "dev.tsv"
    import_file(new_study, path)
    analysis = StudyAnalysis.from_study(new_study)
    scores = analysis.data.ratings.scores()
    assert scores.from_aggregate.all()
    raw = pd.read_csv(path, sep="\t")
    assert np.sort(scores.raw) == pytest.approx(np.sort(raw["label"].to_numpy()))
    rouge = _score(new_study, "rouge1")
    table = correlation_table(new_study, n_boot=0)
    labels = {
        (o, s): v for o, s, v in raw[["original", "simplification", "label"]].itertuples(False)
    }
    keys = [k for k in rouge if (k[0], k[1]) in labels]
    x = np.array([rouge[k] for k in keys])
    y = np.array([labels[(k[0], k[1])] for k in keys])
    assert table.results["rouge1[refs=source]"].spearman == pytest.approx(stats.spearmanr(x, y)[0])
