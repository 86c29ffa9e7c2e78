"""Studies for the window's tests, written through the real models (no importer needed).

`populated_study` knows its own contents (the `Facts`), so tests compare what the window
shows with what was written, not with what the window's own queries return.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import (
    Annotator,
    Dataset,
    Dimension,
    Item,
    ItemNote,
    MetricRun,
    Rating,
    Score,
)
from meaningbench.db.study import Study, create_study


@dataclass
class Facts:
    item_ids: list[int] = field(default_factory=list)  # regular items
    control_ids: list[int] = field(default_factory=list)
    dataset_of: dict[int, str] = field(default_factory=dict)
    system_of: dict[int, str] = field(default_factory=dict)
    text_of: dict[int, tuple[str, str]] = field(default_factory=dict)
    rated: set[int] = field(default_factory=set)
    flagged: set[int] = field(default_factory=set)
    ratings: dict[int, list[tuple[str, float]]] = field(default_factory=dict)  # meaning
    bleu: dict[int, float] = field(default_factory=dict)
    run_label: str = "bleu"


WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "while",
    "dog",
    "ran",
    "far",
    "away",
    "from",
    "home",
    "and",
    "city",
    "lights",
    "were",
    "bright",
]


def populated_study(path: Path, *, n_items: int = 60, seed: int = 7) -> tuple[Study, Facts]:
    """Two datasets, three systems, control items, ratings by two people and an aggregate,
    flags (in ratings and in notes) and one BLEU run with a failed item."""
    rng = random.Random(seed)
    study = create_study(path)
    facts = Facts()
    with study.session() as s:
        alpha, beta = Dataset(name="alpha"), Dataset(name="beta")
        s.add_all([alpha, beta])
        meaning = s.query(Dimension).filter_by(name="meaning").one()
        ann = [Annotator(name="ann1"), Annotator(name="ann2")]
        agg = Annotator(name="aggregate:alpha", kind="aggregate")
        s.add_all([*ann, agg])
        s.flush()
        items = []
        for i in range(n_items):
            ds = alpha if i % 3 else beta
            system = f"sys{i % 3}"
            source = " ".join(rng.choices(WORDS, k=10)) + f" number {i}"
            output = " ".join(rng.choices(WORDS, k=6)) + (" needle" if i % 10 == 4 else "")
            item = Item(
                dataset=ds,
                source=source,
                output=output,
                references=[f"reference {i}"] if i % 5 == 0 else [],
                system=system,
                source_group=source_group_key(source),
                pair_key=pair_key(source, output, system),
            )
            items.append(item)
        s.add_all(items)
        s.flush()
        for item in items:
            facts.item_ids.append(item.id)
            facts.dataset_of[item.id] = item.dataset.name
            facts.system_of[item.id] = item.system or ""
            facts.text_of[item.id] = (item.source, item.output)
        controls = []
        for parent in items[:4]:
            c = Item(
                dataset=parent.dataset,
                source=parent.source,
                output=parent.source,
                system=parent.system,
                source_group=parent.source_group,
                pair_key=pair_key(parent.source, parent.source, "control"),
                kind="control-identical",
                parent_id=parent.id,
            )
            controls.append(c)
        s.add_all(controls)
        s.flush()
        facts.control_ids = [c.id for c in controls]
        for i, item in enumerate(items):
            if i % 4 == 0:
                continue  # a quarter stay unrated
            raters = [ann[0]] if i % 2 else [ann[0], ann[1]]
            for a in raters:
                value = float(rng.randint(0, 100))
                flagged = i % 11 == 1 and a is ann[0]
                s.add(
                    Rating(
                        item_id=item.id,
                        annotator_id=a.id,
                        dimension_id=meaning.id,
                        value=value,
                        flagged=flagged,
                        duration_ms=1500 + i,
                        comment="odd output" if flagged else None,
                    )
                )
                facts.ratings.setdefault(item.id, []).append((a.name, value))
                if flagged:
                    facts.flagged.add(item.id)
            facts.rated.add(item.id)
            # A superseded rating must not count.
            if i % 6 == 1:
                s.add(
                    Rating(
                        item_id=item.id,
                        annotator_id=ann[1].id,
                        dimension_id=meaning.id,
                        value=1.0,
                        state="superseded",
                    )
                )
        for i in (2, 13):
            s.add(ItemNote(item_id=items[i].id, annotator_id=ann[1].id, comment="check this"))
            facts.flagged.add(items[i].id)
        run = MetricRun(metric="bleu", config={}, config_hash="h" * 16, label="bleu", status="done")
        s.add(run)
        s.flush()
        for i, item in enumerate(items):
            if i == 5:
                s.add(Score(run_id=run.id, item_id=item.id, value=None, error="boom"))
                continue
            value = round(rng.uniform(0, 100), 3)
            s.add(
                Score(
                    run_id=run.id,
                    item_id=item.id,
                    value=value,
                    raw=value / 100,
                    details={"bp": 1.0},
                )
            )
            facts.bleu[item.id] = value
    return study, facts


def add_scores(
    path: Path, metric: str, values: dict[int, float], *, config_hash: str = "c" * 16
) -> int:
    """A worker's writes, from a connection of their own: a run and its scores."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            cur = conn.execute(
                "INSERT INTO metric_run (metric, config, config_hash, label, versions, status, "
                "started_at, n_items, n_failed, elapsed_s) "
                "VALUES (?, '{}', ?, ?, '{}', 'done', '2024-01-01', 0, 0, 0)",
                (metric, config_hash, metric),
            )
            run_id = int(cur.lastrowid or 0)
            conn.executemany(
                "INSERT INTO score (run_id, item_id, value, raw) VALUES (?, ?, ?, ?)",
                [(run_id, i, v, v) for i, v in values.items()],
            )
    finally:
        conn.close()
    return run_id


def bulk_study(path: Path, n: int, *, systems: int = 5) -> Study:
    """A large study written with raw inserts (seconds for 10^6 items, not minutes)."""
    study = create_study(path)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute(
            "INSERT INTO dataset (id, name, format, imported_at, meta) "
            "VALUES (1, 'bulk', 'csv', '2024-01-01', '{}')"
        )
        rng = random.Random(0)

        def rows():
            for i in range(1, n + 1):
                src = " ".join(rng.choices(WORDS, k=12))
                out = " ".join(rng.choices(WORDS, k=8))
                yield (i, src, out, f"sys{i % systems}", f"g{i // 5}", f"p{i}")

        conn.executemany(
            "INSERT INTO item (id, dataset_id, source, output, refs, system, source_group, "
            "pair_key, kind, meta) VALUES (?, 1, ?, ?, '[]', ?, ?, ?, 'regular', '{}')",
            rows(),
        )
        conn.commit()
    finally:
        conn.close()
    return study
