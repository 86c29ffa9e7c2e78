"""subset2evaluate's own methods beside the strategies (`selection_baselines`), run through
the installed package on SimpDA 2022's real outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from meaningbench.analysis.selection_baselines import (
    BASELINES,
    PREFIX,
    baseline_orders,
    order_of,
    source_items,
)
from meaningbench.analysis.selection_sim import simulate_study, simulate_study_systems
from meaningbench.cli import main
from meaningbench.db.study import open_study
from meaningbench.errors import UserError

s2e = pytest.importorskip("subset2evaluate.select_subset")

METRICS = "bleu,chrf"


@pytest.fixture(scope="module")
def simpda(shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("s2e") / "simpda.mbstudy"
    source = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    assert main(["import", str(path), str(source), "--dataset", "simpda"]) == 0
    assert main(["score", str(path), "--metrics", METRICS, "--workers", "1", "--quiet"]) == 0
    return path


def _toy() -> tuple[list[object], ...]:
    # Three sources with systems A and B, and a fourth with A only.
    sources = ["s1", "s1", "s2", "s2", "s3", "s3", "s4"]
    systems = ["A", "B", "A", "B", "B", "A", "A"]
    outputs = ["a cat", "a dog", "the sun is up", "the sun is up", "x y", "z", "lone"]
    texts = ["S1", "S1", "S2", "S2", "S3", "S3", "S4"]
    return sources, systems, outputs, texts


def test_sources_become_subset2evaluate_items_and_come_back_as_outputs() -> None:
    sources, systems, outputs, texts = _toy()
    metric = np.array([[0.1], [0.9], [0.5], [0.5], [0.3], [0.6], [0.2]])
    items, rows_of, rest = source_items(sources, systems, outputs, texts, metric, ["bleu"])
    assert [it["src"] for it in items] == ["S1", "S2", "S3"]
    assert [it["i"] for it in items] == [0, 1, 2]
    assert items[2]["tgt"] == {"B": "x y", "A": "z"}
    assert items[0]["scores"] == {"A": {"bleu": 0.1}, "B": {"bleu": 0.9}}
    assert [r.tolist() for r in rows_of] == [[0, 1], [2, 3], [4, 5]]
    # The source without system B is not the package's kind of item: its outputs go last.
    assert [r.tolist() for r in rest] == [[6]]
    # The package's own order of its items, spread back to the outputs.
    ranked = s2e.basic(items, method="metric_var", metric="bleu")
    want = np.concatenate([rows_of[it["i"]] for it in ranked] + [np.array([6])])
    utility = np.array([0.16, 0.0, 0.0225])  # the variances over A and B
    assert order_of(utility, rows_of, 0, rest).tolist() == want.tolist() == [0, 1, 4, 5, 2, 3, 6]
    # Ties fall to the seed (every order of tied sources turns up), a NaN goes last.
    tied = {tuple(order_of(np.zeros(3), rows_of, s).tolist()) for s in range(20)}
    assert len(tied) == 6
    assert order_of(np.array([np.nan, 1.0, 2.0]), rows_of, 3).tolist()[-2:] == [0, 1]


def test_the_baselines_are_the_packages_methods() -> None:
    sources, systems, outputs, texts = _toy()
    metric = np.array([[0.1], [0.9], [0.5], [0.5], [0.3], [0.6], [0.2]])
    found = baseline_orders(
        sources, systems, outputs, texts, metric, ["bleu"], "bleu", seeds=range(3)
    )
    items, rows_of, rest = source_items(sources, systems, outputs, texts, metric, ["bleu"])
    for b in BASELINES:
        if b.name in found.unavailable:
            continue
        args = {"metric": "bleu"} if b.reads_metric else dict(b.options)
        ranked = s2e.basic(list(items), method=b.method, **args)
        utility = {it["i"]: it["subset2evaluate_utility"] for it in ranked}
        for order in found.orders[b.name]:
            # Each output once; the sources in the package's utility order.
            assert sorted(order.tolist()) == list(range(7)) and order[-1] == 6
            seen = [int(np.flatnonzero([order[0] in r for r in rows_of])[0])]
            for k in range(2, 6, 2):
                seen.append(int(np.flatnonzero([order[k] in r for r in rows_of])[0]))
            values = [utility[i] for i in seen]
            assert values == sorted(values, reverse=True)
    assert set(found.orders) >= {PREFIX + "metric_var", PREFIX + "div_unigram", PREFIX + "div_bleu"}
    with pytest.raises(UserError, match="--baseline-metric chrf"):
        baseline_orders(sources, systems, outputs, texts, metric, ["bleu"], "chrf", range(1))


def test_pyirt_is_reported_unavailable_with_the_reason_where_py_irt_is_missing() -> None:
    try:
        import py_irt  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("py-irt is installed here")
    sources, systems, outputs, texts = _toy()
    metric = np.arange(7, dtype=float)[:, None]
    found = baseline_orders(sources, systems, outputs, texts, metric, ["bleu"], "bleu", range(1))
    why = found.unavailable[PREFIX + "pyirt_diffdisc"]
    assert "py-irt" in why and "cuda" in why


def test_a_study_without_the_packages_kind_of_item_gets_every_baseline_unavailable() -> None:
    sources, systems, outputs, texts = _toy()
    metric = np.arange(7, dtype=float)[:, None]
    # No source holds both systems (QuestEval's case): the package's loaders keep nothing.
    lone = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]
    found = baseline_orders(lone, systems, outputs, texts, metric, ["bleu"], "bleu", range(2))
    assert not found.orders and found.n_other_sources == 7
    assert set(found.unavailable) == {b.name for b in BASELINES}
    assert "no source holds an output of each of the study's 2 systems" in found.lines()[1]
    # Outputs without a system (ASSET's case): nothing to compare.
    found = baseline_orders(sources, [None] * 7, outputs, texts, metric, ["bleu"], "bleu", [0])
    assert not found.orders and "carry no system" in found.unavailable[PREFIX + "metric_var"]
    assert found.lines()[0].endswith("none ran on this study")


def test_simpda_both_targets_carry_the_baselines_beside_the_strategies(simpda: Path) -> None:
    study = open_study(simpda)
    try:
        sim = simulate_study(
            study,
            ("disagreement",),
            seeds=2,
            step=25.0,
            resamples=20,
            compare_subset2evaluate=True,
            baseline_metric="chrf[refs=source]",
        )
        systems = simulate_study_systems(
            study, ("disagreement",), seeds=2, step=25.0, compare_subset2evaluate=True
        )
    finally:
        study.close()
    ran = list(sim.baselines.orders) if sim.baselines else []
    assert ran[:2] == [PREFIX + "metric_var", PREFIX + "metric_cons"]
    # The same table (the settle replay and the field's rows) and the same JSON.
    assert list(sim.curves) == ["random", "disagreement", *ran]
    assert sim.field is not None and [r.strategy for r in sim.field.rows][2:] == ran
    out = json.loads(json.dumps(sim.to_dict()))
    assert out["subset2evaluate"]["metric"] == "chrf[refs=source]"
    assert out["subset2evaluate"]["ran"] == ran
    assert out["subset2evaluate"]["sources"] + out["subset2evaluate"][
        "sources_without_every_system"
    ] == len({str(s) for s in study_sources(simpda)})
    for name in ran:
        for curve in sim.curves[name]:
            assert curve.items[-1] == 360 and curve.tau[-1] == 1.0
    # Systems: the same baselines, read by the first candidate metric by default.
    assert systems.baselines is not None and systems.baselines.metric == "bleu[refs=source]"
    assert [r.strategy for r in systems.field.rows] == ["random", "disagreement", *ran]
    assert all(r.parity > 0 for r in systems.field.rows)


def study_sources(path: Path) -> list[object]:
    from meaningbench.analysis.data import load_study_data

    study = open_study(path)
    try:
        return list(load_study_data(study).items["source_group"])
    finally:
        study.close()
