"""The dashboard's background reads, as plain jobs (`job(ctx)`) with no Qt in them.

A job never touches the GUI thread's StudyAnalysis: ratings keep landing in it and score
batches fill its matrix in place. Jobs that need its numbers get a `Snapshot` (copies
made on the GUI thread); jobs that need the database open the study file themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from meaningbench.analysis.agreement import N_BOOT as AGREEMENT_BOOT
from meaningbench.analysis.agreement import (
    AgreementResult,
    agreement_of_units,
    machine_agreement,
    machine_rater_units,
    ratings_agreement,
)
from meaningbench.analysis.correlation import CorrelationTable, correlate_many
from meaningbench.analysis.human import RaterUnits
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.qc import QCResult, study_qc
from meaningbench.analysis.rater_checks import RaterCheck, study_machine_checks
from meaningbench.analysis.sanity import SanityTable, study_sanity
from meaningbench.queries.dashboard import load_analysis, report_summary
from meaningbench.queries.files import open_study
from meaningbench.runtime import Job, JobContext

HEATMAP_METHODS = ("pearson", "spearman")
N_BOOT = 1000
SEED = 0


def empty_table(dimension: str, z: bool, n_items: int) -> CorrelationTable:
    """The table of a study without metric runs (the analysis needs one column at least)."""
    return CorrelationTable(results={}, dimension=dimension, z=z, n_items=n_items)


@dataclass
class Snapshot:
    """The analysis inputs as they were at `version`, copied for a worker."""

    version: int
    names: list[str]
    metric_values: np.ndarray
    human: np.ndarray  # per item: raw mean or mean z-score (what is correlated)
    rating: np.ndarray  # per item: raw mean on 0–100 (for R² and RMSE)
    systems: np.ndarray
    groups: np.ndarray
    dimension: str
    z: bool
    n_from_aggregate: int
    units: RaterUnits  # per-rater ratings by the rule, for agreement
    rater_names: list[str]
    # Per machine rater (an LLM judge stored as a rater): its code and the raters' units
    # plus its own, for alpha with it; never part of `units`.
    machine_units: dict[str, tuple[int, RaterUnits]] = field(default_factory=dict)

    @classmethod
    def of(cls, analysis: StudyAnalysis, *, z: bool, version: int) -> Snapshot:
        data = analysis.data
        scores = data.ratings.scores()
        return cls(
            version=version,
            names=list(data.metric_names),
            metric_values=data.metric_values.copy(),
            human=scores.values(z).copy(),
            rating=data.dimension.to_percent(scores.raw).copy(),
            systems=data.systems,
            groups=data.groups,
            dimension=data.dimension.name,
            z=z,
            n_from_aggregate=int(scores.from_aggregate.sum()),
            units=data.ratings.units(),
            rater_names=data.ratings.annotators,
            machine_units=machine_rater_units(data.ratings),
        )

    def correlations(
        self, *, n_boot: int, groups: str = "items", kendall: bool = True
    ) -> CorrelationTable:
        """What `StudyAnalysis.correlations` gives for the same arguments, on the copies."""
        if not self.names:
            return empty_table(self.dimension, self.z, int(np.isfinite(self.human).sum()))
        table = correlate_many(
            self.metric_values,
            self.human,
            self.names,
            n_boot=n_boot,
            seed=SEED,
            groups=self.groups if groups == "sources" else None,
            systems=self.systems,
            rating_values=self.rating,
            kendall=kendall,
            dimension=self.dimension,
            z=self.z,
        )
        table.extra["n_from_aggregate"] = self.n_from_aggregate
        return table

    def agreement(self) -> AgreementResult:
        # The resamples, splits and seed of `meaningbench agreement` (its defaults): the
        # tab's intervals are the command's to the last digit (under a second on 10,000 items).
        result = agreement_of_units(
            self.units, rater_names=self.rater_names, n_boot=AGREEMENT_BOOT, seed=SEED
        )
        return replace(result, machine=machine_agreement(self.machine_units, result.alpha))


@dataclass(frozen=True)
class Loaded:
    """A study's analysis state, read from the file in the background, for
    `meaningbench.queries.dashboard_state.DashboardState.install`."""

    analysis: StudyAnalysis
    dimensions: list[str]
    heatmaps: dict[str, pd.DataFrame] = field(default_factory=dict)
    runs: dict[str, tuple[str, str]] = field(default_factory=dict)  # see LoadedAnalysis


@dataclass(frozen=True)
class Refreshed:
    """Worker results for the data as it was at `version`."""

    version: int
    table: CorrelationTable
    agreement: AgreementResult | None = None
    qc: QCResult | None = None
    machines: list[RaterCheck] = field(default_factory=list)  # the machine raters' checks


def load_job(path: Path, dimension: str | None) -> Job[Loaded]:
    """Read the study's analysis state; the metric × metric correlations come along."""

    def run(ctx: JobContext) -> Loaded:
        ctx.progress(0, None, "Reading the study", force=True)
        loaded = load_analysis(path, dimension)
        analysis, known = loaded.analysis, loaded.dimensions
        ctx.check()
        analysis.order  # noqa: B018 - sort the metric columns here, not on the GUI thread
        heatmaps = {m: analysis.metric_correlations(m) for m in HEATMAP_METHODS}
        return Loaded(analysis, known, heatmaps, loaded.runs)

    return run


def refresh_job(
    snapshot: Snapshot,
    path: Path,
    *,
    n_boot: int = N_BOOT,
    groups: str = "items",
    quality: bool = True,
) -> Job[Refreshed]:
    """Bootstrap intervals (and Kendall), then agreement and rater QC when asked."""

    def run(ctx: JobContext) -> Refreshed:
        table = snapshot.correlations(n_boot=n_boot, groups=groups, kendall=True)
        if not quality:
            return Refreshed(snapshot.version, table)
        ctx.check()
        agreement = snapshot.agreement()
        with open_study(path, allow_read_only=True) as study:
            qc = study_qc(study, snapshot.dimension)
            machines = study_machine_checks(study, snapshot.dimension)
        return Refreshed(snapshot.version, table, agreement, qc, machines)

    return run


def points_job(snapshot: Snapshot, *, kendall: bool) -> Job[Refreshed]:
    """The cheap path on a worker, for studies where it does not fit the GUI thread."""

    def run(_ctx: JobContext) -> Refreshed:
        return Refreshed(snapshot.version, snapshot.correlations(n_boot=0, kendall=kendall))

    return run


@dataclass(frozen=True)
class SanityRequest:
    unrelated: str = "wordsoup"
    n: int = 200

    @property
    def key(self) -> tuple[str, int]:
        return (self.unrelated, self.n)


def sanity_job(path: Path, request: SanityRequest) -> Job[SanityTable]:
    """Score identical and unrelated pairs with every metric the study has run."""

    def run(ctx: JobContext) -> SanityTable:
        seen: dict[str, int] = {}

        def report(column: str, done: int, total: int) -> None:
            index = seen.setdefault(column, len(seen))
            ctx.progress(done, total, f"Sanity checks: {column} (metric {index + 1})")

        ctx.progress(0, None, "Sanity checks: building the pairs", force=True)
        with open_study(path, allow_read_only=True) as study:
            return study_sanity(
                study,
                None,
                unrelated=request.unrelated,
                n=request.n,
                seed=SEED,
                cancel=ctx.cancel,
                progress=report,
            )

    return run


@dataclass(frozen=True)
class ReportRequest:
    dest: Path
    dimension: str
    z: bool = False
    groups: str = "items"
    scatter_column: str | None = None
    sanity: SanityTable | None = None  # the session's cached checks; never run for a report


def report_job(path: Path, request: ReportRequest) -> Job[Path]:
    """The whole study as one self-contained HTML file, from the file as it is now."""
    from meaningbench.analysis.report import ReportData, add_which_metric, write_report

    def run(ctx: JobContext) -> Path:
        ctx.progress(0, 4, "Report: reading the study", force=True)
        with open_study(path, allow_read_only=True) as study:
            summary = report_summary(study)
            analysis = StudyAnalysis.from_study(study, request.dimension)
            ctx.progress(1, 4, "Report: correlations and intervals")
            table = analysis.correlations(
                z=request.z, n_boot=N_BOOT, seed=SEED, groups=request.groups
            )
            ctx.check()
            data = ReportData(title=f"MeaningBench report: {path.name}", summary=summary)
            data.correlations = table
            column = request.scatter_column
            if column is None or column not in analysis.metric_names:
                ranked = [
                    k for k in table.sorted_by("pearson") if np.isfinite(table.results[k].pearson)
                ]
                column = ranked[0] if ranked else None
            if column is not None:
                points = analysis.scatter(column, z=request.z)
                data.scatter_column = column
                data.scatter_x = points["metric"].to_numpy()
                data.scatter_y = points["human"].to_numpy()
                data.williams = analysis.williams(z=request.z)
            ctx.progress(2, 4, "Report: agreement and rater QC")
            data.agreement = ratings_agreement(analysis.data.ratings, seed=SEED)
            data.qc = study_qc(study, request.dimension)
            ctx.check()
            data.dimension = request.dimension
            add_which_metric(data, study, request.dimension, None, "item", None, N_BOOT, SEED)
        data.sanity = request.sanity
        if request.sanity is None:
            data.notes.append(
                "Sanity checks were not run in this session; run them on the dashboard's "
                "Sanity checks tab (or `meaningbench sanity`) to include them."
            )
        ctx.progress(3, 4, "Report: writing")
        return write_report(data, request.dest)

    return run
