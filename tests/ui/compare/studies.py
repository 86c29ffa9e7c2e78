"""Small comparison studies for the compare-view tests and screenshots (real study files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Annotator, Dataset, Dimension, Item, MetricRun, Rating, Score
from meaningbench.db.study import Study
from meaningbench.metrics.base import ItemScore, Metric, Pair, input_hash
from meaningbench.metrics.names import metric_canonical_name

STORM = "After the storm passed, the old fisherman repaired his boat and sailed to Port Isaac."
STORM_REFS = ["The storm passed. The old fisherman fixed his boat and sailed to Port Isaac."]
STORM_OUTPUTS = {
    "Splitter": "The storm passed. Then the old fisherman repaired his boat. He sailed to Port Isaac.",
    "Copy": STORM,
    "Truncator": "The old fisherman repaired his boat.",
    "Paraphraser": "When the storm was over, the old fisherman fixed his boat and went to Port Isaac.",
    "Hallucinator": "The fisherman bought a new boat in Port Isaac after the storm.",
}
# meaning ratings by three raters (hand-written for the demonstration)
STORM_RATINGS = {
    "Splitter": {"ana": 92, "ben": 88, "chloe": 95},
    "Copy": {"ana": 100, "ben": 100, "chloe": 98},
    "Truncator": {"ana": 45, "ben": 38, "chloe": 52},
    "Paraphraser": {"ana": 85, "ben": 90, "chloe": 80},
    "Hallucinator": {"ana": 20, "ben": 31, "chloe": 15},
}
COMMITTEE = (
    "The committee, which met on Tuesday, approved the new budget despite strong objections "
    "from several members."
)
COMMITTEE_OUTPUTS = {
    "Splitter": "The committee met on Tuesday. It approved the new budget. Several members "
    "strongly objected.",
    "Copy": COMMITTEE,
    "Truncator": "The committee approved the budget.",
}
COMMITTEE_RATINGS = {
    "Splitter": {"ana": 90, "ben": 84},
    "Copy": {"ana": 100, "ben": 99},
    "Truncator": {"ana": 55, "ben": 60},
}


@dataclass
class DemoStudy:
    study: Study
    items: dict[tuple[str, str], int] = field(default_factory=dict)  # (source, system) -> id

    def pairs(self, source: str | None = None, *, refs: bool = False) -> list[Pair]:
        out = []
        with self.study.session() as s:
            for item in s.scalars(select(Item).order_by(Item.id)):
                if source is not None and item.source != source:
                    continue
                references = tuple(item.references) if refs and item.references else (item.source,)
                out.append(Pair(item.id, item.source, item.output, references, item.system))
        return out


def add_source(
    demo: DemoStudy,
    source: str,
    outputs: Mapping[str, str],
    ratings: Mapping[str, Mapping[str, float]],
    references: Sequence[str] = (),
    *,
    aggregate: Mapping[str, float] | None = None,
) -> None:
    with demo.study.session() as s:
        ds = s.scalar(select(Dataset).where(Dataset.name == "demo"))
        if ds is None:
            ds = Dataset(name="demo", format="csv")
            s.add(ds)
            s.flush()
        meaning = s.scalar(select(Dimension).where(Dimension.name == "meaning"))
        assert meaning is not None
        raters: dict[str, Annotator] = {a.name: a for a in s.scalars(select(Annotator))}
        for system, output in outputs.items():
            item = Item(
                dataset_id=ds.id,
                source=source,
                output=output,
                references=list(references),
                system=system,
                source_group=source_group_key(source),
                pair_key=pair_key(source, output, system),
            )
            s.add(item)
            s.flush()
            demo.items[(source, system)] = item.id
            values = dict(ratings.get(system, {}))
            kinds = {name: "named" for name in values}
            if aggregate and system in aggregate:
                values["published mean"] = aggregate[system]
                kinds["published mean"] = "aggregate"
            for name, value in values.items():
                if name not in raters:
                    raters[name] = Annotator(name=name, kind=kinds[name])
                    s.add(raters[name])
                    s.flush()
                s.add(
                    Rating(
                        item_id=item.id,
                        annotator_id=raters[name].id,
                        dimension_id=meaning.id,
                        value=float(value),
                    )
                )


def store_scores(
    study: Study,
    metric: Metric,
    pairs: Sequence[Pair],
    scores: Sequence[ItemScore],
) -> int:
    """A finished metric run with its scores, as the scoring job records one."""
    with study.session() as s:
        run = MetricRun(
            metric=metric.name,
            config=metric.config,
            config_hash=metric.config_hash(),
            label=metric_canonical_name(metric),
            status="done",
            n_items=len(pairs),
            n_failed=sum(1 for x in scores if x.error),
        )
        s.add(run)
        s.flush()
        for pair, score in zip(pairs, scores, strict=True):
            s.add(
                Score(
                    run_id=run.id,
                    item_id=pair.item_id,
                    value=score.value,
                    raw=score.raw,
                    details=score.details or None,
                    error=score.error,
                    input_hash=input_hash(pair.source, pair.output, pair.references),
                )
            )
        return run.id


def store_values(study: Study, metric: str, values: Mapping[int, float], **config: Any) -> int:
    """A run of a named metric with given 0–100 values (tests that check the view's numbers)."""
    with study.session() as s:
        run = MetricRun(
            metric=metric,
            config=config,
            config_hash=f"{metric}-{sorted(config.items())}",
            label=metric,
            status="done",
            n_items=len(values),
        )
        s.add(run)
        s.flush()
        for item_id, value in values.items():
            s.add(Score(run_id=run.id, item_id=item_id, value=value, raw=value / 100))
        return run.id
