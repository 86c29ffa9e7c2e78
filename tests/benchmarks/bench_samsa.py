"""SAMSA throughput: items per second with exact + lemma alignment and with word vectors.

    python -m pytest tests/benchmarks/bench_samsa.py -s -p no:xdist

1,000 outputs of one UCCA-annotated source (three scenes), each output a different
shuffle of kept, dropped and replaced clauses, scored through the metric's `score_batch`
(scene lookup from a provider, so only SAMSA itself is timed). Writes
tests/benchmarks/results/samsa.json. No target is set by the specification; the figures
say what a battery run costs.
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.structural.samsa import SamsaMetric
from meaningbench.metrics.structural.ucca import parse_ucca_xml

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "samsa.json"
UCCA = ROOT / "tests" / "metrics" / "structural" / "data" / "storm.xml"
N = 1000
CLAUSES = [
    ["The storm passed.", "After the storm ended,", "The storm was over."],
    ["The old fisherman repaired his boat.", "An old man fixed his ship.", "He mended the boat."],
    ["He sailed to Port Isaac.", "Then he went to Port Isaac.", "He stayed home."],
]


def _outputs(n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(n):
        parts = [rng.choice(c) for c in CLAUSES if rng.random() > 0.2]
        out.append(" ".join(parts) or "Nothing.")
    return out


@pytest.mark.benchmark
def test_samsa_throughput() -> None:
    passage = parse_ucca_xml(UCCA)
    source = " ".join(passage.tokens)
    pairs = [Pair(i, source, o, (source,)) for i, o in enumerate(_outputs(N))]
    figures: dict[str, float] = {}
    for embeddings in (False, True):
        metric = SamsaMetric(embeddings=embeddings)
        metric.use_scenes(lambda batch: {p.item_id: passage.scenes for p in batch})
        metric.score_batch(pairs[:4])  # loads WordNet, and the encoder when used
        began = time.perf_counter()
        scores = metric.score_batch(pairs)
        elapsed = time.perf_counter() - began
        assert all(s.error is None for s in scores)
        key = "with_embeddings" if embeddings else "exact_lemma"
        figures[f"{key}_items_per_s"] = round(N / elapsed, 1)
        figures[f"{key}_ms_per_item"] = round(1000 * elapsed / N, 3)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "samsa",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": {
                    "platform": platform.platform(),
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                },
                "items": N,
                "scenes_per_source": len(passage.scenes),
                **figures,
                "note": "shared 2-core machine: other test runs were active, figures pessimistic",
            },
            indent=2,
        )
        + "\n"
    )
    print(json.dumps(figures, indent=2))
