"""The field's protocol (`selection_protocol`) against subset2evaluate 1.0.27's own code.

The reference functions below are subset2evaluate's (evaluate.py: `get_model_absolute`,
`eval_subset_correlation` with kendall, `eval_clucor` and `eval_clucor_par` in their
correlation halves, `precompute_clucor_randnorm` / `eval_clucor_par_randnorm`;
methods.py: `random_subset`; select_subset.py: `basic`'s sort), copied with the cluster
half and the thread pool left out, so the test needs no package. Where the package
itself is installed, it is asked too. subset2evaluate is © Vilém Zouhar, under the MIT
licence (its package metadata), which permits this copy with the notice.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import scipy.stats

from meaningbench.analysis.selection_protocol import (
    PROPS,
    RANDOM_SEEDS,
    accuracy_at_props,
    field_protocol,
    kendall_rows,
    metric_curves,
    pearson_prefixes,
    system_curves,
)

# --- subset2evaluate 1.0.27, evaluate.py / methods.py / select_subset.py (verbatim) ---
S2E_PROPS = np.linspace(0.05, 0.5, 10)


def get_model_absolute(data_new: Any, metric: str = "human") -> Any:
    import collections

    scores_new: Any = collections.defaultdict(list)
    models = list(data_new[0]["scores"].keys())
    for line in data_new:
        for model in models:
            scores_new[model].append(line["scores"][model][metric])
    scores_new = {model: np.average(scores_new[model]) for model in models}
    return scores_new


def eval_subset_correlation(data_new: Any, data_old: Any, metric: str = "human") -> Any:
    import warnings

    models = list(data_old[0]["scores"].keys())
    scores_new = get_model_absolute(data_new, metric=metric)
    scores_old = get_model_absolute(data_old, metric=metric)
    values_new = [scores_new[sys] for sys in models]
    values_old = [scores_old[sys] for sys in models]
    with warnings.catch_warnings(category=scipy.stats.ConstantInputWarning, action="error"):
        try:
            return scipy.stats.kendalltau(values_old, values_new, variant="b").correlation
        except scipy.stats.ConstantInputWarning:
            return 0


def eval_cor(data_new: Any, data_old: Any) -> list[Any]:
    cor_new = []
    for prop in S2E_PROPS:
        k = int(len(data_old) * prop)
        cor_new.append(eval_subset_correlation(data_new[:k], data_old))
    return cor_new


def eval_cor_par(data_new: Any, data_old: Any, cors_tgt: Any) -> Any:
    def _par_cor(data_new: Any, data_old: Any, cor_tgt: Any) -> int:
        for k in range(5, len(data_new) + 1):
            if eval_subset_correlation(data_new[:k], data_old) >= cor_tgt:
                break
        return k

    ks_cor_par = [_par_cor(data_new, data_old, t) for t in cors_tgt]
    ks_cor_par = [k / (len(data_old) * prop) for k, prop in zip(ks_cor_par, S2E_PROPS, strict=True)]  # type: ignore[misc]
    return np.average(ks_cor_par)


def random_order(data: Any, seed: int) -> Any:
    r = random.Random(seed)
    utility = [r.random() for _ in data]
    return [
        i
        for _, i in sorted(
            zip(utility, range(len(data)), strict=True), key=lambda x: x[0], reverse=True
        )
    ]


def cor_par_randnorm(order: list[int], data_old: Any, random_seeds: int = 10) -> Any:
    cor_random = np.average(
        [
            eval_cor([data_old[i] for i in random_order(data_old, s)], data_old)
            for s in range(random_seeds)
        ],
        axis=0,
    )
    norm = np.average(
        [
            eval_cor_par([data_old[i] for i in random_order(data_old, s)], data_old, cor_random)
            for s in range(random_seeds, 2 * random_seeds)
        ]
    )
    return eval_cor_par([data_old[i] for i in order], data_old, cor_random) / norm


# --- end of the reference ---


def _matrix(n: int = 40, systems: int = 5, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 1, systems)
    # Unrounded: with tied means the reference's ties would hang on the last bits of its
    # sums (the engine counts ties within rounding as ties; see the test below).
    return quality[None, :] + rng.normal(0, 1.2, (n, systems))


def _items(scores: np.ndarray) -> list[dict[str, Any]]:
    return [{"scores": {f"s{j}": {"human": float(v)} for j, v in enumerate(row)}} for row in scores]


def test_props_are_subset2evaluates() -> None:
    assert tuple(S2E_PROPS.tolist()) == PROPS and RANDOM_SEEDS == 10


@pytest.mark.parametrize("seed", [3, 11])
def test_accuracy_and_parity_are_subset2evaluates(seed: int) -> None:
    scores = _matrix(seed=seed)
    data = _items(scores)
    n = scores.shape[0]
    # A strategy that asks for the items where the systems differ most first (metric_var).
    spread = list(np.argsort(-scores.var(axis=1), kind="stable"))
    reverse = spread[::-1]
    orders = {"spread": np.array([spread]), "reverse": np.array([reverse])}
    randoms = np.array([random_order(data, s) for s in range(2 * RANDOM_SEEDS)])
    got = field_protocol("systems", lambda o: system_curves(o, scores), orders, randoms)
    for row, order in zip(got.rows, (spread, reverse), strict=True):
        cors = eval_cor([data[i] for i in order], data)
        assert row.by_budget == pytest.approx(cors, abs=1e-12)
        assert row.accuracy == pytest.approx(float(np.mean(cors)), abs=1e-12)
        assert row.parity == pytest.approx(float(cor_par_randnorm(order, data)), abs=1e-12)
    assert got.rows[0].parity != got.rows[1].parity
    assert got.n_items == n
    s2e = pytest.importorskip("subset2evaluate.evaluate")
    # The package itself, where installed (a dev machine): the same figures.
    assert got.rows[0].by_budget == pytest.approx(
        s2e.eval_clucor([data[i] for i in spread], data)[1], abs=1e-12
    )


def test_means_equal_but_for_rounding_are_ties() -> None:
    a = np.array([[0.1 + 0.2, 0.3, 1.0]])
    assert a[0, 0] != a[0, 1]
    assert kendall_rows(a, np.array([1.0, 2.0, 3.0]))[0] == pytest.approx(2 / np.sqrt(2 * 3))


def test_missing_systems_and_constant_rows_give_zero() -> None:
    assert kendall_rows(np.array([[1.0, np.nan, 2.0]]), np.array([1.0, 2.0, 3.0]))[0] == 0
    assert kendall_rows(np.array([[1.0, 1.0, 1.0]]), np.array([1.0, 2.0, 3.0]))[0] == 0
    # One output per item: a system unseen in a prefix leaves τ at 0 there.
    scores = np.full((6, 3), np.nan)
    for i in range(6):
        scores[i, i % 3] = float(i)
    curves = system_curves(np.array([np.arange(6)]), scores)
    assert curves[0, :3].tolist() == [0.0, 0.0, 0.0] and curves[0, -1] == 1.0


def test_pearson_prefixes_match_numpy_and_the_curve_ends_at_one() -> None:
    rng = np.random.default_rng(1)
    human = rng.normal(size=30)
    metrics = human[:, None] * [1.0, 0.5, 0.1] + rng.normal(size=(30, 3))
    order = rng.permutation(30)
    values = pearson_prefixes(np.array([order]), human, metrics)[0]
    for k in (2, 7, 30):
        rows = order[:k]
        want = [np.corrcoef(human[rows], metrics[rows, j])[0, 1] for j in range(3)]
        assert values[k] == pytest.approx(want, abs=1e-9)
    assert np.isnan(values[1]).all()
    curve = metric_curves(np.array([order]), human, metrics)[0]
    assert curve[-1] == pytest.approx(1.0) and accuracy_at_props(curve).size == 10


@pytest.mark.parametrize("seed", [3, 11])
def test_spa_of_the_systems_is_subset2evaluates_on_whole_sources(seed: int) -> None:
    s2e = pytest.importorskip("subset2evaluate.evaluate")
    from meaningbench.analysis.selection_protocol import system_spa

    scores = _matrix(seed=seed)  # (items, systems): each item a source with every system
    n, s = scores.shape
    data = _items(scores)
    items = list(np.random.default_rng(seed).permutation(n))
    # The product's unit is one output: a source's outputs follow each other in the order.
    outputs = np.array([[i * s + j for i in items for j in range(s)]])
    column = np.repeat(np.arange(n), s)
    got = system_spa(outputs, column, scores.T)
    want = s2e.eval_spa([data[i] for i in items], data)
    assert got[0] == pytest.approx(want, abs=1e-6)
    # A cut that splits a source leaves that source out: with the last output of each
    # source held back to the end, no source is whole at 5 %, and every pair of systems
    # has the empty test's p-value, 1.
    split = np.array(
        [[i * s + j for i in items for j in range(s - 1)] + [i * s + s - 1 for i in items]]
    )
    full = s2e.compute_pairwise_p_values(scores.T)[np.triu_indices(s, 1)]
    empty = 1.0 - float(np.mean(np.abs(1.0 - full)))
    assert system_spa(split, column, scores.T)[0, 0] == pytest.approx(empty, abs=1e-9)
