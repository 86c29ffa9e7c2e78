"""`meaningbench metaeval --preset wmt25` and `--test pairs` on a real study file: both
WMT25 tasks, MTME's early stopping, the methods text naming the preset, the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from meaningbench.analysis import metaeval_pairs as mp
from meaningbench.analysis import metaeval_significance as sig
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.cli import main
from meaningbench.db.study import Study
from tests.analysis.studybuild import add_items, add_ratings, add_scores

SYSTEMS, SOURCES = 6, 12


@pytest.fixture
def built(new_study: Study):
    rng = np.random.default_rng(11)
    rows = [
        (f"Source sentence {j} about the river and the town.", f"output {j} of {k}", f"sys{k}")
        for j in range(SOURCES)
        for k in range(SYSTEMS)
    ]
    ids = add_items(new_study, rows)
    quality = np.repeat(np.linspace(30, 70, SYSTEMS)[None, :], SOURCES, 0).ravel()
    truth = quality + rng.normal(0, 12, len(ids))
    for name in ("ann", "bob"):
        add_ratings(
            new_study,
            name,
            {
                i: float(np.clip(np.round(t + rng.normal(0, 5)), 0, 100))
                for i, t in zip(ids, truth, strict=True)
            },
        )
    add_scores(
        new_study,
        "bleu",
        {i: float(np.round(t + rng.normal(0, 4))) for i, t in zip(ids, truth, strict=True)},
    )
    add_scores(
        new_study,
        "chrf",
        {i: float(np.round(t + rng.normal(0, 15))) for i, t in zip(ids, truth, strict=True)},
    )
    add_scores(new_study, "ter", {i: float(rng.uniform(0, 100)) for i in ids})
    return new_study


def _json(capsys, *args: str) -> dict:
    assert main(["metaeval", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_wmt25_preset_runs_both_tasks_with_early_stopping(built: Study, capsys) -> None:
    out = _json(capsys, str(built.path), "--preset", "wmt25", "--resamples", "1000")
    system, segment = out["rankings"]
    assert (system["measure"], system["group_by"], system["test"]) == (
        "spa",
        "system",
        "perm-outputs",
    )
    assert (segment["measure"], segment["group_by"], segment["test"]) == (
        "acc_eq_star",
        "item",
        "pairs",
    )
    assert out["settings"]["preset"] == "wmt25"
    for ranking in (system, segment):
        assert ranking["early_stop"] == {"block": 100, "stop_below": 0.02, "stop_above": 0.5}
        used = [v for row in ranking["resamples_used"].values() for v in row.values()]
        assert used and all(v % 100 == 0 and 100 <= v <= 1000 for v in used)
    # The noise metric is significantly below the good one: a pair that stopped early.
    order = [r["metric"] for r in segment["ranking"]]
    assert order[0].startswith("bleu") and order[-1].startswith("ter")
    assert segment["ranking"][-1]["cluster"] > segment["ranking"][0]["cluster"]
    p = segment["p_values"][order[0]][order[-1]]
    # As in MTME's pairwise test, the early check runs only after a draw that reached the
    # observed difference: a pair no draw reaches runs every draw.
    assert p == 0.0 and segment["resamples_used"][order[0]][order[-1]] == 1000
    # SPA's permutation test checks at every block (MTME's PermutationSigDiff): it stops.
    top, bottom = system["ranking"][0]["metric"], system["ranking"][-1]["metric"]
    assert system["p_values"][top][bottom] < 0.02
    assert system["resamples_used"][top][bottom] == 100
    # The same seed through the engine gives the same p-values.
    data = metaeval_data_from_study(built, "meaning")
    again = sig.rank_metrics(
        data,
        "acc_eq_star",
        group_by="item",
        test="pairs",
        intervals=False,
        early_stop=mp.EarlyStop(),
    )
    for a in order:
        for b in order:
            if a != b:
                assert segment["p_values"][a][b] == pytest.approx(again.p_values.loc[a, b])
    methods = out["methods"]
    assert methods.startswith("Preset wmt25:") and "tasks.WMT25" in methods
    assert "pairwise permutation test" in methods and "each output on its own" in methods
    assert "whose last draw reached the observed difference" in methods


def test_wmt25_preset_as_text(built: Study, capsys) -> None:
    assert main(["metaeval", str(built.path), "--preset", "wmt25", "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "preset wmt25" in text
    assert "Ranking by spa, system level" in text
    assert "Ranking by acc_eq_star, per source, averaged" in text
    assert "Methods:\nPreset wmt25" in text


def test_test_pairs_is_offered_for_kendall_measures_and_refused_for_tau_c(
    built: Study, capsys
) -> None:
    path = str(built.path)
    out = _json(
        capsys,
        path,
        "--measures",
        "kendall_b",
        "--group-by",
        "item",
        "--test",
        "pairs",
        "--resamples",
        "300",
        "--no-stopping",
    )
    assert out["ranking"]["test"] == "pairs"
    assert "swaps the two metrics' outcomes" in out["methods"]
    assert (
        main(["metaeval", path, "--measures", "kendall_c", "--test", "pairs", "--no-stopping"]) == 2
    )
    assert "distinct scores" in capsys.readouterr().err
    assert main(["metaeval", path, "--measures", "pearson", "--test", "pairs"]) == 2
    assert "not a count of outcomes of pairs" in capsys.readouterr().err


def test_a_ranking_takes_its_values_from_a_table_made_with_its_settings(built: Study) -> None:
    """The preset's table and its rankings need the same values (SPA's permutations,
    acc*_eq's ε search): a table evaluated with the ranking's settings is read, not made
    again; one made with another seed is not."""
    from meaningbench.analysis.metaeval import evaluate

    data = metaeval_data_from_study(built, "meaning")
    tasks = (("spa", "system", "perm-outputs"), ("acc_eq_star", "item", "pairs"))
    table = evaluate(data, ["spa", "acc_eq_star"], group_by="item", seed=0)
    for measure, group_by, test in tasks:
        kw = {"group_by": group_by, "test": test, "resamples": 200, "intervals": False}
        alone = sig.rank_metrics(data, measure, **kw)
        reused = sig.rank_metrics(data, measure, table=table, **kw)
        assert reused.values == alone.values and reused.details == alone.details
        assert reused.clusters == alone.clusters and reused.n_outputs == alone.n_outputs
        np.testing.assert_array_equal(reused.p_values.to_numpy(), alone.p_values.to_numpy())
        # Read from the table: a value changed there is the ranking's.
        second = data.metric_names[1]
        cell = next(v for v in table.values if v.measure == measure and v.metric == second)
        kept, cell.value = cell.value, 0.5
        assert sig.rank_metrics(data, measure, table=table, **kw).values[second] == 0.5
        cell.value = kept
    other = evaluate(data, ["spa"], seed=1)
    for v in other.values:
        v.value = 0.5
    spa = sig.rank_metrics(data, "spa", group_by="system", test="perm-outputs", resamples=200,
                           table=other)  # fmt: skip
    assert spa.values == {v.metric: v.value for v in table.values if v.measure == "spa"}
