"""Studies for the dashboard's tests and benchmark, written through the real models.

`synthetic_study` draws a latent quality per item; each metric is that quality plus its own
noise (so metrics correlate with the humans and with each other, by different amounts), and
each rater rates it with their own noise. Bulk inserts keep a 10,000-item study to seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import insert, select

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Annotator, Dataset, Dimension, Item, MetricRun, Rating, Score
from meaningbench.db.study import Study, create_study


@dataclass
class Synthetic:
    item_ids: list[int] = field(default_factory=list)
    metric_names: list[str] = field(default_factory=list)
    raters: list[str] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)
    outputs: dict[int, str] = field(default_factory=dict)


def synthetic_study(
    path: Path,
    *,
    n_items: int = 200,
    n_metrics: int = 5,
    n_raters: int = 2,
    rated_share: float = 1.0,
    seed: int = 0,
) -> tuple[Study, Synthetic]:
    """A study of regular items (4 systems, 4 outputs per source), metric runs and raters."""
    rng = np.random.default_rng(seed)
    study = create_study(path)
    facts = Synthetic()
    quality = rng.uniform(0, 100, n_items)
    with study.session() as s:
        ds = Dataset(name="synthetic")
        s.add(ds)
        s.flush()
        rows = []
        for i in range(n_items):
            source = f"Source sentence number {i // 4} about topic {i // 4 % 17}."
            output = f"Output {i % 4} of source {i // 4}."
            system = f"system-{i % 4}"
            rows.append(
                {
                    "dataset_id": ds.id,
                    "source": source,
                    "output": output,
                    "refs": [],
                    "system": system,
                    "source_group": source_group_key(source),
                    "pair_key": pair_key(source, output, system),
                    "kind": "regular",
                    "meta": {},
                }
            )
        s.execute(insert(Item), rows)
        ids = s.scalars(select(Item.id).order_by(Item.id)).all()
        facts.item_ids = list(ids)
        for k, item_id in enumerate(ids):
            facts.sources[item_id] = rows[k]["source"]
            facts.outputs[item_id] = rows[k]["output"]
        for j in range(n_metrics):
            name = f"metric{j:02d}"
            run = MetricRun(metric=name, config={}, config_hash=f"h{j}", label=name, status="done")
            s.add(run)
            s.flush()
            noise = rng.normal(0, 8 + 6 * j, n_items)
            values = np.clip(quality + noise, 0, 100)
            s.execute(
                insert(Score),
                [
                    {"run_id": run.id, "item_id": item_id, "value": float(v), "raw": float(v)}
                    for item_id, v in zip(ids, values, strict=True)
                ],
            )
            facts.metric_names.append(name)
        dim = s.scalar(select(Dimension).where(Dimension.name == "meaning"))
        assert dim is not None
        for r in range(n_raters):
            name = f"rater{r + 1}"
            ann = Annotator(name=name, kind="named")
            s.add(ann)
            s.flush()
            rated = rng.random(n_items) < rated_share
            bias = rng.normal(0, 5)
            values = np.clip(quality + bias + rng.normal(0, 10, n_items), 0, 100)
            s.execute(
                insert(Rating),
                [
                    {
                        "item_id": item_id,
                        "annotator_id": ann.id,
                        "dimension_id": dim.id,
                        "value": float(round(v)),
                        "duration_ms": int(rng.integers(1500, 20000)),
                        "state": "current",
                        "origin": "test",
                    }
                    for item_id, v, keep in zip(ids, values, rated, strict=True)
                    if keep
                ],
            )
            facts.raters.append(name)
    return study, facts
