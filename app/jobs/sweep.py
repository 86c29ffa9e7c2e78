"""The sweep job: every configuration of a model/layer sweep scored as an ordinary metric run.

For each model, the texts the configurations still need are encoded once with the hidden
states of all swept layers kept (`token_embeddings_layers`, `sentence_vectors_layers`),
which fills the embedding caches layer by layer; then the scoring job runs the
configurations' specs, finds every embedding cached, and writes each configuration's run
as a separate `score` would. A layer costs its greedy matching and its writes, not another
forward pass. When a model's layers do not all fit the in-memory embedding cache at once
they are taken in groups that do, one pass per group, and the job says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from meaningbench.jobs.metric_specs import plan_metric
from meaningbench.jobs.score_hashes import Hashes, prepare_metric
from meaningbench.jobs.score_runs import MetricRunSummary
from meaningbench.jobs.score_store import check_cache, load_items, open_existing, registered_models
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.jobs.sweep_plan import SweepConfig, SweepRequest, plan_sweep
from meaningbench.metrics.names import parse_spec
from meaningbench.metrics.neural.support.common import NeuralMetric
from meaningbench.runtime import JobContext, batch_progress

# Options of the request handed to every configuration (the rest is the sweep's own).
SCORING_OPTIONS = ("device", "batch_size", "precision", "embedding_cache_mb")
# The share of the in-memory embedding cache one group of layers may fill: well under half,
# so nothing a group wrote is evicted (or moved) before the scoring reads it.
MEMORY_SHARE = 3


@dataclass
class SweepOutcome:
    configs: list[SweepConfig]
    summaries: list[MetricRunSummary]  # one per configuration, in the same order
    # Per model: the groups of layers encoded together (one forward pass per text each).
    passes: dict[str, list[list[int]]] = field(default_factory=dict)


def _scoring_options(request: SweepRequest) -> dict[str, Any]:
    return {k: v for k, v in request.options.items() if k in SCORING_OPTIONS}


@dataclass
class _Pending:
    """One configuration's metric and the items it has no current score for."""

    config: SweepConfig
    metric: NeuralMetric
    texts: list[str]  # what it embeds of those items
    refs: set[str]  # of them, what a BERTScore run keeps on disk (the reference side)


def _pending(request: SweepRequest, configs: Sequence[SweepConfig]) -> list[_Pending]:
    """What each configuration still has to score, seen as the scoring job will see it."""
    study = open_existing(request.study_path)
    try:
        items = load_items(study)
        hashes = Hashes(items)
        by_name = {r.name: r for r in registered_models(study)}
        options = {**_scoring_options(request), "study": str(request.study_path)}
        metrics: list[tuple[SweepConfig, NeuralMetric]] = []
        for config in configs:
            plan = plan_metric(parse_spec(config.spec), options, by_name)
            # An unavailable configuration is left to the scoring job, which says why.
            if isinstance(plan.metric, NeuralMetric) and plan.availability.ok:
                prepare_metric(plan.metric, hashes)
                metrics.append((config, plan.metric))
        keys = [hashes.cache_key(m) for _, m in metrics]
        for key in keys:
            hashes.get(key.mode)
        states = check_cache(study, keys, items, hashes.digests())
    finally:
        study.close()
    out = []
    for (config, metric), key, state in zip(metrics, keys, states, strict=True):
        if state.current is None:
            continue
        todo = [it for it in items if it.id not in state.current]
        refs_of, _ = hashes.get(key.mode)
        refs = {r for i, it in enumerate(items) if it.id not in state.current for r in refs_of[i]}
        if config.metric == "sbert_cosine":
            texts = [t for it in todo for t in (it.source, it.output)]
        else:
            texts = [it.output for it in todo] + sorted(refs)
        if todo:
            out.append(_Pending(config, metric, list(dict.fromkeys(texts)), refs))
    return out


def _union(pending: Sequence[_Pending]) -> tuple[list[str], set[str]]:
    texts = list(dict.fromkeys(t for p in pending for t in p.texts))
    return texts, {r for p in pending for r in p.refs}


def layer_groups(
    metric: NeuralMetric, layers: Sequence[int], texts: Sequence[str], memory_bytes: int
) -> list[list[int]]:
    """The layers cut into groups whose token embeddings of `texts` fit `memory_bytes`."""
    from meaningbench.metrics.neural.support.encoding import token_ids

    layers = sorted(layers)
    if metric.name != "bertscore" or not texts:
        return [layers]  # pooled vectors: one small vector per text and layer
    loaded = metric.loaded()
    hidden = int(getattr(loaded.model.config, "hidden_size", 1024))
    per_layer = sum(len(ids) for ids in token_ids(loaded, texts)) * hidden * 4
    size = max(1, memory_bytes // max(1, per_layer))
    return [layers[i : i + size] for i in range(0, len(layers), size)]


def _encode(
    metric: NeuralMetric,
    layers: Sequence[int],
    texts: Sequence[str],
    persist: set[str],
    ctx: JobContext,
) -> None:
    """Encode `texts` once for all `layers` into the embedding caches."""
    from meaningbench.metrics.neural.sbert import sentence_vectors_layers
    from meaningbench.metrics.neural.support.encoding import token_embeddings_layers

    config = metric.config
    loaded = metric.loaded()
    shown = f"{layers[0]}–{layers[-1]}" if len(layers) > 1 else str(layers[0])
    message = f"{metric.info.label} {config['model']}: encoding {len(texts):,} texts once for layers {shown}"
    ctx.progress(0, len(texts), message, force=True)
    batch_size = int(config.get("batch_size") or 64)
    disk_mb = float(config.get("embedding_cache_mb") or 0)
    # Each layer's cache asks for the texts in turn; the first ask encodes them all.
    with batch_progress(lambda done, total: ctx.progress(done, total, message)):
        if metric.name == "bertscore":
            token_embeddings_layers(
                loaded, layers, texts, batch_size=batch_size, cancel=ctx.cancel,
                disk_mb=disk_mb, persist=persist,
            )  # fmt: skip
        else:
            sentence_vectors_layers(
                loaded, layers, texts, batch_size=batch_size, cancel=ctx.cancel, disk_mb=disk_mb
            )


def run_sweep(request: SweepRequest, ctx: JobContext) -> SweepOutcome:
    """Score every configuration of the sweep (those stored before are found cached)."""
    from meaningbench.metrics.neural.support.cache import MEMORY

    configs = plan_sweep(request)
    outcome = SweepOutcome(configs, [])
    by_config: dict[SweepConfig, MetricRunSummary] = {}
    families: dict[tuple[str, str], list[SweepConfig]] = {}
    for config in configs:
        families.setdefault((config.model, config.metric), []).append(config)
    for (model, _), family in families.items():
        ctx.check()
        pending = _pending(request, family)
        groups = [sorted({c.layer for c in family})]
        if pending:
            texts, _ = _union(pending)
            layers = sorted({p.config.layer for p in pending})
            groups = layer_groups(
                pending[0].metric, layers, texts, MEMORY.max_bytes // MEMORY_SHARE
            )
            if len(groups) > 1:
                ctx.notice(
                    f"{model}: the embeddings of {len(layers)} layers do not fit the embedding "
                    f"memory cache together; encoding in {len(groups)} passes of up to "
                    f"{len(groups[0])} layers"
                )
        for layers in groups:
            ctx.check()
            todo = [p for p in pending if p.config.layer in layers]
            if todo:
                texts, persist = _union(todo)
                _encode(todo[0].metric, layers, texts, persist, ctx)
                outcome.passes.setdefault(model, []).append(list(layers))
            group = [c for c in family if c.layer in layers]
            by_config.update(zip(group, _score(request, group, ctx), strict=True))
        # Layers with nothing to encode (all stored): the job finds their runs cached.
        rest = [c for c in family if c not in by_config]
        if rest:
            by_config.update(zip(rest, _score(request, rest, ctx), strict=True))
    outcome.summaries = [by_config[c] for c in configs]
    return outcome


def _score(
    request: SweepRequest, configs: Sequence[SweepConfig], ctx: JobContext
) -> list[MetricRunSummary]:
    """The scoring job over the configurations' specs: one summary per configuration."""
    specs = [c.spec for c in configs]
    summaries = score_study(ScoreRequest(request.study_path, specs, _scoring_options(request)), ctx)
    if len(summaries) != len(configs):
        raise RuntimeError(f"the scoring job returned {len(summaries)} runs for {len(configs)}")
    return summaries
