"""A run's progress weighs each item by its metric's cost: three lexical metrics finished
and a neural one not started is a small share of the work, not three quarters of it."""

from __future__ import annotations

from meaningbench.db.study import Study
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.cost import FAMILY_COST, item_cost
from meaningbench.metrics.registry import metric_classes
from meaningbench.runtime import JobContext, Progress
from tests.jobs.conftest import fill

LEXICAL = ["bleu", "chrf", "sari"]
NEURAL = "sbert_cosine"


def run_collecting(study: Study, metrics: list[str]) -> list[Progress]:
    seen: list[Progress] = []
    ctx = JobContext(report=seen.append, min_interval_s=0.0)
    request = ScoreRequest(study.path, metrics, {"pool": "never", "device": "cpu"})
    score_study(request, ctx)
    return seen


def test_costs_are_the_engines_and_neural_outweighs_lexical() -> None:
    classes = metric_classes()
    assert item_cost(classes[NEURAL]()) >= 100 * item_cost(classes["bleu"]())
    assert FAMILY_COST["lexical"] == FAMILY_COST["readability"] == 1.0


def test_lexical_metrics_done_and_neural_not_started_is_a_small_share(new_study: Study) -> None:
    n = len(fill(new_study, 24, with_refs=True))
    seen = run_collecting(new_study, [*LEXICAL, NEURAL])
    labelled = [p for p in seen if p.total]
    assert all(p.work is not None for p in labelled)
    # The last report before the neural metric scored anything: every lexical item done.
    before = max(k for k, p in enumerate(labelled) if not p.message.startswith(NEURAL))
    p = labelled[before]
    assert p.done == len(LEXICAL) * n  # three quarters of the items…
    assert p.done / p.total == 0.75
    assert p.work is not None and p.work < 0.05  # …and little of the work
    works = [q.work for q in labelled]
    assert works == sorted(works)  # never backwards
    assert labelled[-1].work == 1.0 and labelled[-1].done == labelled[-1].total


def test_a_cached_rerun_is_weighed_as_reads(new_study: Study) -> None:
    fill(new_study, 12, with_refs=True)
    run_collecting(new_study, ["bleu", NEURAL])
    seen = [p for p in run_collecting(new_study, ["bleu", NEURAL]) if p.total]
    # Both metrics cached: each is read at the same cost, half of the work each.
    bleu_done = [p for p in seen if p.message.startswith("bleu")][-1]
    assert bleu_done.work == 0.5
    assert seen[-1].work == 1.0
