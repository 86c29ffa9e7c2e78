"""Studies filled with items, throw-away metrics registered for one test at a time, and the
tiny encoder that the sweep's tests sweep."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from meaningbench.db.study import Study
from meaningbench.metrics.base import Availability, ItemScore, Metric, MetricInfo, Pair
from meaningbench.metrics.registry import metric_classes, register, unregister
from meaningbench.runtime import CancelToken
from tests.jobs.studydata import add_items
from tests.metrics.neural.conftest import minilm_path, tiny_encoder  # noqa: F401 - fixtures

SENTENCES = [
    "The cat perched on the mat while the dog slept in the warm kitchen.",
    "About 95 species are currently accepted by most botanists.",
    "The committee postponed its decision until further evidence was available.",
    "Heavy rain caused the river to overflow its banks near the old bridge.",
    "She studied medicine in Paris before returning to her home town.",
    "The museum houses a large collection of ancient coins and pottery.",
    "Despite the storm, the ferry left the harbour on schedule.",
    "The new law requires companies to publish their emissions every year.",
    "His first novel was rejected by twelve publishers before it became a success.",
    "Volunteers planted more than a thousand trees along the motorway.",
    "The orchestra performed the symphony without its usual conductor.",
    "Scientists discovered a new species of frog in the rainforest.",
]


def system_output(sentence: str, system: int) -> str:
    """Deterministic, different outputs per system: kept, shortened, reordered, cut."""
    words = sentence.rstrip(".").split()
    if system == 0:
        return sentence
    if system == 1:
        return " ".join(w for i, w in enumerate(words) if i % 4 != 2) + "."
    if system == 2:
        half = len(words) // 2
        return " ".join(words[half:] + words[:half]) + "."
    return " ".join(words[: max(2, 2 * len(words) // 3)]) + "."


def make_rows(n: int, *, with_refs: bool = False) -> list[tuple[str, str, list[str], str]]:
    rows = []
    for i in range(n):
        base = SENTENCES[i % len(SENTENCES)]
        round_ = i // (len(SENTENCES) * 4)
        source = base if round_ == 0 else f"{base[:-1]} in round {round_}."
        system = (i // len(SENTENCES)) % 4
        refs = [system_output(source, 3), source.replace("The ", "A ")] if with_refs else []
        rows.append((source, system_output(source, system), refs, f"sys{system}"))
    return rows


@pytest.fixture
def study_with_items(new_study: Study) -> Study:
    add_items(new_study, make_rows(48, with_refs=True))
    return new_study


def fill(study: Study, n: int, **kw: Any) -> list[int]:
    return add_items(study, make_rows(n, **kw))


class FlakyMetric(Metric):
    """Raises on a whole batch when an output contains BOOM (like a library choking)."""

    info: ClassVar[MetricInfo] = MetricInfo("test_flaky", "Flaky", "lexical", "test metric")
    defaults: ClassVar[dict[str, Any]] = {"reference_mode": "source"}

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        for p in pairs:
            if "BOOM" in p.output:
                raise ValueError("cannot score BOOM")
        return [ItemScore(float(len(p.output)), float(len(p.output))) for p in pairs]


class BrokenMetric(Metric):
    """Fails on everything, as a metric whose model cannot load."""

    info: ClassVar[MetricInfo] = MetricInfo("test_broken", "Broken", "neural", "test metric")
    defaults: ClassVar[dict[str, Any]] = {}
    calls = 0

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        type(self).calls += 1
        raise RuntimeError("model missing")


class UnavailableMetric(Metric):
    info: ClassVar[MetricInfo] = MetricInfo("test_unavailable", "Unavailable", "neural", "t")
    defaults: ClassVar[dict[str, Any]] = {}

    def availability(self) -> Availability:
        return Availability(False, "needs a thing this machine lacks")

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        raise AssertionError("an unavailable metric must not run")


class ModelMetric(Metric):
    """Scores with a 'model' (a folder whose marker file holds the value to give)."""

    info: ClassVar[MetricInfo] = MetricInfo(
        "test_model", "Model", "trained", "test metric", needs_model=True
    )
    defaults: ClassVar[dict[str, Any]] = {"model": None, "device": "auto", "batch_size": 8}

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        value = float((Path(self.config["model"]) / "value.txt").read_text())
        return [ItemScore(value, value) for _ in pairs]

    def model_id(self) -> str | None:
        return str(self.config["model"])


TEST_METRICS = (FlakyMetric, BrokenMetric, UnavailableMetric, ModelMetric)


@pytest.fixture
def test_metrics() -> Iterator[None]:
    metric_classes()  # load the real families first
    for cls in TEST_METRICS:
        register(cls)
    BrokenMetric.calls = 0
    try:
        yield
    finally:
        for cls in TEST_METRICS:
            unregister(cls.info.name)
