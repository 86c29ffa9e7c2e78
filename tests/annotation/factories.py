"""Study files with made-up but sentence-like items, for the annotation tests and benchmarks."""

from __future__ import annotations

import random

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Item
from meaningbench.db.study import Study
from tests.analysis.studybuild import dataset_named

NOUNS = [
    "river",
    "village",
    "teacher",
    "garden",
    "letter",
    "market",
    "doctor",
    "window",
    "mountain",
    "library",
    "station",
    "harvest",
    "captain",
    "engine",
    "museum",
    "bridge",
    "forest",
    "student",
    "kitchen",
    "island",
    "council",
    "storm",
]
VERBS = [
    "crossed",
    "visited",
    "painted",
    "opened",
    "described",
    "repaired",
    "followed",
    "protected",
    "measured",
]
ADJS = [
    "old",
    "quiet",
    "narrow",
    "bright",
    "famous",
    "local",
    "heavy",
    "early",
    "distant",
    "careful",
]


def regular_item(dataset_id: int, source: str, output: str, system: str) -> Item:
    """An item as an import would write it: keys derived from its texts, no references."""
    return Item(
        dataset_id=dataset_id,
        source=source,
        output=output,
        references=[],
        system=system,
        source_group=source_group_key(source),
        pair_key=pair_key(source, output, system),
        kind="regular",
        meta={},
    )


def sentence(rng: random.Random, n_words: int) -> str:
    words = ["The", rng.choice(ADJS), rng.choice(NOUNS), rng.choice(VERBS), "the"]
    while len(words) < n_words:
        words.append(rng.choice(NOUNS + ADJS + VERBS + ["and", "near", "with", "of"]))
    return " ".join(words) + "."


def add_items(
    study: Study,
    n_sources: int,
    outputs_per_source: int = 2,
    *,
    dataset: str = "demo",
    seed: int = 0,
) -> list[int]:
    """`n_sources` sources with `outputs_per_source` system outputs each; returns item ids."""
    rng = random.Random(seed)
    with study.session() as s:
        ds = dataset_named(s, dataset)
        rows = []
        for i in range(n_sources):
            src = sentence(rng, rng.randint(10, 22)) + f" ({dataset} {seed} {i})"
            for k in range(outputs_per_source):
                out = sentence(rng, rng.randint(6, 16))
                system = f"system-{k}"
                rows.append(regular_item(ds.id, src, out, system))
        s.add_all(rows)
        s.flush()
        return [r.id for r in rows]
