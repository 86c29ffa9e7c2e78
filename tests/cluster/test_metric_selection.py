"""`--metrics` on a shard folder names exported metrics through `plan_metric`, the one path
from a spec to a configured, named metric: what `meaningbench score` accepts and names so,
the shards accept; what it refuses (a model for a metric it did not run, an unknown option),
they refuse with its message."""

from __future__ import annotations

import pytest

from meaningbench.cluster.layout import ShardMetric
from meaningbench.cluster.metrics import select_metrics
from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import RegisteredModelRef, plan_metric
from meaningbench.metrics.names import parse_spec

ENCODER = RegisteredModelRef("enc", "sbert_cosine", "/opt/models/enc")


def exported(text: str) -> ShardMetric:
    """A metric as the export writes it: planned against the study's registered models."""
    plan = plan_metric(parse_spec(text), {}, {"enc": ENCODER}, check_availability=False)
    metric = plan.metric
    assert metric is not None
    return ShardMetric(
        label=plan.label,
        metric=metric.name,
        config=dict(metric.config),
        config_hash=metric.config_hash(),
        reference_mode=None,
        batches_itself=metric.batches_itself,
        model_name=plan.spec.model,
    )


@pytest.fixture
def shards() -> list[ShardMetric]:
    return [
        exported("bleu"),
        exported("sbert_cosine@enc"),
        exported("bertscore@enc[refs=references]"),
        exported("sbert_cosine[layer=3]"),
    ]


def test_specs_as_written_and_as_printed_select_the_same_entries(
    shards: list[ShardMetric],
) -> None:
    bleu, sbert_enc, bert_enc, sbert_layer = shards
    assert select_metrics(["sbert_cosine@enc"], shards) == [sbert_enc]
    assert select_metrics(["bertscore@enc[refs=references]"], shards) == [bert_enc]
    assert select_metrics([bert_enc.label, "bleu"], shards) == [bert_enc, bleu]
    assert select_metrics(["sbert_cosine[layer=3]", sbert_layer.label], shards) == [sbert_layer]
    assert select_metrics(["all"], shards) == shards


def test_a_model_with_options_the_metric_lacks_is_refused_by_plan_metric(
    shards: list[ShardMetric],
) -> None:
    with pytest.raises(InputError, match=r"unknown option\(s\) nonsense for sbert_cosine"):
        select_metrics(["sbert_cosine@enc[nonsense=1]"], shards)


def test_a_model_asked_for_a_metric_it_did_not_run_is_not_in_the_shards(
    shards: list[ShardMetric],
) -> None:
    with pytest.raises(InputError, match="meaningbert@enc: not in these shards"):
        select_metrics(["meaningbert@enc"], shards)
    with pytest.raises(InputError, match="no model named 'other'"):
        select_metrics(["sbert_cosine@other"], shards)
