"""Which items a rater is asked about first: selection strategies over stored metric scores.

A strategy orders the regular items so that a study which stops early has rated the items
that tell the candidate metrics apart (Zouhar, Cui and Sachan 2025, "How to select
datapoints for efficient human evaluation of NLG models?"). It reads only the metric
scores the study has stored (`balanced`: only the items' systems and sources), never a
human rating, so no rater's answers can steer another rater's queue; with the seed it is
a pure function of what it reads.

- `random`: the queue's shuffle, unchanged (no scores read).
- `disagreement`: each metric ranks the outputs an item is compared with (the other
  outputs of its source, or, where its source has one output, the study's other such
  outputs) and places the item at a percentile in [0, 1]; the item's disagreement is the
  standard deviation of those percentiles over the metrics, highest first. Metrics whose
  scores run against the others (TER: lower is better) are turned round first, by the sign
  of their loading on the scores' first principal component.
- `variance`: Zouhar et al.'s metric variance: per source, the variance of each metric's
  standardised scores over its outputs, averaged over the metrics, highest first; an item
  whose source has one output takes its squared distance from the study's mean instead.
- `diversity`: stratified order: k-means clusters (k = round(√(n/2)), at most 50) over the
  items' standardised score vectors; each prefix of the order holds every cluster in
  proportion to its size.
- `mix`: `disagreement`'s and `diversity`'s orders in turn (the next item of one, then
  of the other, each item at its first place): half of any prefix goes to the items the
  metrics rank most differently, half to covering every cluster of score profiles, so a
  study where disagreement alone dwells on a corner of the data still sees all of it.
- `balanced`: a design for ranking the systems, reading no score at all: the systems in
  turn (each round in a seeded order), so that every prefix holds as equal a number of
  outputs of each system as their sizes allow (counts differ by at most one until a
  system has none left), and each system's outputs in one order of the sources shared by
  all systems, sources that hold the most systems first: two systems' first outputs come
  from the same sources where the study has them, so their difference is a paired one.
  A study with fewer than two systems gets the random order.

Ties (and the order within a cluster) fall to a seeded random draw.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.annotation.settings import SELECTIONS, check_selection
from meaningbench.db.frames import current_scores_sql
from meaningbench.errors import UserError

STRATEGIES = SELECTIONS
MAX_CLUSTERS = 50
KMEANS_ROUNDS = 25


@dataclass(frozen=True)
class ScoreRun:
    """One metric configuration whose newest run is done: its stored label and key."""

    label: str
    metric: str
    config_hash: str


def done_runs(session: Session) -> list[ScoreRun]:
    """Per (metric, config hash) whose newest run finished (`done`), its label."""
    rows = session.execute(
        text(
            """
            SELECT m.label, m.metric, m.config_hash FROM metric_run m
            JOIN (SELECT MAX(id) AS last_id FROM metric_run GROUP BY metric, config_hash) g
              ON g.last_id = m.id
            WHERE m.status = 'done' ORDER BY m.metric, m.id
            """
        )
    ).all()
    return [ScoreRun(str(label), str(metric), str(h)) for label, metric, h in rows]


def resolve_runs(runs: Sequence[ScoreRun], names: Sequence[str] | None) -> list[ScoreRun]:
    """The runs `names` picks (a label such as `bleu[refs=source]`, or a bare metric with
    one done configuration); every done run for None. A `UserError` names what is not there."""
    if names is None:
        return list(runs)
    out: list[ScoreRun] = []
    for name in names:
        hits = [r for r in runs if r.label == name] or [r for r in runs if r.metric == name]
        if len(hits) != 1:
            known = ", ".join(r.label for r in runs) or "none"
            why = "several configurations match" if hits else "no finished run"
            raise UserError(f"Selection metric {name!r}: {why}; finished runs: {known}.")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def stored_scores(
    session: Session, item_ids: Sequence[int], runs: Sequence[ScoreRun]
) -> np.ndarray:
    """(n items, m runs) of the scores that count (NaN where an item has none)."""
    out = np.full((len(item_ids), len(runs)), np.nan)
    row_of = {int(i): r for r, i in enumerate(item_ids)}
    for col, run in enumerate(runs):
        sql = current_scores_sql("m.metric = :m AND m.config_hash = :h")
        for item_id, value in session.execute(
            text(f"SELECT item_id, value FROM ({sql})"), {"m": run.metric, "h": run.config_hash}
        ):
            row = row_of.get(int(item_id))
            if row is not None and value is not None:
                out[row, col] = float(value)
    return out


def _standardised(scores: np.ndarray) -> np.ndarray:
    """Each metric's scores as z-scores; NaN stays NaN; a constant or empty metric is 0."""
    ok = np.isfinite(scores)
    count = np.maximum(ok.sum(axis=0), 1)
    mean = np.where(ok, scores, 0.0).sum(axis=0) / count
    centred = np.where(ok, scores - mean, 0.0)
    sd = np.sqrt((centred**2).sum(axis=0) / count)
    sd = np.where(sd > 0, sd, 1.0)
    return np.asarray(np.where(ok, centred / sd, np.nan))


def _oriented(z: np.ndarray) -> np.ndarray:
    """Flip the metrics that load negatively on the first principal component, so that
    every metric's high end means the same thing."""
    if z.shape[1] < 2:
        return z
    filled = np.nan_to_num(z)
    _, _, vt = np.linalg.svd(filled - filled.mean(axis=0), full_matrices=False)
    lead = vt[0]
    if lead.sum() < 0:
        lead = -lead
    return np.asarray(z * np.where(lead < 0, -1.0, 1.0))


def _comparison_sets(groups: np.ndarray) -> list[np.ndarray]:
    """Index sets whose outputs are compared: each source with two or more outputs, and
    all single-output sources together."""
    codes, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    sets = [np.flatnonzero(inverse == g) for g in range(codes.size) if counts[g] > 1]
    singles = np.flatnonzero(counts[inverse] == 1)
    if singles.size:
        sets.append(singles)
    return sets


def _percentiles(values: np.ndarray) -> np.ndarray:
    """Mid-ranks scaled to [0, 1] per column, NaN where a value is missing."""
    out = np.full(values.shape, np.nan)
    for c in range(values.shape[1]):
        ok = np.isfinite(values[:, c])
        n = int(ok.sum())
        if n == 0:
            continue
        v = values[ok, c]
        order = np.argsort(v, kind="mergesort")
        ranks = np.empty(n)
        ranks[order] = np.arange(n, dtype=np.float64)
        # Ties share their mean rank: a tie says nothing about which output is better.
        _, inv = np.unique(v, return_inverse=True)
        ranks = np.bincount(inv, weights=ranks) / np.bincount(inv)
        out[ok, c] = ranks[inv] / (n - 1) if n > 1 else 0.5
    return out


def disagreement(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per item: the SD over metrics of its percentile among the outputs it is compared
    with (0 where fewer than two metrics scored it)."""
    z = _oriented(_standardised(scores))
    pct = np.full(z.shape, np.nan)
    for idx in _comparison_sets(groups):
        pct[idx] = _percentiles(z[idx])
    enough = np.isfinite(pct).sum(axis=1) >= 2
    out = np.zeros(z.shape[0])
    if enough.any():
        out[enough] = np.nanstd(pct[enough], axis=1)
    return out


def variance(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per item: its source's mean (over metrics) variance of standardised scores over
    its outputs; a single output's squared distance from the study's mean."""
    z = _standardised(scores)
    out = np.zeros(z.shape[0])
    for idx in _comparison_sets(groups):
        block = z[idx]
        if idx.size and np.unique(groups[idx]).size == 1:
            # Per metric with two or more scores here; a metric that scored fewer says nothing.
            scored = np.isfinite(block).sum(axis=0) >= 2
            if scored.any():
                out[idx] = float(np.nanvar(block[:, scored], axis=0).mean())
        else:
            sq = block**2
            filled = np.isfinite(sq).any(axis=1)
            out[idx[filled]] = np.nanmean(sq[filled], axis=1)
    return out


def clusters(scores: np.ndarray, seed: int) -> np.ndarray:
    """k-means labels over the standardised score vectors (missing scores at the mean)."""
    z = np.nan_to_num(_standardised(scores))
    n = z.shape[0]
    k = min(MAX_CLUSTERS, max(1, round(np.sqrt(n / 2))), n)
    if k <= 1 or z.shape[1] == 0:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    # k-means++ seeding, then Lloyd rounds: deterministic for a seed.
    centres = [z[rng.integers(n)]]
    for _ in range(1, k):
        d = np.min([((z - c) ** 2).sum(axis=1) for c in centres], axis=0)
        total = d.sum()
        pick = rng.integers(n) if total <= 0 else rng.choice(n, p=d / total)
        centres.append(z[pick])
    c = np.array(centres)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(KMEANS_ROUNDS):
        labels = ((z[:, None, :] - c[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        for j in range(k):
            members = z[labels == j]
            if members.size:
                c[j] = members.mean(axis=0)
    return labels


def _stratified(labels: np.ndarray, rng: random.Random) -> list[int]:
    """Indices so that each prefix holds every stratum in proportion to its size: the
    i-th (shuffled) member of a stratum of size s sits at (i + u) / s, u uniform."""
    keyed: list[tuple[float, float, int]] = []
    for label in np.unique(labels):
        members = [int(i) for i in np.flatnonzero(labels == label)]
        rng.shuffle(members)
        u = rng.random()
        size = len(members)
        keyed.extend(((j + u) / size, rng.random(), i) for j, i in enumerate(members))
    return [i for *_, i in sorted(keyed)]


def _in_turn(first: Sequence[int], second: Sequence[int]) -> list[int]:
    """The two orders taken in turn, each index once, at its first place."""
    seen: set[int] = set()
    out: list[int] = []
    for pair in zip(first, second, strict=True):
        for i in pair:
            if i not in seen:
                seen.add(i)
                out.append(i)
    return out


def _system_labels(systems: Sequence[object] | None, n: int) -> list[str] | None:
    """Each item's system as a label ("" where it has none); None where the items hold
    fewer than two systems, so a system-balanced order has nothing to balance."""
    if systems is None:
        return None
    if len(systems) != n:
        raise ValueError("one system label per item")
    labels = ["" if s is None else str(s) for s in systems]
    return labels if len({s for s in labels if s}) >= 2 else None


def balance_note(systems: Sequence[object]) -> str | None:
    """Why `balanced` is the random order on these items' systems; None where it is not."""
    if _system_labels(systems, len(systems)) is not None:
        return None
    return "balanced: the items hold fewer than two systems, so its order is the random one"


def balanced(systems: Sequence[str], groups: Sequence[str], rng: random.Random) -> list[int]:
    """Indices in turn over the systems (items without a system as one more), each
    system's items in a shared order of the sources (most systems first, ties seeded)."""
    held: dict[str, set[str]] = {}
    for system, group in zip(systems, groups, strict=True):
        held.setdefault(str(group), set()).add(system)
    sources = sorted(held)
    rng.shuffle(sources)
    # A stable sort keeps the seeded order among sources that hold as many systems.
    sources.sort(key=lambda g: -len(held[g]))
    place = {g: k for k, g in enumerate(sources)}
    tie = [rng.random() for _ in systems]
    queues: dict[str, list[int]] = {}
    for i in sorted(range(len(systems)), key=lambda i: (place[str(groups[i])], tie[i])):
        queues.setdefault(systems[i], []).append(i)
    names = sorted(queues)
    out: list[int] = []
    for depth in range(max(len(q) for q in queues.values())):
        # Each round in its own seeded order: no system is always first.
        rng.shuffle(names)
        out.extend(queues[s][depth] for s in names if depth < len(queues[s]))
    return out


def order(
    strategy: str,
    scores: np.ndarray,
    groups: Sequence[str],
    seed: int,
    systems: Sequence[object] | None = None,
) -> list[int]:
    """Indices of the items (rows of `scores`, aligned with `groups`) in the order to ask.

    `scores` is (n, m): each candidate metric's stored score, NaN where missing.
    `systems`: each item's system (None or "" where it has none); only `balanced` reads
    it, and gives the random order where the items hold fewer than two systems."""
    check_selection(strategy)
    n = scores.shape[0]
    rng = random.Random(seed)
    labels = _system_labels(systems, n) if strategy == "balanced" else None
    if strategy == "random" or n == 0 or (strategy == "balanced" and labels is None):
        idx = list(range(n))
        rng.shuffle(idx)
        return idx
    if labels is not None:
        return balanced(labels, [str(x) for x in groups], rng)
    if strategy == "mix":
        return _in_turn(
            order("disagreement", scores, groups, seed), order("diversity", scores, groups, seed)
        )
    g = np.array([str(x) for x in groups], dtype=object)
    if strategy == "diversity":
        return _stratified(clusters(scores, rng.randrange(2**32)), rng)
    utility = disagreement(scores, g) if strategy == "disagreement" else variance(scores, g)
    # Equal in exact arithmetic must be equal here: the order of the metric columns changes
    # the last bits of a sum, and a tie belongs to the seed.
    utility = np.round(utility, 10)
    tie = [rng.random() for _ in range(n)]
    return sorted(range(n), key=lambda i: (-float(utility[i]), tie[i]))
