"""Which-metric statistics side by side with MTME (google-research/mt-metrics-eval), the
field's reference, in one run on the same synthetic data: each side a whole process.

- acc*_eq per source (MTME's `KendallWithTiesOpt`, variant acc23, `average_by='item'`,
  `sample_rate=1.0`): the values and ε of all 30 metrics must agree exactly (to 1e-12:
  the sums run in another order), and the pairs test (MTME's `PairwisePermutationSigDiff`)
  on every pair of 4 of them, 1,000 draws, no early stop, on SimpEval_past's shape
  (24 systems × 100 sources);
- SPA at system level (MTME's `PairwiseConfidenceError`, ranked by its `PermutationSigDiff`
  as `CompareMetricsWithPairwiseConfidenceError` calls it, each output swapped on its own):
  the values of all 30 metrics, and the permutation test with 1,000 draws, no early stop,
  on 12 systems × 100 sources (MTME recomputes both SPAs' 1,000 source flips in every
  draw: over a minute per pair on this machine, so it runs 3 of the 6 pairs).

The product ranks the same 4 metrics (`rank_metrics`, all 6 pairs on one shared draw); its
seconds per pair are the ranking's seconds over 6, MTME's the mean of its calls (each
searches both metrics' ε again, as WMT runs it). p-values come from independent draws on
each side, so they agree within Monte-Carlo error: |Δp| ≤ 3 standard errors of the
difference of two binomial shares at their mean p. The 4 metrics are the noisiest of the
30 of `synthetic_metaeval` (26–29, 27 rounded to one decimal), close enough in quality that
the p-values are not all 0 or 1.

MTME is not on PyPI (the package of that name there is unrelated): clone it and name the
checkout, nothing is installed.

    git clone https://github.com/google-research/mt-metrics-eval /path/to/mtme
    MB_MTME_DIR=/path/to/mtme python -m pytest tests/benchmarks/bench_mtme_side_by_side.py \\
        -s -p no:xdist

Writes tests/benchmarks/results/mtme_side_by_side.json with the load average before and
after each side: the machine is shared, and timings include whatever else runs on it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.benchmarks.bench_metaeval_wmt25 import ROOT
from tests.benchmarks.machine import describe_machine
from tests.benchmarks.synthetic_metaeval import data_lines

RESULTS = ROOT / "tests" / "benchmarks" / "results" / "mtme_side_by_side.json"
DRAWS = 1000
METRICS = 30  # of synthetic_metaeval: every value is compared, the pairs run on PICK
PICK = [26, 27, 28, 29]
NAMES = [f"metric{k}" for k in PICK]
ALL_PAIRS = list(combinations(range(len(PICK)), 2))
# case → (systems, sources, product measure, grouping, test, seed, pairs MTME runs)
CASES: dict[str, tuple[int, int, str, str, str, int, list[tuple[int, int]]]] = {
    "acc_eq_star_item_pairs_test": (24, 100, "acc_eq_star", "item", "pairs", 0, ALL_PAIRS),
    # seed 4: the product's SPA source flips are then MTME's (its `pce` seeds 4)
    "spa_system_perm_outputs": (
        12,
        100,
        "spa",
        "system",
        "perm-outputs",
        4,
        [(0, 1), (1, 2), (2, 3)],
    ),
}
GOAL_RATIO = 100.0  # the product at least 100× faster per pair on the pairs test

PRODUCT = """
import json, time
import numpy as np
from meaningbench.analysis.metaeval import evaluate
from meaningbench.analysis.metaeval_significance import rank_metrics
{data}
full, data = data, data.subset(np.ones(data.n, bool), {pick})
t = time.perf_counter()  # the ranking first: its seconds include any first-call cost
r = rank_metrics(data, {measure!r}, group_by={group_by!r}, test={test!r}, resamples={draws},
                 seed={seed}, intervals=False)
seconds = time.perf_counter() - t
every = {{v.metric: v for v in evaluate(full, [{measure!r}], group_by={group_by!r},
                                        seed={seed}).values if v.category == ""}}
values = [[every[m].value, (every[m].details or {{}}).get("epsilon")] for m in full.metric_names]
names = list(data.metric_names)
print(json.dumps({{
    "seconds": seconds,
    "values": values,
    "ranked_values": [r.values[m] for m in names],
    "p": {{f"{{a}}>{{b}}": float(r.p_values.loc[names[a], names[b]]) for a, b in {pairs}}},
    "draws": r.resamples if r.draws is None
             else int(r.draws.to_numpy()[np.triu_indices(len(names), 1)].min()),
}}))
"""

MTME = """
import functools, json, time
import numpy as np
from mt_metrics_eval import stats
{data}
gold = data.human.tolist()  # outputs are system by system, as MTME's vectors are
corrs = [stats.Correlation(S, gold, data.metrics[:, m].tolist()) for m in range(M)]
if {measure!r} == "acc_eq_star":
    values = [[float(x) for x in stats.KendallWithTiesOpt(
        gold, c.metric_scores, "acc23", S, "item", 1.0)[:2]] for c in corrs]
else:  # as CompareMetricsWithPairwiseConfidenceError wraps it
    spa = functools.partial(stats.PairwiseConfidenceError, num_sys=S, filter_nones=False)
    values = [[float(spa(gold, c.metric_scores)[0]), None] for c in corrs]
corrs = [corrs[m] for m in {pick}]
no_stop = stats.PermutationSigDiffParams(block_size={draws})
p, seconds, used = {{}}, [], []
for n, (a, b) in enumerate({pairs}):
    np.random.seed(n)
    t = time.perf_counter()
    # MTME's p-value is that of "the second metric is better": (b, a) tests a over b
    if {measure!r} == "acc_eq_star":
        out = stats.PairwisePermutationSigDiff(
            corrs[b], corrs[a], "acc23", "item", {draws}, no_stop, sample_rate=1.0)
    else:
        out = stats.PermutationSigDiff(corrs[b], corrs[a], spa, "none", {draws}, no_stop)
    seconds.append(time.perf_counter() - t)
    p[f"{{a}}>{{b}}"] = float(out[0])
    used.append(int(out[2]))
print(json.dumps({{"seconds_per_pair": seconds, "values": values, "p": p,
                  "draws": min(used)}}))
"""


def _mtme_dir() -> Path:
    """The MTME checkout named by MB_MTME_DIR, or skip saying how to get one."""
    raw = os.environ.get("MB_MTME_DIR", "")
    where = Path(raw) if raw else None
    if where is None or not (where / "mt_metrics_eval" / "stats.py").is_file():
        pytest.skip(
            "needs an MTME checkout: git clone https://github.com/google-research/mt-metrics-eval "
            "and set MB_MTME_DIR to the clone (the folder holding mt_metrics_eval/); "
            + ("MB_MTME_DIR is not set" if where is None else f"{where} has no mt_metrics_eval")
        )
    return where


def _revision(checkout: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else "not a git checkout"


def _child(script: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one side as a whole process; its figures and the load around it."""
    load_before = os.getloadavg()[0]
    w0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env
    )
    if done.returncode:
        raise AssertionError(done.stderr[-4000:])
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["whole_process_wall_s"] = round(time.perf_counter() - w0, 2)
    out["load_average_1min_before"] = round(load_before, 2)
    out["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    return out


def _agreement(p_product: float, p_mtme: float, draws: int) -> dict[str, float]:
    """|Δp| against the standard error of a difference of two binomial shares at their
    mean p (held inside [1/draws, 1 − 1/draws]: a share of 0 still has an error)."""
    mean = min(max((p_product + p_mtme) / 2, 1 / draws), 1 - 1 / draws)
    se = math.sqrt(mean * (1 - mean) * 2 / draws)
    return {
        "product": p_product,
        "mtme": p_mtme,
        "abs_diff": round(abs(p_product - p_mtme), 4),
        "standard_errors": round(abs(p_product - p_mtme) / se, 2),
    }


def _values(product: list[list[Any]], mtme: list[list[Any]]) -> dict[str, Any]:
    """Every metric's value (and acc*_eq's ε) on both sides, and the largest gaps."""
    rows = {
        f"metric{k}": {"product": p[0], "mtme": m[0], "epsilon_product": p[1], "epsilon_mtme": m[1]}
        for k, (p, m) in enumerate(zip(product, mtme, strict=True))
    }
    eps = [
        abs(r["epsilon_product"] - r["epsilon_mtme"])
        for r in rows.values()
        if r["epsilon_mtme"] is not None
    ]
    return {
        "max_abs_diff": max(abs(r["product"] - r["mtme"]) for r in rows.values()),
        "max_abs_diff_epsilon": max(eps) if eps else None,
        "metrics_with_epsilon_above_0": sum(1 for r in rows.values() if r["epsilon_mtme"]),
        "by_metric": rows,
    }


def _side_by_side(case: str, checkout: Path) -> dict[str, Any]:
    systems, sources, measure, group_by, test, seed, pairs = CASES[case]
    fields = dict(
        data=data_lines(systems, sources, METRICS), measure=measure, draws=DRAWS, pick=PICK
    )
    product = _child(
        PRODUCT.format(**fields, group_by=group_by, test=test, seed=seed, pairs=ALL_PAIRS)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), str(ROOT)])}
    mtme = _child(MTME.format(**fields, n=len(PICK), pairs=pairs), env=env)
    product_per_pair = product["seconds"] / len(ALL_PAIRS)
    mtme_per_pair = float(np.mean(mtme["seconds_per_pair"]))
    return {
        "systems": systems,
        "sources": sources,
        "outputs": systems * sources,
        "metrics": METRICS,
        "pairs_of": NAMES,
        "draws": DRAWS,
        "early_stop": False,
        "product": {
            "call": f"rank_metrics({measure!r}, group_by={group_by!r}, test={test!r}, "
            f"seed={seed}, intervals=False)",
            "pairs": len(ALL_PAIRS),
            "ranking_s": round(product["seconds"], 3),
            "s_per_pair": round(product_per_pair, 4),
            "whole_process_wall_s": product["whole_process_wall_s"],
            "load_average_1min_before": product["load_average_1min_before"],
            "load_average_1min_after": product["load_average_1min_after"],
            "draws_per_pair": product["draws"],
        },
        "mtme": {
            "pairs": len(pairs),
            "s_per_pair": round(mtme_per_pair, 2),
            "seconds_by_pair": [round(s, 2) for s in mtme["seconds_per_pair"]],
            "whole_process_wall_s": mtme["whole_process_wall_s"],
            "load_average_1min_before": mtme["load_average_1min_before"],
            "load_average_1min_after": mtme["load_average_1min_after"],
            "draws_per_pair": mtme["draws"],
        },
        "ratio_mtme_to_product_per_pair": round(mtme_per_pair / product_per_pair, 1),
        "values": _values(product["values"], mtme["values"]),
        "ranked_values_equal_evaluate": [product["values"][k][0] for k in PICK]
        == product["ranked_values"],
        "p_values": {
            f"{NAMES[a]} better than {NAMES[b]}": _agreement(
                product["p"][f"{a}>{b}"], mtme["p"][f"{a}>{b}"], DRAWS
            )
            for a, b in pairs
        },
    }


def _record(case: str, figures: dict[str, Any], checkout: Path) -> None:
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(numpy=np.__version__, mtme_revision=_revision(checkout)),
        **figures,
    }
    old = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    old[case] = figures
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(old, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))


def test_acc_eq_star_per_source_and_the_pairs_test_against_mtme() -> None:
    checkout = _mtme_dir()
    case = "acc_eq_star_item_pairs_test"
    f = _side_by_side(case, checkout)
    _record(case, f, checkout)
    assert f["values"]["max_abs_diff"] <= 1e-12, f["values"]
    assert f["values"]["max_abs_diff_epsilon"] <= 1e-12, f["values"]
    assert f["ranked_values_equal_evaluate"]
    for pair, p in f["p_values"].items():
        assert p["standard_errors"] <= 3.0, (pair, p)
    assert f["product"]["draws_per_pair"] == f["mtme"]["draws_per_pair"] == DRAWS
    assert f["ratio_mtme_to_product_per_pair"] >= GOAL_RATIO


def test_spa_and_its_permutation_test_against_mtme() -> None:
    checkout = _mtme_dir()
    case = "spa_system_perm_outputs"
    f = _side_by_side(case, checkout)
    _record(case, f, checkout)
    # MTME sums the scores and their flips in float32, the product in float64. On the
    # metrics rounded to one decimal a flipped sum can equal the observed one exactly, and
    # float32 may put it on either side: a few of 1,000 flips for some system pairs, up to
    # 4.4e-4 of SPA here (the others agree to the last digit).
    assert f["values"]["max_abs_diff"] <= 1e-3, f["values"]
    assert f["ranked_values_equal_evaluate"]
    for pair, p in f["p_values"].items():
        assert p["standard_errors"] <= 3.0, (pair, p)
    assert f["product"]["draws_per_pair"] == f["mtme"]["draws_per_pair"] == DRAWS
