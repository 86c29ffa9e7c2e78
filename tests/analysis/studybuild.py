"""Build small real studies for the analysis tests, through meaningbench.db.models directly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Annotator, Dataset, Dimension, Item, MetricRun, Rating, Score
from meaningbench.db.study import Study

# Eight everyday source sentences of different topics and lengths.
SOURCES = [
    "The cat sat on the mat near the door.",
    "Stock markets fell sharply after the central bank raised interest rates.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "The committee postponed its decision until next spring.",
    "Volcanic eruptions can cool the global climate for several years.",
    "Children learn languages faster than most adults do.",
    "The bridge was closed because of strong winds.",
    "Many birds migrate south when the weather turns cold.",
]


@dataclass
class Built:
    item_ids: list[int] = field(default_factory=list)
    annotators: dict[str, int] = field(default_factory=dict)


def dataset_named(s: Session, name: str) -> Dataset:
    """The dataset of that name, made when the study has none."""
    ds = s.scalar(select(Dataset).where(Dataset.name == name))
    if ds is None:
        ds = Dataset(name=name)
        s.add(ds)
        s.flush()
    return ds


def add_items(
    study: Study,
    rows: Sequence[tuple[str, str, str | None]],
    *,
    dataset: str = "d",
    kind: str = "regular",
    parents: Sequence[int | None] | None = None,
) -> list[int]:
    """Items from (source, output, system) rows; returns their ids in order."""
    with study.session() as s:
        ds = dataset_named(s, dataset)
        made = []
        for k, (source, output, system) in enumerate(rows):
            item = Item(
                dataset_id=ds.id,
                source=source,
                output=output,
                system=system,
                source_group=source_group_key(source),
                pair_key=pair_key(source, output, f"{kind}{k}" if kind != "regular" else system),
                kind=kind,
                parent_id=parents[k] if parents else None,
            )
            s.add(item)
            made.append(item)
        s.flush()
        return [i.id for i in made]


def annotator(study: Study, name: str, kind: str = "named") -> int:
    with study.session() as s:
        a = s.scalar(select(Annotator).where(Annotator.name == name))
        if a is None:
            a = Annotator(name=name, kind=kind)
            s.add(a)
            s.flush()
        return a.id


def add_ratings(
    study: Study,
    name: str,
    values: dict[int, float],
    *,
    dimension: str = "meaning",
    kind: str = "named",
    durations: dict[int, int] | None = None,
    origin: str = "ui",
) -> None:
    ann = annotator(study, name, kind)
    with study.session() as s:
        dim = s.scalar(select(Dimension).where(Dimension.name == dimension))
        assert dim is not None
        for item_id, value in values.items():
            s.add(
                Rating(
                    item_id=item_id,
                    annotator_id=ann,
                    dimension_id=dim.id,
                    value=float(value),
                    duration_ms=(durations or {}).get(item_id),
                    origin=origin,
                )
            )


def add_scores(
    study: Study, metric: str, values: dict[int, float | None], *, config: dict | None = None
) -> None:
    with study.session() as s:
        run = MetricRun(
            metric=metric,
            config=config or {},
            config_hash=f"h-{metric}-{sorted((config or {}).items())}",
            label=metric,
            status="done",
        )
        s.add(run)
        s.flush()
        for item_id, value in values.items():
            s.add(Score(run_id=run.id, item_id=item_id, value=value, raw=value))
