"""Replaying a study's ratings in the order a selection strategy would have asked for them.

The study's items (those with a human score and a score of every candidate metric) are put
in a strategy's order (`meaningbench.annotation.selection.order`, the queues' own rule),
and the budget is the study's ratings: after every `step` % of them, the items whose
ratings fit in it are meta-evaluated with the engine (`rank_metrics`), and the ranking of
the metrics and its significance clusters are compared with those of all the data:
Kendall's τ-b between the metrics' values, and whether the top cluster holds the same
metrics. A seed's *settled share* is the smallest budget from which on τ ≥ `tau_goal` and
the top cluster is the same at every later step.

An item enters with all of its ratings (its human score by the project's one rule, over
all its raters), so the replay asks for whole items, as a queue with full overlap does.
The significance test runs with a fixed seed at every step and for every strategy, so two
identical subsets give identical answers and are computed once (cached).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meaningbench.analysis.data import load_study_data
from meaningbench.analysis.metaeval import MetaEvalData, system_cells
from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING, GROUPING_NAMES
from meaningbench.analysis.metaeval_significance import Ranking, check_resampling, rank_metrics
from meaningbench.analysis.metaeval_study import attributes_of, metaeval_data_of
from meaningbench.analysis.selection_adaptive import SUFFIX, adaptive_order, round_sizes
from meaningbench.analysis.selection_baselines import (
    PREFIX,
    BaselineOrders,
    StudyTexts,
    baseline_orders,
)
from meaningbench.analysis.selection_protocol import (
    PROPS,
    RANDOM_SEEDS,
    FieldProtocol,
    field_protocol,
    metric_curves,
    system_curves,
    system_spa,
)
from meaningbench.analysis.svg import line_chart
from meaningbench.annotation.selection import balance_note
from meaningbench.annotation.selection import order as selection_order
from meaningbench.annotation.settings import check_selection
from meaningbench.db.study import Study
from meaningbench.errors import UserError

DEFAULT_MEASURE = "pearson"
DEFAULT_TEST = "perm-both"
# Modest on purpose: a simulation ranks the metrics (steps × seeds × strategies) times.
DEFAULT_RESAMPLES = 200
TAU_GOAL = 0.9
# The strategies compared with random order by default.
SIMULATED = ("disagreement", "variance", "diversity", "mix", "balanced")
# A simulation ranks (100 / step) × seeds × strategies times: beyond these it would run for
# days, and finer steps than one per 1,000th of the ratings tell nothing more.
MAX_SEEDS = 1000
MIN_STEP = 0.1
# A replayed campaign's rounds (`--rounds`): each round at least one item.
MAX_ROUNDS = 50


@dataclass(frozen=True)
class Snapshot:
    """The ranking on one budget: the metrics' values (None: not defined) and clusters."""

    values: tuple[float | None, ...]
    top: frozenset[str]


@dataclass
class Curve:
    """One strategy and seed over the budget steps."""

    strategy: str
    seed: int
    shares: list[float]  # % of the ratings budget spent at each step
    items: list[int]  # items rated by then
    tau: list[float | None]
    same_top: list[bool]
    settled: float  # the settled share (100 at worst: all the data is the reference)
    settled_tau: float  # the same for τ ≥ goal alone, whatever the clusters

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "settled_share": self.settled,
            "settled_share_tau_only": self.settled_tau,
            "steps": [
                {"share": s, "items": n, "tau": t, "same_top_cluster": c}
                for s, n, t, c in zip(self.shares, self.items, self.tau, self.same_top, strict=True)
            ],
        }


@dataclass
class Summary:
    """A strategy's settled shares over the seeds, and its mean against random's."""

    strategy: str
    mean: float
    sd: float
    low: float
    high: float
    of_random: float | None  # mean settled share / random's mean settled share
    tau_only_mean: float  # mean settled share for τ ≥ goal alone
    tau_only_of_random: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "settled_share_mean": self.mean,
            "settled_share_sd": self.sd,
            "settled_share_min": self.low,
            "settled_share_max": self.high,
            "of_random": self.of_random,
            "tau_only_settled_share_mean": self.tau_only_mean,
            "tau_only_of_random": self.tau_only_of_random,
        }


@dataclass
class Simulation:
    measure: str
    group_by: str
    test: str
    resamples: int
    alpha: float
    tau_goal: float
    metrics: list[str]
    n_items: int
    n_ratings: int
    reference: Ranking
    curves: dict[str, list[Curve]] = field(default_factory=dict)
    # The field's protocol on the same orders (Pearson over all outputs only: None else).
    field: FieldProtocol | None = None
    # subset2evaluate's methods, run beside the strategies (--compare-subset2evaluate).
    baselines: BaselineOrders | None = None
    # The rounds of the adaptive top-up rows (0: none).
    rounds: int = 0
    # What a reader must know about a row (a strategy that fell back to random order).
    notes: list[str] = dataclasses.field(default_factory=list)

    def summaries(self) -> list[Summary]:
        settled = {k: np.array([c.settled for c in v]) for k, v in self.curves.items()}
        tau_only = {k: np.array([c.settled_tau for c in v]) for k, v in self.curves.items()}
        base = float(settled["random"].mean()) if "random" in settled else None
        tau_base = float(tau_only["random"].mean()) if "random" in tau_only else None
        out = []
        for strategy, values in settled.items():
            mean = float(values.mean())
            tau_mean = float(tau_only[strategy].mean())
            out.append(
                Summary(
                    strategy=strategy,
                    mean=mean,
                    sd=float(values.std(ddof=1)) if values.size > 1 else 0.0,
                    low=float(values.min()),
                    high=float(values.max()),
                    of_random=None if not base else mean / base,
                    tau_only_mean=tau_mean,
                    tau_only_of_random=None if not tau_base else tau_mean / tau_base,
                )
            )
        return out

    def mean_tau(self, strategy: str) -> tuple[list[float], list[float], list[float]]:
        """Per step: the mean τ over seeds and its lowest and highest (undefined τ = 0)."""
        rows = np.array([[0.0 if t is None else t for t in c.tau] for c in self.curves[strategy]])
        return rows.mean(axis=0).tolist(), rows.min(axis=0).tolist(), rows.max(axis=0).tolist()

    def to_dict(self) -> dict[str, Any]:
        top = sorted(m for m, c in self.reference.clusters.items() if c == 1)
        return {
            "measure": self.measure,
            "group_by": self.group_by,
            "test": self.test,
            "resamples": self.resamples,
            "alpha": self.alpha,
            "tau_goal": self.tau_goal,
            "metrics": self.metrics,
            "items": self.n_items,
            "ratings": self.n_ratings,
            "full_data_ranking": self.reference.order,
            "full_data_top_cluster": top,
            "summary": [s.to_dict() for s in self.summaries()],
            "curves": {k: [c.to_dict() for c in v] for k, v in self.curves.items()},
            "target": "metrics",
            "rounds": self.rounds,
            "notes": self.notes,
            "field_protocol": None if self.field is None else self.field.to_dict(),
            "subset2evaluate": None if self.baselines is None else self.baselines.to_dict(),
        }


def check_options(
    *,
    seeds: int,
    step: float,
    resamples: int | None = None,
    alpha: float | None = None,
    rounds: int = 0,
) -> None:
    """The one rule for a simulation's options (a `UserError` naming the option)."""
    if not 0 <= rounds <= MAX_ROUNDS:
        raise UserError(
            f"--rounds must lie between 1 and {MAX_ROUNDS} (0: no adaptive top-up), not {rounds:,}"
        )
    if not 1 <= seeds <= MAX_SEEDS:
        raise UserError(f"--seeds must lie between 1 and {MAX_SEEDS:,}, not {seeds:,}")
    if not MIN_STEP <= step <= 100:
        raise UserError(
            f"--step must lie between {MIN_STEP:g} and 100 (a share of the ratings, in %), "
            f"not {step:g}"
        )
    check_resampling(resamples=resamples, alpha=alpha)


def budget_steps(step: float) -> list[float]:
    check_options(seeds=1, step=step)
    n = int(np.ceil(100.0 / step - 1e-9))
    return [min(100.0, round(step * (i + 1), 6)) for i in range(n)]


def prefix_sizes(order: Sequence[int], n_ratings: np.ndarray, shares: Sequence[float]) -> list[int]:
    """How many items of `order` the budget of each share buys: the shortest prefix whose
    ratings reach the share of all ratings."""
    cum = np.cumsum(n_ratings[np.asarray(order, dtype=np.int64)])
    total = float(cum[-1]) if cum.size else 0.0
    return [
        min(len(order), int(np.searchsorted(cum, share / 100.0 * total - 1e-9)) + 1)
        for share in shares
    ]


def settled_share(shares: Sequence[float], ok: Sequence[bool]) -> float:
    """The smallest share from which on every step is ok (100 when only the last is)."""
    at = 100.0
    for share, good in zip(reversed(shares), reversed(ok), strict=True):
        if not good:
            break
        at = share
    return at


def kendall(a: Sequence[float | None], b: Sequence[float | None]) -> float | None:
    """τ-b between two rankings' values; None where either has an undefined value."""
    if any(v is None for v in a) or any(v is None for v in b) or len(a) < 2:
        return None
    # τ-b over the pairs, written out: scipy's kendalltau costs a millisecond of checks per
    # call, and a simulation compares a handful of metrics thousands of times.
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    upper = np.triu_indices(x.size, 1)
    dx = np.sign(x[:, None] - x[None, :])[upper]
    dy = np.sign(y[:, None] - y[None, :])[upper]
    ties = float(np.count_nonzero(dx)) * float(np.count_nonzero(dy))
    if ties == 0:
        return None
    return float((dx * dy).sum() / np.sqrt(ties))


class _Ranker:
    """Ranks subsets of one data set, each distinct subset once."""

    def __init__(self, data: MetaEvalData, options: dict[str, Any]) -> None:
        self.data = data
        self.options = options
        self.cache: dict[bytes, Snapshot] = {}

    def ranking(self, keep: np.ndarray) -> Ranking:
        return rank_metrics(self.data.subset(keep), intervals=False, **self.options)

    def snapshot(self, rows: np.ndarray) -> Snapshot:
        key = hashlib.blake2b(np.sort(rows).astype(np.int64).tobytes(), digest_size=16).digest()
        hit = self.cache.get(key)
        if hit is None:
            keep = np.zeros(self.data.n, dtype=bool)
            keep[rows] = True
            try:
                r = self.ranking(keep)
                hit = _snapshot(r, self.data.metric_names)
            except UserError:  # too few outputs for the measure: nothing settled yet
                hit = Snapshot(tuple(None for _ in self.data.metric_names), frozenset())
            self.cache[key] = hit
        return hit


def strategy_order(
    name: str,
    data: MetaEvalData,
    seed: int,
    target: str,
    rounds: int,
    known: dict[tuple[str, int], list[int]] | None = None,
) -> list[int]:
    """A strategy's order of `data`'s items; a name ending in `SUFFIX` is that strategy's
    first round topped up adaptively in `rounds` rounds from `data`'s human scores.
    `known`: orders already made, by (strategy, seed); this one is added."""
    base = name.removesuffix(SUFFIX)
    known = {} if known is None else known
    if (base, seed) not in known:
        known[base, seed] = selection_order(
            base, data.metrics, list(data.sources), seed, list(data.systems)
        )
    order = known[base, seed]
    if not name.endswith(SUFFIX):
        return order
    return adaptive_order(target, order, data.human, data.metrics, data.systems, rounds, seed)


def with_top_ups(strategies: Sequence[str], rounds: int, n: int) -> list[str]:
    """The strategies, each followed by its adaptive top-up row when `rounds` is set."""
    if not rounds:
        return list(strategies)
    ends = round_sizes(n, rounds)
    if min(b - a for a, b in zip([0, *ends], ends, strict=False)) < 1:
        raise UserError(
            f"--rounds {rounds}: half of the {n} items in {rounds} rounds leaves a round "
            "without an item; choose fewer rounds"
        )
    return [name for s in strategies for name in (s, s + SUFFIX)]


def _snapshot(r: Ranking, names: Sequence[str]) -> Snapshot:
    return Snapshot(
        tuple(r.values.get(m) for m in names),
        frozenset(m for m, c in r.clusters.items() if c == 1),
    )


def simulate(
    data: MetaEvalData,
    n_ratings: np.ndarray,
    strategies: Sequence[str],
    *,
    seeds: int = 20,
    first_seed: int = 0,
    step: float = 5.0,
    measure: str = DEFAULT_MEASURE,
    group_by: str = DEFAULT_GROUPING,
    test: str = DEFAULT_TEST,
    resamples: int = DEFAULT_RESAMPLES,
    alpha: float = 0.05,
    tau_goal: float = TAU_GOAL,
    progress: Callable[[int, int], None] | None = None,
    check: Callable[[], None] | None = None,
    texts: StudyTexts | None = None,
    rounds: int = 0,
) -> Simulation:
    """Replay `data`'s outputs in each strategy's order (`n_ratings` per output: what each
    costs) for `seeds` seeds; random is always included, as the baseline. With `texts`
    (one per output of `data`), subset2evaluate's methods run beside the strategies; with
    `rounds`, each strategy also topped up adaptively (`selection_adaptive`)."""
    check_options(seeds=seeds, step=step, resamples=resamples, alpha=alpha, rounds=rounds)
    if len(data.metric_names) < 2:
        raise UserError("a simulation ranks metrics: give it at least two scored metrics")
    wanted = ["random"] + [check_selection(s) for s in strategies if s != "random"]
    keep = data.common()
    if int(keep.sum()) < 3:
        raise UserError("fewer than three items have a human score and every metric's score")
    work = data.subset(keep)
    cost = np.asarray(n_ratings, dtype=np.float64)[keep]
    options: dict[str, Any] = dict(
        measure=measure, group_by=group_by, test=test, resamples=resamples, alpha=alpha, seed=0
    )
    ranker = _Ranker(work, options)
    reference = ranker.ranking(np.ones(work.n, dtype=bool))
    full = _snapshot(reference, work.metric_names)
    shares = budget_steps(step)
    sim = Simulation(
        reference.measure, reference.group_by, test, resamples, alpha, tau_goal,
        list(work.metric_names), work.n, int(cost.sum()), reference, rounds=rounds,
    )  # fmt: skip
    seed_range = range(first_seed, first_seed + seeds)
    sim.notes = [n for n in [balance_note(list(work.systems))] if n and "balanced" in wanted]
    sim.baselines = _baselines(work, keep, texts, seed_range)
    names = with_top_ups(list(dict.fromkeys(wanted)), rounds, work.n)
    names += [] if sim.baselines is None else list(sim.baselines.orders)
    total = len(names) * seeds
    orders: dict[str, list[list[int]]] = {}
    made: dict[tuple[str, int], list[int]] = {}
    for k, strategy in enumerate(names):
        sim.curves[strategy] = []
        orders[strategy] = []
        for at, s in enumerate(seed_range):
            if check is not None:
                check()
            if strategy.startswith(PREFIX) and sim.baselines is not None:
                order = sim.baselines.orders[strategy][at].tolist()
            else:
                order = strategy_order(strategy, work, s, "metrics", rounds, made)
            orders[strategy].append(order)
            sizes = prefix_sizes(order, cost, shares)
            sim.curves[strategy].append(
                _replay(ranker, full, strategy, s, order, shares, sizes, tau_goal)
            )
            if progress is not None:
                progress(k * seeds + (s - first_seed) + 1, total)
    if sim.measure == "pearson" and sim.group_by == "none" and work.n >= MIN_FIELD_ITEMS:
        sim.field = field_protocol(
            "metrics",
            lambda o: metric_curves(o, work.human, work.metrics),
            {k: np.array(v, dtype=np.int64) for k, v in orders.items()},
            _random_orders(work),
        )
    return sim


def _replay(
    ranker: _Ranker,
    full: Snapshot,
    strategy: str,
    seed: int,
    order: list[int],
    shares: list[float],
    sizes: list[int],
    tau_goal: float,
) -> Curve:
    """One strategy's curve at one seed: the ranking on each prefix of `order` against the
    ranking on all the data."""
    ranked = np.asarray(order, dtype=np.int64)
    taus: list[float | None] = []
    tops: list[bool] = []
    for n in sizes:
        snap = ranker.snapshot(ranked[:n])
        taus.append(kendall(snap.values, full.values))
        tops.append(snap.top == full.top)
    close = [t is not None and t >= tau_goal for t in taus]
    ok = [t and c for t, c in zip(close, tops, strict=True)]
    return Curve(
        strategy,
        seed,
        shares,
        sizes,
        taus,
        tops,
        settled_share(shares, ok),
        settled_share(shares, close),
    )


# subset2evaluate's parity search starts at five items, and its smallest budget is 5 %.
MIN_FIELD_ITEMS = 5


def _baselines(
    work: MetaEvalData, keep: np.ndarray, texts: StudyTexts | None, seeds: Sequence[int]
) -> BaselineOrders | None:
    """subset2evaluate's methods' orders of `work` (the rows `keep` of the data `texts`
    belong to), or None without `texts`."""
    if texts is None:
        return None
    return baseline_orders(
        work.sources,
        work.systems,
        np.asarray(texts.outputs, dtype=object)[keep],
        np.asarray(texts.source_texts, dtype=object)[keep],
        work.metrics,
        work.metric_names,
        texts.metric or work.metric_names[0],
        seeds,
    )


def study_texts(data: Any, metric: str | None) -> StudyTexts:
    """The study's outputs and source texts in item order (`StudyData.items`)."""
    items = data.items
    return StudyTexts(
        items["output"].to_numpy(dtype=object), items["source"].to_numpy(dtype=object), metric
    )


def _random_orders(data: MetaEvalData) -> np.ndarray:
    """Random order over seeds 0 … 19: the field's target (0–9) and normaliser (10–19),
    whatever seeds the strategies ran with."""
    return np.array(
        [
            selection_order("random", data.metrics, list(data.sources), s)
            for s in range(2 * RANDOM_SEEDS)
        ],
        dtype=np.int64,
    )


@dataclass
class SystemsSimulation:
    """The human ranking of the study's systems (mean human score) on the strategies'
    subsets against all the data, by the field's protocol."""

    systems: list[str]
    full_means: list[float]
    n_items: int
    n_ratings: int
    seeds: int
    field: FieldProtocol
    tau_goal: float = TAU_GOAL
    # Per strategy and seed: the share of the ratings from which τ ≥ tau_goal at every
    # later --step (today's settle criterion without the clusters: none for systems yet).
    settled: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    baselines: BaselineOrders | None = None
    rounds: int = 0

    def settled_summary(self) -> list[dict[str, Any]]:
        base = float(np.mean(self.settled["random"])) if "random" in self.settled else None
        out = []
        for strategy, values in self.settled.items():
            mean = float(np.mean(values))
            out.append(
                {
                    "strategy": strategy,
                    "tau_only_settled_share_mean": mean,
                    "tau_only_settled_share_sd": float(np.std(values, ddof=1))
                    if len(values) > 1
                    else 0.0,
                    "tau_only_of_random": None if not base else mean / base,
                }
            )
        return out

    def full_order(self) -> list[str]:
        pairs = sorted(zip(self.full_means, self.systems, strict=True), key=lambda p: -p[0])
        return [s for _, s in pairs]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": "systems",
            "systems": self.systems,
            "full_data_means": dict(zip(self.systems, self.full_means, strict=True)),
            "full_data_ranking": self.full_order(),
            "items": self.n_items,
            "ratings": self.n_ratings,
            "seeds": self.seeds,
            "rounds": self.rounds,
            "tau_goal": self.tau_goal,
            "summary": self.settled_summary(),
            "field_protocol": self.field.to_dict(),
            "subset2evaluate": None if self.baselines is None else self.baselines.to_dict(),
        }

    def lines(self) -> list[str]:
        out = [
            f"{self.n_items} items, {self.n_ratings} ratings; {len(self.systems)} systems ranked "
            "by their mean human score",
            f"full-data ranking: {' > '.join(self.full_order())}",
            f"settled: tau >= {self.tau_goal:g} from this share of the ratings on (mean ± SD "
            "over seeds; vs random's mean; no clusters of systems yet)",
        ]
        rows = self.settled_summary()
        width = max([13, *(len(row["strategy"]) for row in rows)])
        for row in rows:
            ratio = row["tau_only_of_random"]
            out.append(
                f"  {row['strategy']:<{width}} {row['tau_only_settled_share_mean']:5.1f} % ± "
                f"{row['tau_only_settled_share_sd']:4.1f}"
                + ("" if ratio is None else f"  {ratio:.0%} of random")
            )
        extra = [] if self.baselines is None else self.baselines.lines()
        return out + self.field.lines() + extra


def simulate_systems(
    data: MetaEvalData,
    n_ratings: np.ndarray,
    strategies: Sequence[str],
    *,
    seeds: int = 20,
    first_seed: int = 0,
    step: float = 5.0,
    tau_goal: float = TAU_GOAL,
    check: Callable[[], None] | None = None,
    texts: StudyTexts | None = None,
    rounds: int = 0,
) -> SystemsSimulation:
    """The field's protocol for the ranking of the systems: each strategy's order (over
    `seeds` seeds) cut at the field's budgets, the systems' mean human scores on the cut
    against those on all the items. Random is always included; with `rounds`, each
    strategy also topped up adaptively (`selection_adaptive`)."""
    check_options(seeds=seeds, step=step, rounds=rounds)
    wanted = list(dict.fromkeys(["random"] + [check_selection(s) for s in strategies]))
    keep = data.common() & data.has_system()
    systems = sorted({str(s) for s in data.systems[keep]})
    if len(systems) < 3:
        raise UserError(
            f"--target systems ranks the study's systems, and it has {len(systems)} "
            f"system{'' if len(systems) == 1 else 's'} with scored outputs "
            f"({', '.join(systems) or 'none'}): ranking them needs at least three"
        )
    work = data.subset(keep)
    if work.n < MIN_FIELD_ITEMS:
        raise UserError(
            f"fewer than {MIN_FIELD_ITEMS} items have a human score and every metric's score"
        )
    column = {s: j for j, s in enumerate(systems)}
    scores = np.full((work.n, len(systems)), np.nan)
    scores[np.arange(work.n), [column[str(s)] for s in work.systems]] = work.human
    orders: dict[str, np.ndarray] = {}
    made: dict[tuple[str, int], list[int]] = {}
    for strategy in with_top_ups(wanted, rounds, work.n):
        if check is not None:
            check()
        orders[strategy] = np.array(
            [
                strategy_order(strategy, work, s, "systems", rounds, made)
                for s in range(first_seed, first_seed + seeds)
            ],
            dtype=np.int64,
        )
    baselines = _baselines(work, keep, texts, range(first_seed, first_seed + seeds))
    if baselines is not None:
        orders.update(baselines.orders)
    found = field_protocol(
        "systems", lambda o: system_curves(o, scores), orders, _random_orders(work)
    )
    _add_spa(found, work, orders)
    means = [float(np.nanmean(scores[:, j])) for j in range(len(systems))]
    cost = np.asarray(n_ratings, dtype=np.float64)[keep]
    shares = budget_steps(step)
    settled: dict[str, list[float]] = {}
    for strategy, rows in orders.items():
        curves = system_curves(rows, scores)
        settled[strategy] = [
            settled_share(
                shares, [bool(t >= tau_goal) for t in curve[prefix_sizes(o, cost, shares)]]
            )
            for o, curve in zip(rows, curves, strict=True)
        ]
    return SystemsSimulation(
        systems, means, work.n, int(cost.sum()), seeds, found, tau_goal, settled, baselines, rounds
    )


def simulate_study_systems(
    study: Study,
    strategies: Sequence[str],
    *,
    dimension: str = "meaning",
    labels: str | None = None,
    metrics: Sequence[str] | None = None,
    compare_subset2evaluate: bool = False,
    baseline_metric: str | None = None,
    **options: Any,
) -> SystemsSimulation:
    """`simulate_systems` over a study's items (the strategies read `metrics`' scores;
    with `compare_subset2evaluate`, subset2evaluate's methods too)."""
    data = load_study_data(study, dimension, labels)
    meta = metaeval_data_of(data, attributes_of(study, data), metrics)
    texts = study_texts(data, baseline_metric) if compare_subset2evaluate else None
    return simulate_systems(
        meta, data.ratings.scores().n_ratings, strategies, texts=texts, **options
    )


def _add_spa(found: FieldProtocol, work: MetaEvalData, orders: dict[str, np.ndarray]) -> None:
    """Each row's SPA over the budgets (left None where no source holds every system)."""
    cells = system_cells(work)
    if cells.n_sources < 1:
        return
    column = np.where(cells.cells >= 0, cells.cells % cells.n_sources, -1)
    matrix = cells.means(work.human)[0]
    for row in found.rows:
        values = system_spa(orders[row.strategy], column, matrix)
        row.spa = float(values.mean(axis=1).mean())
        row.spa_by_budget = values.mean(axis=0).tolist()


def _colours(names: Sequence[str]) -> list[int]:
    """A palette place per row: a top-up row takes its strategy's colour (drawn dotted)."""
    places: dict[str, int] = {}
    for name in names:
        places.setdefault(name.removesuffix(SUFFIX), len(places))
    return [places[name.removesuffix(SUFFIX)] for name in names]


def plot_field_svg(found: FieldProtocol, title: str = "") -> str:
    """τ with the full-data ranking at each of the field's budgets, per strategy."""
    series = [(r.strategy, r.by_budget, r.by_budget, r.by_budget) for r in found.rows]
    lowest = min(min(r.by_budget) for r in found.rows)
    names = [r.strategy for r in found.rows]
    return line_chart(
        [p * 100 for p in PROPS],
        series,
        dashed=[r.strategy.startswith(PREFIX) for r in found.rows],
        colours=_colours(names),
        dotted=[name.endswith(SUFFIX) for name in names],
        y_domain=(max(-1.0, min(0.0, np.floor(lowest * 2) / 2)), 1.0),
        title=title,
        x_label="share of the items (%)",
        y_label="Kendall τ with the full-data ranking of the systems",
    )


def simulate_study(
    study: Study,
    strategies: Sequence[str],
    *,
    dimension: str = "meaning",
    labels: str | None = None,
    metrics: Sequence[str] | None = None,
    compare_subset2evaluate: bool = False,
    baseline_metric: str | None = None,
    **options: Any,
) -> Simulation:
    """`simulate` over a study's items: human scores by the one rule, each item costing
    the ratings behind its score, and the stored scores of `metrics` (default: all); with
    `compare_subset2evaluate`, subset2evaluate's methods beside the strategies."""
    data = load_study_data(study, dimension, labels)
    meta = metaeval_data_of(data, attributes_of(study, data), metrics)
    texts = study_texts(data, baseline_metric) if compare_subset2evaluate else None
    return simulate(meta, data.ratings.scores().n_ratings, strategies, texts=texts, **options)


def plot_svg(sim: Simulation, title: str = "") -> str:
    """τ against the full-data ranking over the budget: per strategy the mean over seeds,
    a band from the lowest to the highest seed, and a tick at the mean settled share."""
    first = next(iter(sim.curves.values()))[0]
    series = []
    marks: list[float | None] = []
    by_name = {s.strategy: s for s in sim.summaries()}
    for strategy in sim.curves:
        mean, low, high = sim.mean_tau(strategy)
        series.append((strategy, mean, low, high))
        marks.append(by_name[strategy].mean)
    lowest = min(min(low) for _, _, low, _ in series)
    names = [name for name, _, _, _ in series]
    return line_chart(
        first.shares,
        series,
        dashed=[name.startswith(PREFIX) for name in names],
        colours=_colours(names),
        dotted=[name.endswith(SUFFIX) for name in names],
        y_domain=(max(-1.0, min(0.0, np.floor(lowest * 2) / 2)), 1.0),
        title=title,
        x_label="share of the ratings budget (%)",
        y_label="Kendall τ with the full-data ranking",
        guide=sim.tau_goal,
        markers=marks,
    )


def summary_lines(sim: Simulation) -> list[str]:
    top = ", ".join(sorted(m for m, c in sim.reference.clusters.items() if c == 1))
    lines = [
        f"{sim.n_items} items, {sim.n_ratings} ratings; metrics ranked by {sim.measure} "
        f"({GROUPING_NAMES.get(sim.group_by, sim.group_by)}), clusters by {sim.test} with {sim.resamples} resamples "
        f"at alpha {sim.alpha:g}",
        f"full-data ranking: {' > '.join(sim.reference.order)}",
        f"full-data top cluster: {top or 'none'}",
        f"settled: tau >= {sim.tau_goal:g} and the same top cluster from this share of the "
        "ratings on (mean ± SD over seeds [min–max]; vs random's mean)",
    ]
    summaries = sim.summaries()
    width = max([13, *(len(s.strategy) for s in summaries)])
    for s in summaries:
        ratio = "" if s.of_random is None else f"  {s.of_random:.0%} of random"
        n = len(sim.curves[s.strategy])
        tau_ratio = "" if s.tau_only_of_random is None else f" ({s.tau_only_of_random:.0%})"
        lines.append(
            f"  {s.strategy:<{width}} {s.mean:5.1f} % ± {s.sd:4.1f} [{s.low:g}–{s.high:g}] "
            f"over {n} seeds{ratio}; tau alone: {s.tau_only_mean:.1f} %{tau_ratio}"
        )
    lines.extend(f"  note: {note}" for note in sim.notes)
    if sim.field is not None:
        lines.extend(sim.field.lines())
    if sim.baselines is not None:
        lines.extend(sim.baselines.lines())
    return lines
