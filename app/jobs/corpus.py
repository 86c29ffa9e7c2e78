"""Corpus-level scores per system: each metric's own corpus formula (corpus BLEU, chrF and
TER, EASSE's corpus SARI), or the mean item value for metrics without one.

Only regular items count (control items are made up for quality control); items without a
system are grouped under "(none)".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import PlannedMetric, expand_specs, plan_metric
from meaningbench.jobs.score_store import (
    load_items,
    open_existing,
    registered_models,
    study_options,
)
from meaningbench.metrics.base import Availability, Metric, Pair, resolve_references
from meaningbench.runtime import JobContext

NO_SYSTEM = "(none)"


@dataclass
class CorpusResult:
    systems: dict[str, dict[str, float | None]] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"systems": self.systems, "items": self.items, "unavailable": self.unavailable}


def _mean_item_value(metric: Metric, pairs: list[Pair]) -> float | None:
    values = [s.value for s in metric.score_batch(pairs) if s.error is None and s.value is not None]
    return sum(values) / len(values) if values else None


def corpus_scores(
    study_path: Path,
    metrics: list[str],
    options: dict[str, Any] | None = None,
    ctx: JobContext | None = None,
) -> CorpusResult:
    ctx = ctx or JobContext()
    study = open_existing(study_path, reading=True)
    try:
        options = {**study_options(study), **(options or {})}
        registered = registered_models(study)
        specs, is_all = expand_specs(metrics, registered)
        by_name = {r.name: r for r in registered}
        plans = []
        for spec in specs:
            try:
                plans.append(plan_metric(spec, options, by_name))
            except InputError as exc:
                if spec.explicit:
                    raise
                plans.append(PlannedMetric(spec, None, spec.text, Availability(False, str(exc))))
        items = load_items(study, kinds=("regular",))
    finally:
        study.close()
    result = CorpusResult()
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[it.system or NO_SYSTEM].append(i)
    result.items = {name: len(idx) for name, idx in sorted(groups.items())}
    result.systems = {name: {} for name in sorted(groups)}
    runnable = []
    for plan in plans:
        if plan.metric is None or not plan.availability.ok:
            if not is_all or plan.spec.explicit:
                result.unavailable[plan.label] = plan.availability.reason or "unavailable"
            continue
        runnable.append(plan)
    total = len(runnable) * len(groups)
    done = 0
    for plan in runnable:
        metric = plan.metric
        assert metric is not None
        mode = metric.reference_mode if "reference_mode" in metric.defaults else None
        for name in sorted(groups):
            ctx.check()
            pairs = []
            for i in groups[name]:
                it = items[i]
                refs = resolve_references(it.source, it.references, mode) if mode else ()
                pairs.append(Pair(it.id, it.source, it.output, refs, it.system))
            value = metric.corpus_score(pairs)
            if value is None and pairs:
                value = _mean_item_value(metric, pairs)
            result.systems[name][plan.label] = value
            done += 1
            ctx.progress(done, total, plan.label)
    return result
