"""A stored llm_judge run with the ESA template, as the scoring job leaves it, made from
judge answers read by the metric's own parser (no model runs)."""

from __future__ import annotations

from collections.abc import Mapping

from meaningbench.db.models import MetricRun, Score
from meaningbench.db.study import Study
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.neural.judge import LlmJudgeMetric
from meaningbench.metrics.neural.support.judge_local import JudgeReply


def store_judge_answers(study: Study, answers: Mapping[int, str], template: str = "esa") -> str:
    """Store the judge's answers per item id as one done run; returns the run's label."""
    metric = LlmJudgeMetric(template=template)
    label = metric_canonical_name(metric)
    with study.session(write=True) as s:
        run = MetricRun(
            metric=metric.name,
            config=dict(metric.config),
            config_hash=metric.config_hash(),
            label=label,
            model_id=metric.model_id(),
            status="done",
            n_items=len(answers),
        )
        s.add(run)
        s.flush()
        for item_id, answer in answers.items():
            score = metric.item_score(JudgeReply(answer, None))
            s.add(
                Score(
                    run_id=run.id,
                    item_id=item_id,
                    value=score.value,
                    raw=score.raw,
                    details=score.details,
                )
            )
    return label
