"""The adaptive top-up (`selection_adaptive`) and `simulate --rounds` replaying it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from meaningbench.analysis.selection_adaptive import (
    adaptive_order,
    next_round,
    pair_weights,
    round_sizes,
)
from meaningbench.cli import main

METRICS = "bleu,chrf,ter,sari"


def _data(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0, 1, n)
    metrics = np.column_stack(
        [quality + s * rng.standard_normal(n) for s in (0.05, 0.3, 0.35, 1.0)]
    )
    systems = np.array([f"s{i % 4}" for i in range(n)], dtype=object)
    human = 100 * quality + 10 * rng.standard_normal(n) + np.array([0, 1, 2, 40])[np.arange(n) % 4]
    return human, metrics, systems


@pytest.mark.parametrize("target", ["metrics", "systems"])
def test_a_round_reads_the_rated_items_human_scores_only(target: str) -> None:
    human, metrics, systems = _data()
    rated = np.zeros(human.size, dtype=bool)
    rated[:30] = True
    base = list(range(human.size))
    chosen = next_round(target, human, metrics, systems, rated, base, 20)
    other = human.copy()
    other[~rated] = np.random.default_rng(9).uniform(-1e3, 1e3, int((~rated).sum()))
    assert next_round(target, other, metrics, systems, rated, base, 20) == chosen
    assert len(set(chosen)) == 20 and not rated[chosen].any()


@pytest.mark.parametrize("target", ["metrics", "systems"])
def test_the_first_round_is_the_base_order_and_the_order_a_permutation(target: str) -> None:
    human, metrics, systems = _data()
    base = list(np.random.default_rng(4).permutation(human.size))
    order = adaptive_order(target, base, human, metrics, systems, rounds=4)
    first = round_sizes(human.size, 4)[0]
    assert order[:first] == base[:first]
    assert sorted(order) == list(range(human.size))
    assert round_sizes(human.size, 4) == [15, 30, 45, 60]


def test_pair_weights_are_high_for_unsettled_pairs_only() -> None:
    rng = np.random.default_rng(1)
    quality = rng.uniform(0, 1, 100)
    human = 100 * quality + 5 * rng.standard_normal(100)
    metrics = np.column_stack(
        [quality + s * rng.standard_normal(100) for s in (0.02, 0.3, 0.3, 3.0)]
    )
    w = pair_weights(human, metrics)
    # The best metric against the worst: settled; the two middle ones: a near coin flip.
    assert w[0, 3] < 0.05 and w[1, 2] > 0.3
    assert np.allclose(w, w.T)


def test_a_systems_round_goes_to_the_systems_whose_means_overlap() -> None:
    human, metrics, systems = _data()
    rated = np.zeros(human.size, dtype=bool)
    rated[:40] = True
    chosen = next_round("systems", human, metrics, systems, rated, list(range(human.size)), 20)
    # s3 sits 40 points above the rest: its place is settled, so it gets few items.
    assert sum(systems[i] == "s3" for i in chosen) <= 2


def test_simulate_rounds_adds_a_top_up_row_per_strategy(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "simpda.mbstudy"
    source = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    assert main(["import", str(study), str(source), "--dataset", "simpda"]) == 0
    assert main(["score", str(study), "--metrics", METRICS, "--workers", "1", "--quiet"]) == 0
    base = ["simulate", str(study), "--seeds", "2", "--rounds", "4", "--selection", "variance"]
    for target in ("metrics", "systems"):
        capsys.readouterr()
        args = [*base, "--target", target, "--json", "--step", "25", "--resamples", "20"]
        assert main(args[:-4] if target == "systems" else args) == 0
        out = json.loads(capsys.readouterr().out)
        rows = [r["strategy"] for r in out["field_protocol"]["strategies"]]
        assert rows == ["random", "random+top-up", "variance", "variance+top-up"]
        assert out["rounds"] == 4
        # SPA beside τ for the systems (SimpDA: 59 sources hold all six systems).
        spa = [r["accuracy_spa"] for r in out["field_protocol"]["strategies"]]
        assert all((v is not None) == (target == "systems") for v in spa)
    # The plot draws a top-up row dotted, in its strategy's colour.
    svg = tmp_path / "systems.svg"
    assert main([*base, "--target", "systems", "--out", str(svg)]) == 0
    text = svg.read_text(encoding="utf-8")
    assert ">variance+top-up</text>" in text and "stroke-dasharray='2 3'" in text
    lines = re.findall(r"<polyline [^>]*stroke='(#[0-9a-f]+)'[^>]*>", text)
    assert len(lines) == 4 and lines[0] == lines[1] and lines[2] == lines[3] != lines[0]
    capsys.readouterr()
    assert main([*base, "--rounds", "400"]) == 2
    assert "--rounds must lie between 1 and 50" in capsys.readouterr().err
