"""subset2evaluate's own selection methods as baselines beside the product's strategies.

The package (Zouhar, Cui & Sachan, TACL 2025; `subset2evaluate` 1.0.27, MIT) orders
*items* where an item is a source with every system's output and its scores:
`{"i", "src", "tgt": {system: output}, "scores": {system: {metric: value}}}`. The
product's item is one rated output. A baseline therefore runs on the study's outputs
grouped by source (each source one subset2evaluate item, its outputs keyed by system),
and its order of the sources is spread back to the outputs: a source's outputs follow
each other, in the study's order, where the method put the source. The budgets then cut
the outputs as they cut the product's strategies' orders (a cut may split a source), so
every order is measured by one protocol on one unit. The package's loaders keep only the
items that hold every system (`utils`' filter of items and systems), and `metric_cons`
needs them to: so the methods see the sources that hold an output of every system of
the study, and the other sources' outputs follow theirs, in the seed's order.

The methods read only the candidate metrics' stored scores and the texts, never a
rating: no human score is handed to them. Their utilities do not depend on the order of
the data, so each runs once; the package sorts by utility, highest first, keeping the
data's order among ties (a stable sort), and here the sources are shuffled by the seed
before that sort, so ties fall to the seed as the product's strategies' ties do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meaningbench.errors import UserError

S2E_VERSION = "1.0.27"
INSTALL = f"pip install subset2evaluate=={S2E_VERSION} --no-deps"
PREFIX = "s2e "


@dataclass(frozen=True)
class Baseline:
    """One of the package's methods: its row name, `METHODS` key and arguments."""

    name: str
    method: str
    options: dict[str, str] = field(default_factory=dict)
    reads_metric: bool = False  # takes the study's metric by `metric=`


BASELINES = (
    Baseline(PREFIX + "metric_var", "metric_var", reads_metric=True),
    Baseline(PREFIX + "metric_cons", "metric_cons", reads_metric=True),
    Baseline(PREFIX + "div_unigram", "diversity", {"metric": "unigram"}),
    Baseline(PREFIX + "div_bleu", "diversity", {"metric": "bleu"}),
    Baseline(PREFIX + "pyirt_diffdisc", "pyirt_diffdisc", reads_metric=True),
)


def require_subset2evaluate() -> None:
    """A `UserError` naming the install command when the package cannot be imported."""
    try:
        import subset2evaluate.methods  # noqa: F401
    except ImportError as e:
        raise UserError(
            f"--compare-subset2evaluate runs subset2evaluate {S2E_VERSION}'s own methods, "
            f"and it is not installed ({e}); install it with: {INSTALL}"
        ) from e


@dataclass(frozen=True)
class StudyTexts:
    """What the baselines read besides the metric scores, one per output of the data:
    the output's text and its source's text; `metric`: the one metric_var, metric_cons
    and pyirt read (None: the first candidate metric)."""

    outputs: np.ndarray
    source_texts: np.ndarray
    metric: str | None = None


@dataclass
class BaselineOrders:
    """Per baseline that ran: its order of the outputs at each seed; the others' reasons."""

    metric: str
    orders: dict[str, np.ndarray] = field(default_factory=dict)  # seeds × n
    unavailable: dict[str, str] = field(default_factory=dict)
    n_sources: int = 0  # the sources the methods saw: those with every system
    n_other_sources: int = 0  # their outputs follow, in the seed's order

    def to_dict(self) -> dict[str, Any]:
        return {
            "package": f"subset2evaluate {S2E_VERSION}",
            "metric": self.metric,
            "sources": self.n_sources,
            "sources_without_every_system": self.n_other_sources,
            "methods": {
                b.name: {
                    "method": b.method,
                    "options": {**b.options, **({"metric": self.metric} if b.reads_metric else {})},
                }
                for b in BASELINES
            },
            "ran": list(self.orders),
            "unavailable": self.unavailable,
        }

    def lines(self) -> list[str]:
        if not self.orders:
            out = [f"subset2evaluate {S2E_VERSION}'s methods: none ran on this study"]
            return out + [f"  {name}: unavailable: {why}" for name, why in self.unavailable.items()]
        out = [
            f"rows marked '{PREFIX.strip()}': subset2evaluate {S2E_VERSION}'s own methods on the "
            f"study's {self.n_sources} sources with every system (each with its outputs; "
            f"metric_var, metric_cons and pyirt read {self.metric})"
            + (
                f"; the outputs of the {self.n_other_sources} other sources follow, in the "
                "seed's order"
                if self.n_other_sources
                else ""
            )
        ]
        out += [f"  {name}: unavailable: {why}" for name, why in self.unavailable.items()]
        return out


def source_items(
    sources: Sequence[object] | np.ndarray,
    systems: Sequence[object] | np.ndarray,
    outputs: Sequence[object] | np.ndarray,
    source_texts: Sequence[object] | np.ndarray,
    metrics: np.ndarray,
    metric_names: Sequence[str],
) -> tuple[list[dict[str, Any]], list[np.ndarray], list[np.ndarray]]:
    """The outputs as subset2evaluate's items (one per source that holds every system, in
    first-seen order), per item the rows of its outputs, and the rows of each other
    source. An output without a system is keyed by its place in its source; a system met
    twice in a source gets a primed key."""
    members: dict[str, list[int]] = {}
    for row, src in enumerate(sources):
        members.setdefault(str(src), []).append(row)
    items: list[dict[str, Any]] = []
    rows_of: list[np.ndarray] = []
    for rows in members.values():
        tgt: dict[str, str] = {}
        scores: dict[str, dict[str, float]] = {}
        for place, row in enumerate(rows):
            system = systems[row]
            key = str(system) if system is not None and str(system) != "" else f"output {place}"
            while key in tgt:
                key += "'"
            tgt[key] = str(outputs[row] or "")
            scores[key] = {m: float(metrics[row, j]) for j, m in enumerate(metric_names)}
        items.append({"src": str(source_texts[rows[0]] or ""), "tgt": tgt, "scores": scores})
        rows_of.append(np.asarray(rows, dtype=np.int64))
    every = set().union(*(item["tgt"] for item in items)) if items else set()
    whole = [k for k, item in enumerate(items) if set(item["tgt"]) == every]
    kept = [{"i": i, **items[k]} for i, k in enumerate(whole)]
    rest = [rows_of[k] for k in range(len(items)) if k not in set(whole)]
    return kept, [rows_of[k] for k in whole], rest


def order_of(
    utility: np.ndarray,
    rows_of: Sequence[np.ndarray],
    seed: int,
    rest: Sequence[np.ndarray] = (),
) -> np.ndarray:
    """The outputs' order: the sources shuffled by the seed, then sorted by utility,
    highest first and stable (`select_subset.basic`), each source's outputs in a row; a
    utility that is not a number goes last; then the `rest` sources in the seed's order."""
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(rows_of))
    key = np.where(np.isfinite(utility), utility, -np.inf)[shuffled]
    ranked = shuffled[np.argsort(-key, kind="stable")]
    tail = [rest[k] for k in rng.permutation(len(rest))]
    parts = [rows_of[s] for s in ranked] + tail
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def baseline_orders(
    sources: Sequence[object] | np.ndarray,
    systems: Sequence[object] | np.ndarray,
    outputs: Sequence[object] | np.ndarray,
    source_texts: Sequence[object] | np.ndarray,
    metrics: np.ndarray,
    metric_names: Sequence[str],
    metric: str,
    seeds: Sequence[int],
) -> BaselineOrders:
    """Every baseline's order of the outputs at each seed; a method the package cannot run
    here (pyirt_diffdisc without py-irt, say) is recorded with the package's reason."""
    require_subset2evaluate()
    import subset2evaluate.methods as methods

    if metric not in metric_names:
        raise UserError(
            f"--baseline-metric {metric}: not a candidate metric here ({', '.join(metric_names)})"
        )
    items, rows_of, rest = source_items(
        sources, systems, outputs, source_texts, metrics, metric_names
    )
    found = BaselineOrders(metric, n_sources=len(items), n_other_sources=len(rest))
    why = _no_items(systems, items)
    if why:
        found.unavailable = {b.name: why for b in BASELINES}
        return found
    for b in BASELINES:
        options: dict[str, Any] = dict(b.options)
        if b.reads_metric:
            options["metric"] = metric
        try:
            raw = methods.METHODS[b.method](list(items), **options)
            utility = np.asarray(raw, dtype=np.float64).reshape(len(items))
        except Exception as e:  # the package's own refusal (a missing extra, no GPU)
            found.unavailable[b.name] = _reason(b, e)
            continue
        found.orders[b.name] = np.array([order_of(utility, rows_of, s, rest) for s in seeds])
    return found


def _no_items(systems: Sequence[object] | np.ndarray, items: Sequence[dict[str, Any]]) -> str:
    """Why the study has nothing the package's methods compare ("" when it has)."""
    named = {str(s) for s in systems if s is not None and str(s) != ""}
    if len(named) < 2:
        return (
            "subset2evaluate's items compare systems' outputs of one source, and the study's "
            f"outputs carry {'no system' if not named else 'one system'}"
        )
    if not items:
        return (
            f"no source holds an output of each of the study's {len(named)} systems, and "
            "subset2evaluate's items must (its loaders drop the others)"
        )
    return ""


def _reason(b: Baseline, error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    if b.method.startswith("pyirt"):
        return (
            f"{text} (subset2evaluate's pyirt needs zouharvi's py-irt fork, which is not on "
            "the package index, and trains on device='cuda')"
        )
    return f"subset2evaluate's {b.method} failed here: {text}"
