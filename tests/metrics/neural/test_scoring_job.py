"""The neural metrics through the scoring job: scores stored, unavailable ones explained,
a re-scored study encodes only its new sentences."""

from __future__ import annotations

import pytest

from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import Pair, resolve_references
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.support import cache, encoding
from meaningbench.runtime import JobContext
from tests.jobs.studydata import add_items
from tests.metrics.neural.conftest import SENTENCES


def _stored(study, metric: str) -> dict[int, float | None]:
    with study.session() as s:
        rows = s.connection().exec_driver_sql(
            "SELECT sc.item_id, sc.value FROM score sc JOIN metric_run r ON r.id = sc.run_id "
            "WHERE r.metric = ?",
            (metric,),
        )
        return {item_id: value for item_id, value in rows}


def test_battery_runs_and_explains_what_cannot(new_study, tiny_regression_model):
    rows = [(s, o, (), "sys-a") for s, o in SENTENCES]
    ids = add_items(new_study, rows)
    request = ScoreRequest(
        new_study.path,
        [
            "bertscore",
            "sbert_cosine",
            f"meaningbert[model={tiny_regression_model}]",
            "meaningbert",
            "blanc_help",
            "bertscore[model=no-such-org/no-such-model]",
        ],
        {"device": "cpu"},
    )
    summaries = {(s.metric, s.status): s for s in score_study(request, JobContext())}
    statuses = sorted(summaries)
    assert ("bertscore", "done") in statuses and ("sbert_cosine", "done") in statuses
    assert ("meaningbert", "done") in statuses
    unavailable = [s for s in summaries.values() if s.status == "unavailable"]
    reasons = " | ".join(s.error or "" for s in unavailable)
    assert len(unavailable) == 3
    assert "'davebulaval/MeaningBERT' is not available offline" in reasons
    assert "'no-such-org/no-such-model' is not available offline" in reasons
    assert "masked language model" in reasons

    direct = BertScoreMetric(embedding_cache_mb=0).score_batch(
        [Pair(i, s, o, (s,)) for i, (s, o, _, _) in zip(ids, rows, strict=True)]
    )
    stored = _stored(new_study, "bertscore")
    assert [stored[i] for i in ids] == pytest.approx([d.value for d in direct], abs=1e-4)


def test_rescoring_encodes_only_new_sentences(new_study, monkeypatch):
    sources = [s for s, _ in SENTENCES[:4]]
    add_items(new_study, [(s, o, (), "sys-a") for s, o in SENTENCES[:4]])
    request = ScoreRequest(new_study.path, ["bertscore"], {"device": "cpu"})
    assert score_study(request, JobContext())[0].status == "done"

    encoded: list[list[int]] = []
    real = encoding._forward_layer

    def recording(loaded, layer, batch):
        encoded.extend(batch)
        return real(loaded, layer, batch)

    monkeypatch.setattr(encoding, "_forward_layer", recording)
    cache.MEMORY.clear()  # as in a new session: only the on-disk cache remains
    new_outputs = [f"A new simplification number {k}." for k in range(4)]
    add_items(new_study, [(s, o, (), "sys-b") for s, o in zip(sources, new_outputs, strict=True)])
    (summary,) = score_study(request, JobContext())
    assert summary.status == "done" and summary.scored == 4 and summary.cached == 4
    assert len(encoded) == len(new_outputs)  # the sources came from the disk cache


def test_idf_comes_from_the_whole_study_not_from_one_batch(new_study):
    """The job hands BERTScore every item before scoring, so idf weights do not depend on
    how the items are batched: the job's chunks give the scores of one big batch."""
    from meaningbench.jobs.score_exec import FIRST_CHUNK

    # More items than the job's first chunk, with references that differ between chunks.
    rows = [
        (s, o, (o, s) if k % 2 else (f"{s} Indeed, in version {k}: {o.lower()}",), f"sys-{k}")
        for k in range(FIRST_CHUNK // len(SENTENCES) + 2)
        for s, o in SENTENCES
    ]
    assert len(rows) > FIRST_CHUNK
    ids = add_items(new_study, rows)
    request = ScoreRequest(
        new_study.path,
        ["bertscore[idf=true]"],
        {"device": "cpu", "batch_size": 2, "reference_mode": "references"},
    )
    [summary] = score_study(request, JobContext())
    assert summary.status == "done"
    metric = BertScoreMetric(idf=True, reference_mode="references", embedding_cache_mb=0)
    pairs = [
        Pair(i, s, o, resolve_references(s, refs, "references"))
        for i, (s, o, refs, _) in zip(ids, rows, strict=True)
    ]
    metric.prepare(pairs)
    direct = metric.score_batch(pairs)
    stored = _stored(new_study, "bertscore")
    assert [stored[i] for i in ids] == pytest.approx([d.value for d in direct], abs=1e-4)
