"""The metrics a shard folder carries: planned from specs against the study when exporting,
built again from their config wherever the shards are scored, and checked on both sides to
have the config hash the study files their scores under."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import (
    PlannedMetric,
    RegisteredModelRef,
    expand_specs,
    plan_metric,
)
from meaningbench.jobs.score_hashes import Hashes, metric_cache_key, prepare_metric
from meaningbench.metrics.base import Metric
from meaningbench.metrics.names import parse_spec, split_specs
from meaningbench.metrics.registry import get_metric_class

from .layout import ShardMetric

# Rows handed to one task of a CPU metric, and to one model call (a model sorts its slice by
# length and batches it itself: a larger slice gives fuller batches).
TASK_ROWS = 500
MODEL_ROWS = 2048


def plan_metrics(
    texts: Sequence[str], options: Mapping[str, Any], registered: Sequence[RegisteredModelRef]
) -> list[PlannedMetric]:
    """The metrics the specs name, as `meaningbench score` plans them; `all` keeps the
    available ones, and a metric named explicitly must be available."""
    specs, _ = expand_specs(texts, registered)
    by_name = {r.name: r for r in registered}
    out: list[PlannedMetric] = []
    seen: set[str] = set()
    for spec in specs:
        try:
            plan = plan_metric(spec, options, by_name)
        except InputError:
            if spec.explicit:
                raise
            continue
        if not plan.availability.ok:
            if spec.explicit:
                raise InputError(f"{plan.label}: unavailable ({plan.availability.reason})")
            continue
        if plan.label not in seen:
            seen.add(plan.label)
            out.append(plan)
    return out


def shard_metric(plan: PlannedMetric, hashes: Hashes) -> ShardMetric:
    """Prepare a planned metric on the whole study and describe it for the shards; refuse a
    metric whose scores depend on more of the study than the texts one shard row holds."""
    metric = plan.metric
    assert metric is not None
    prepare_metric(metric, hashes)
    if type(metric).extra_inputs is not Metric.extra_inputs:
        raise InputError(
            f"{plan.label}: its scores depend on study data besides the texts (for SAMSA, "
            "the scenes); score it with `meaningbench score`"
        )
    if type(metric)(**metric.config).config_hash() != metric.config_hash():
        raise InputError(
            f"{plan.label}: its config depends on the whole study (an idf corpus); score it "
            "with `meaningbench score`"
        )
    return ShardMetric(
        label=plan.label,
        metric=metric.name,
        config=dict(metric.config),
        config_hash=metric.config_hash(),
        reference_mode=metric_cache_key(metric).mode,
        batches_itself=metric.batches_itself,
        model_name=plan.spec.model,
    )


def build_metric(entry: ShardMetric, runtime: Mapping[str, Any] | None = None) -> Metric:
    """The metric again, from its class and config (plus options that change how it runs,
    not what it computes: device, batch size); its config hash must be the exported one."""
    cls = get_metric_class(entry.metric)
    config = dict(entry.config)
    for key, value in (runtime or {}).items():
        if key in cls.runtime_options and key in cls.defaults and value is not None:
            config[key] = value
    metric = cls(**config)
    if metric.config_hash() != entry.config_hash:
        raise InputError(
            f"{entry.label}: this installation computes config hash {metric.config_hash()}, "
            f"the shards were exported with {entry.config_hash} (a different version of "
            "meaningbench or of the metric's libraries?); export them again"
        )
    return metric


def select_metrics(texts: Sequence[str], exported: Sequence[ShardMetric]) -> list[ShardMetric]:
    """The exported metrics a `--metrics` list names, through the one spec parser (`all`:
    every exported metric)."""
    flat = [s for text in texts for s in split_specs(text)]
    if not flat:
        raise InputError("no metric given; name some (e.g. --metrics bleu,sari) or use all")
    if any(s.lower() == "all" for s in flat):
        return list(exported)
    by_label = {m.label: m for m in exported}
    carried = {m.model_name for m in exported if m.model_name}
    out: list[ShardMetric] = []
    for text in flat:
        spec = parse_spec(text)
        # A model travels by its path, and serves in the shards the metrics it ran for there;
        # `plan_metric` checks and names the spec as `meaningbench score` does.
        served = {
            m.model_name: RegisteredModelRef(
                m.model_name, spec.name, str(m.config.get("model", ""))
            )
            for m in exported
            if m.model_name and m.metric == spec.name
        }
        entry: ShardMetric | None = None
        if spec.model not in carried or spec.model in served:
            entry = by_label.get(plan_metric(spec, {}, served, check_availability=False).label)
        same_name = [m for m in exported if m.metric == spec.name]
        if entry is None and not spec.options and spec.model is None and len(same_name) == 1:
            entry = same_name[0]  # `bleu` for the one BLEU exported, whatever its options
        if entry is None:
            known = ", ".join(by_label) or "none"
            raise InputError(f"{text}: not in these shards (exported: {known})")
        if entry not in out:
            out.append(entry)
    return out
