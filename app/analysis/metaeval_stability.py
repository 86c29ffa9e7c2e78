"""Is it time to stop rating: how stable the ranking of metrics and its top significance
cluster are, from the ratings in so far.

Three figures, each from the ranking the meta-evaluation engine gives
(`meaningbench.analysis.metaeval_significance.rank_metrics`: MTME's AssignRanks rule on
the chosen measure, grouping and test):

- Agreement. The study's sources are resampled with replacement (seeded); each drawn copy
  of a source brings all its rated outputs and counts as a source of its own. The ranking
  is computed again on every resample (with `inner_resamples` for its test). The share of
  resamples whose top cluster is the same set of metrics as the current top cluster is
  the agreement; the mean Kendall τ between each resample's order of metrics and the
  current order says how much the rest of the ranking moves.
- History. The ratings are put in the order they were given (submitted time, then rating
  id) and the top cluster is computed again as it stood after each `HISTORY` share of
  them (80 %, 85 %, … 100 %): "the top cluster has not changed over the last 20 % of
  ratings" when every one of those equals today's.
- Trend. The agreement is also measured after each `TREND` share of the ratings (50 %,
  60 %, … 100 %). With a fixed true difference between two metrics, the test statistic
  behind the clusters grows with the square root of the number of ratings n, so the
  agreement behaves like Φ(α + β·√n): the probit of the agreement (clipped to
  [½/R, 1 − ½/R] for R resamples) is fitted by least squares as a line in √n, and solved
  for the target agreement. No estimate is given when fewer than three checkpoints have
  an agreement, when the fitted line does not rise clearly (β ≤ 0, or β's t statistic
  below the one-sided 95 % point of Student's t with k − 2 degrees of freedom for k
  checkpoints), or when the target lies beyond `MAX_EXTRAPOLATION` times the ratings in:
  then the signal says why.

Arrays only (`MetaEvalData` snapshots); the study's timeline is read by
`meaningbench.analysis.metaeval_study.metaeval_snapshots`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING
from meaningbench.analysis.metaeval_significance import Ranking, rank_metrics
from meaningbench.errors import UserError

HISTORY = (0.8, 0.85, 0.9, 0.95, 1.0)
TREND = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
RESAMPLES = 40  # bootstrap resamples of sources per checkpoint
INNER_RESAMPLES = 100  # the significance test's resamples inside each bootstrap resample
TARGET = 0.95
MAX_EXTRAPOLATION = 3.0  # no estimate of more ratings than this many times those in
MIN_TREND_POINTS = 3

# Called after each resample: (done, total) over the whole computation.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Snapshot:
    """The study's outputs as they stood after the first `ratings` ratings
    (`fraction` of those in now)."""

    fraction: float
    ratings: int
    data: MetaEvalData


@dataclass(frozen=True)
class StabilityOptions:
    """The ranking to test (as the tab ranks) and how hard to resample it."""

    measure: str = "pearson"
    group_by: str = DEFAULT_GROUPING
    test: str = "perm-both"
    alpha: float = 0.05
    tie_threshold: float = 5.0
    seed: int = 0
    ranking_resamples: int = 1000  # the test of the ranking at each checkpoint
    resamples: int = RESAMPLES
    inner_resamples: int = INNER_RESAMPLES
    target: float = TARGET


@dataclass
class Checkpoint:
    """The ranking after `fraction` of the ratings; agreement only at the trend's points."""

    fraction: float
    ratings: int
    top: tuple[str, ...] | None  # the top cluster, None when nothing could be ranked
    order: list[str] = field(default_factory=list)
    agreement: float | None = None
    tau: float | None = None
    first: float | None = None  # share of resamples with the same best metric
    resamples: int = 0  # resamples that gave a ranking


@dataclass
class Trend:
    """How many more ratings the agreement's trend asks for, or why it cannot say."""

    more: int | None  # ratings to add (0: the target is reached)
    reason: str | None  # why there is no estimate
    points: int = 0  # checkpoints the line was fitted on
    since: float | None = None  # the earliest fraction of ratings the fit used
    intercept: float | None = None  # α of Φ⁻¹(agreement) = α + β·√n
    slope: float | None = None  # β
    target_ratings: int | None = None  # n where the line reaches the target
    slope_t: float | None = None  # β over its standard error


@dataclass(frozen=True)
class Stability:
    """The signal: agreement and τ now, the top cluster's history and the trend."""

    options: StabilityOptions
    ratings: int
    top: tuple[str, ...] | None
    agreement: float | None
    tau: float | None
    first: float | None  # share of resamples whose best metric is today's best
    history: list[Checkpoint]
    trend_points: list[Checkpoint]
    trend: Trend
    unchanged_since: float | None  # the earliest history fraction from which top is today's
    message: str | None = None  # why there is no signal

    @classmethod
    def nothing(cls, options: StabilityOptions, message: str) -> Stability:
        """No signal, and why."""
        return cls(options, 0, None, None, None, None, [], [], Trend(None, message), None,
                   message=message)  # fmt: skip

    @property
    def unchanged_share(self) -> float | None:
        """The share of the ratings over which the top cluster has stayed as it is."""
        return None if self.unchanged_since is None else 1.0 - self.unchanged_since

    @property
    def settled(self) -> bool:
        """The top cluster is unchanged over the whole history and agreement is at target."""
        return (
            self.agreement is not None
            and self.agreement >= self.options.target
            and self.unchanged_since is not None
            and self.unchanged_since <= self.history[0].fraction
        )

    def verdict(self) -> str:
        """The signal as a plain answer to "may I stop rating?"."""
        if self.message is not None or self.top is None or self.agreement is None:
            return "too few ratings to tell — keep rating"
        if self.settled:
            return "settled — you can stop rating"
        return "not settled — keep rating"

    def to_dict(self) -> dict[str, Any]:
        """The signal as plain numbers and words (`metaeval --json`)."""
        o = self.options
        return {
            "verdict": self.verdict(),
            "settled": self.settled,
            "sentence": self.sentence(),
            "trend": self.trend_sentence(),
            "ratings": self.ratings,
            "top_cluster": list(self.top) if self.top else None,
            "agreement": self.agreement,
            "tau": self.tau,
            "same_best": self.first,
            "unchanged_share": self.unchanged_share,
            "more_ratings": self.trend.more,
            "target": o.target,
            "settings": {
                "measure": o.measure,
                "group_by": o.group_by,
                "test": o.test,
                "alpha": o.alpha,
                "seed": o.seed,
                "resamples": o.resamples,
                "inner_resamples": o.inner_resamples,
            },
        }

    def sentence(self) -> str:
        """The signal in words: the history and the agreement."""
        if self.message is not None or self.top is None or self.agreement is None:
            return self.message or "Too few ratings to tell."
        share = self.unchanged_share or 0.0
        if share > 0:
            history = f"The top cluster has not changed over the last {share:.0%} of ratings"
        else:
            before = [p.fraction for p in self.history if p.fraction < 1.0]
            last = 1.0 - max(before) if before else 1.0
            history = f"The top cluster changed within the last {last:.0%} of ratings"
        agree = f"{self.agreement:.0%} of resamples agree"
        more = []
        if self.top is not None and len(self.top) > 1 and self.first is not None:
            more.append(f"the same best metric in {self.first:.0%}")
        if self.tau is not None:
            more.append(f"mean Kendall τ {self.tau:.2f}")
        return f"{history}; {agree}" + (f" ({', '.join(more)})" if more else "") + "."

    def trend_sentence(self) -> str:
        t = self.trend
        if t.more is None:
            return t.reason or "Too few ratings to tell."
        target = f"{self.options.target:.0%}"
        since = f"{t.since:.0%}" if t.since is not None else "all"
        if t.more == 0:
            return f"Agreement has reached {target}."
        return (
            f"About {t.more:,} more ratings would bring agreement to {target} "
            f"(trend from {since} of the ratings in on)."
        )


def top_cluster(ranking: Ranking) -> tuple[str, ...] | None:
    top = tuple(sorted(m for m, c in ranking.clusters.items() if c == 1))
    return top or None


def order_tau(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Kendall τ between two orders of metrics, on the metrics both rank (None: < 2)."""
    common = [m for m in a if m in b]
    if len(common) < 2:
        return None
    pos = {m: k for k, m in enumerate(b)}
    ranks = [pos[m] for m in common]  # `common` is in a's order
    n = len(ranks)
    score = sum(1 if ranks[j] > ranks[i] else -1 for i in range(n) for j in range(i + 1, n))
    return score / (n * (n - 1) / 2)


def _rank(data: MetaEvalData, options: StabilityOptions, resamples: int) -> Ranking:
    return rank_metrics(
        data,
        options.measure,
        group_by=options.group_by,
        test=options.test,
        resamples=resamples,
        seed=options.seed,
        alpha=options.alpha,
        tie_threshold=options.tie_threshold,
        intervals=False,
    )


def resample_sources(data: MetaEvalData, rng: np.random.Generator) -> MetaEvalData:
    """One bootstrap resample: sources drawn with replacement, each copy a source of its
    own with all its outputs."""
    codes = data.source_codes()
    n_src = int(codes.max()) + 1 if codes.size else 0
    members = [np.flatnonzero(codes == k) for k in range(n_src)]
    drawn = rng.integers(0, n_src, n_src)
    idx = np.concatenate([members[k] for k in drawn]) if n_src else np.zeros(0, np.intp)
    copy = np.repeat(np.arange(n_src), [members[k].size for k in drawn])
    out = data.subset(idx)
    out.sources = np.array([f"{s}\0{c}" for s, c in zip(out.sources, copy, strict=True)],
                           dtype=object)  # fmt: skip
    return out


@dataclass(frozen=True)
class Agreement:
    """How the resamples' rankings compare with the current one."""

    top: float | None  # share with the same top cluster
    tau: float | None  # mean Kendall τ of the orders
    first: float | None  # share with the same best metric
    ranked: int  # resamples that gave a ranking


def bootstrap_agreement(
    data: MetaEvalData,
    current: Ranking,
    options: StabilityOptions,
    step: Callable[[], None] | None = None,
) -> Agreement:
    """`current` against the rankings of resamples of `data` (see the module text)."""
    top = top_cluster(current)
    if top is None:
        return Agreement(None, None, None, 0)
    work = data.subset(data.common())
    rng = np.random.default_rng(options.seed)
    same, first, taus, ranked = 0, 0, [], 0
    for _ in range(options.resamples):
        sample = resample_sources(work, rng)
        try:
            ranking = _rank(sample, options, options.inner_resamples)
        except UserError:
            ranking = None
        if ranking is not None and top_cluster(ranking) is not None:
            ranked += 1
            same += top_cluster(ranking) == top
            first += ranking.order[0] == current.order[0]
            tau = order_tau(current.order, ranking.order)
            if tau is not None:
                taus.append(tau)
        if step is not None:
            step()
    if ranked == 0:
        return Agreement(None, None, None, 0)
    tau = float(np.mean(taus)) if taus else None
    return Agreement(same / ranked, tau, first / ranked, ranked)


def _slope_t(x: np.ndarray, y: np.ndarray, slope: float, intercept: float) -> float:
    """The least-squares slope over its standard error (inf on an exact line)."""
    resid = y - (intercept + slope * x)
    dof = x.size - 2
    spread = float(((x - x.mean()) ** 2).sum())
    s2 = float((resid**2).sum()) / dof if dof > 0 else math.inf
    se = math.sqrt(s2 / spread) if spread > 0 else math.inf
    if se == 0:
        return math.inf if slope > 0 else -math.inf
    return slope / se


def fit_trend(points: Sequence[Checkpoint], now: int, options: StabilityOptions) -> Trend:
    """The probit-in-√n line through the checkpoints' agreement (see the module text)."""
    usable = [p for p in points if p.agreement is not None and p.ratings > 0]
    last = usable[-1] if usable else None
    if last is not None and last.ratings == now and (last.agreement or 0.0) >= options.target:
        return Trend(more=0, reason=None, points=len(usable))
    if len(usable) < MIN_TREND_POINTS:
        return Trend(None, "Too few ratings to tell how many more would settle it.", len(usable))
    lo = 0.5 / max(options.resamples, 1)
    n = np.array([math.sqrt(p.ratings) for p in usable])
    a = np.clip(np.array([float(p.agreement or 0.0) for p in usable]), lo, 1 - lo)
    y = norm.ppf(a)
    if np.ptp(n) == 0:
        return Trend(None, "Too few ratings to tell how many more would settle it.", len(usable))
    slope, intercept = np.polyfit(n, y, 1)
    since = usable[0].fraction
    base = Trend(None, None, len(usable), since, float(intercept), float(slope))
    base.slope_t = _slope_t(n, y, float(slope), float(intercept))
    if slope <= 0:
        base.reason = (
            "Agreement has not grown with the ratings so far: no trend to tell how many "
            "more ratings would settle it."
        )
        return base
    if base.slope_t < float(student_t.ppf(0.95, len(usable) - 2)):
        base.reason = (
            "Agreement has not grown clearly with the ratings so far (the trend's rise is "
            f"not significant, t = {base.slope_t:.1f} over {len(usable)} points): too noisy "
            "to tell how many more ratings would settle it."
        )
        return base
    need = ((float(norm.ppf(options.target)) - intercept) / slope) ** 2
    base.target_ratings = math.ceil(need)
    if need > MAX_EXTRAPOLATION * now:
        base.reason = (
            f"Too few ratings to tell how many more: the trend points to about "
            f"{base.target_ratings:,} ratings in all, beyond {MAX_EXTRAPOLATION:g} times "
            f"the {now:,} in so far, too far to extrapolate."
        )
        return base
    base.more = max(1, math.ceil(need - now))
    return base


def _unchanged_since(history: Sequence[Checkpoint], top: tuple[str, ...] | None) -> float | None:
    """The earliest history fraction from which every top cluster is `top`."""
    unchanged: float | None = None
    if top is not None:
        for p in reversed(history):
            if p.top != top:
                break
            unchanged = p.fraction
    return unchanged


def _checkpoints(
    history_snaps: Sequence[Snapshot],
    trend_snaps: Sequence[Snapshot],
    options: StabilityOptions,
    progress: Progress | None,
) -> tuple[list[Checkpoint], list[Checkpoint]]:
    """The history's checkpoints (rankings) and the trend's (rankings and agreement)."""
    total = len(trend_snaps) * options.resamples
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    rankings: dict[float, Ranking | None] = {}
    for s in {id(x): x for x in [*history_snaps, *trend_snaps]}.values():
        try:
            rankings[s.fraction] = _rank(s.data, options, options.ranking_resamples)
        except UserError:
            rankings[s.fraction] = None

    def checkpoint(s: Snapshot) -> Checkpoint:
        r = rankings[s.fraction]
        return Checkpoint(
            s.fraction, s.ratings, None if r is None else top_cluster(r),
            [] if r is None else list(r.order),
        )  # fmt: skip

    history = [checkpoint(s) for s in history_snaps]
    trend_points = []
    for s in trend_snaps:
        point = checkpoint(s)
        r = rankings[s.fraction]
        if r is not None and s.data.common().sum() >= 2:
            got = bootstrap_agreement(s.data, r, options, step)
            point.agreement, point.tau, point.first = got.top, got.tau, got.first
            point.resamples = got.ranked
        else:
            for _ in range(options.resamples):
                step()
        trend_points.append(point)
    return history, trend_points


def ranking_stability(
    snapshots: Sequence[Snapshot],
    options: StabilityOptions | None = None,
    progress: Progress | None = None,
) -> Stability:
    """The signal from snapshots of the study in rating order (the last one is now).

    History checkpoints are the snapshots at `HISTORY` fractions, trend checkpoints those
    at `TREND` fractions (matched to 1e-9); others are ignored. The last snapshot must be
    at 100 % (a fraction both lists hold)."""
    options = options or StabilityOptions()
    snaps = sorted(snapshots, key=lambda s: s.fraction)
    if not snaps or snaps[-1].ratings == 0:
        return Stability.nothing(options, "No ratings yet: too few ratings to tell.")

    def at(fractions: Sequence[float]) -> list[Snapshot]:
        return [s for s in snaps if any(abs(s.fraction - f) < 1e-9 for f in fractions)]

    history, trend_points = _checkpoints(at(HISTORY), at(TREND), options, progress)
    now = snaps[-1]
    now_point = next((p for p in trend_points if p.fraction == now.fraction), None)
    if now_point is None or now_point.top is None or now_point.agreement is None:
        return Stability.nothing(options, "Too few ratings to tell.")
    return Stability(
        options=options,
        ratings=now.ratings,
        top=now_point.top,
        agreement=now_point.agreement,
        tau=now_point.tau,
        first=now_point.first,
        history=history,
        trend_points=trend_points,
        trend=fit_trend(trend_points, now.ratings, options),
        unchanged_since=_unchanged_since(history, now_point.top),
    )
