"""Model metrics get large slices from the scoring job and batch them by length themselves;
progress and cancel come from inside the metric, between its batches.

The metric is the real BERTScore on the bundled MiniLM, subclassed only to record the sizes
of the calls the job makes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import pytest

from meaningbench.db.study import Study
from meaningbench.jobs.score_exec import FIRST_CHUNK, MODEL_SLICE
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, Pair
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.registry import metric_classes, register, unregister
from meaningbench.runtime import CancelToken, JobContext, Progress
from tests.jobs.conftest import fill

ITEMS = 160


class Recording(Metric):
    """Records the size of every call the scoring job makes, then scores as the metric."""

    calls: ClassVar[list[int]] = []

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        type(self).calls.append(len(pairs))
        return super().score_batch(pairs, cancel)  # type: ignore[safe-super]


class RecordingBertScore(Recording, BertScoreMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        "test_recording_bertscore", "BERTScore (recorded)", "neural", "test metric"
    )


class RecordingBleu(Recording, BleuMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        "test_recording_bleu", "BLEU (recorded)", "lexical", "t"
    )


@pytest.fixture
def recording() -> Iterator[None]:
    from meaningbench.metrics.neural.support import cache

    cache.MEMORY.clear()  # texts embedded by an earlier test would need no batch at all
    metric_classes()
    for cls in (RecordingBertScore, RecordingBleu):
        register(cls)
        cls.calls = []
    try:
        yield
    finally:
        for cls in (RecordingBertScore, RecordingBleu):
            unregister(cls.info.name)


def _request(study: Study, metric: str) -> ScoreRequest:
    options: dict[str, Any] = {"pool": "never", "batch_size": 16, "embedding_cache_mb": 0}
    return ScoreRequest(study.path, [metric], options)


def test_a_model_gets_the_whole_run_and_reports_progress_inside_it(
    new_study: Study, recording: None
) -> None:
    fill(new_study, ITEMS)
    seen: list[Progress] = []
    ctx = JobContext(report=seen.append, min_interval_s=0.0)
    (summary,) = score_study(_request(new_study, "test_recording_bertscore"), ctx)
    assert (summary.status, summary.scored) == ("done", ITEMS)
    assert RecordingBertScore.calls == [ITEMS] and ITEMS <= MODEL_SLICE
    inside = sorted({p.done for p in seen if p.total == ITEMS and 0 < p.done < ITEMS})
    assert len(inside) >= 4  # the bar moves batch by batch before the slice is written

    score_study(_request(new_study, "test_recording_bleu"), JobContext())
    assert RecordingBleu.calls[0] == FIRST_CHUNK  # cheap metrics keep small timed chunks


def test_cancel_inside_a_slice_stops_between_batches_and_a_rerun_resumes(
    new_study: Study, recording: None
) -> None:
    fill(new_study, ITEMS)
    ctx = JobContext(min_interval_s=0.0)

    def cancel_after_a_batch(p: Progress) -> None:
        if p.total == ITEMS and 0 < p.done < ITEMS:
            ctx.cancel.cancel()  # the user presses Cancel while the slice is being scored

    ctx.report = cancel_after_a_batch
    (summary,) = score_study(_request(new_study, "test_recording_bertscore"), ctx)
    assert summary.status == "cancelled" and summary.scored == 0
    (again,) = score_study(_request(new_study, "test_recording_bertscore"), JobContext())
    assert (again.status, again.scored, again.cached) == ("done", ITEMS, 0)
