"""What the sweep command and the Sweep page read: a sweep's table from a study.

The configurations of a sweep are ordinary metric runs, so their table is read from the
study like any correlation, each configuration under the column of its (metric, config
hash) — the name a `score` run of it stored first, if one did.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.score_columns import runs_frame
from meaningbench.analysis.sweep_table import SweepEntry, SweepRow, SweepTable, sweep_table
from meaningbench.db.study import Study, open_study
from meaningbench.errors import StudyNotFoundError, UserError
from meaningbench.jobs.sweep import SweepOutcome

# A sweep's table and its rows are what the Sweep page draws.
__all__ = ["SweepRow", "SweepTable", "entries", "load_sweep_table"]


def _columns_of_runs(study: Study, run_ids: Sequence[int]) -> dict[int, str]:
    """The table column of each run: that of its (metric, config hash), as every table names
    it (a configuration scored before under another spelling keeps that run's name)."""
    if not run_ids:
        return {}
    with study.session() as session:
        runs = runs_frame(session)
        marks = ",".join("?" * len(run_ids))
        rows = session.connection().exec_driver_sql(
            f"SELECT id, metric, config_hash FROM metric_run WHERE id IN ({marks})",
            tuple(run_ids),
        )
        keys = {int(r[0]): (str(r[1]), str(r[2])) for r in rows}
    column = {
        (str(m), str(h)): str(c)
        for m, h, c in zip(runs["metric"], runs["config_hash"], runs["column"], strict=True)
    }
    return {run_id: column[key] for run_id, key in keys.items() if key in column}


def entries(study: Study, outcome: SweepOutcome) -> list[SweepEntry]:
    """The table entries of a finished sweep: each configuration with its run's status."""
    columns = _columns_of_runs(study, [s.run_id for s in outcome.summaries if s.run_id])
    return [
        SweepEntry(
            c.model,
            c.metric,
            c.layer,
            c.variant,
            columns.get(s.run_id, s.label) if s.run_id else s.label,
            s.status,
            s.error if s.status in ("unavailable", "failed") else None,
        )  # fmt: skip
        for c, s in zip(outcome.configs, outcome.summaries, strict=True)
    ]


def load_sweep_table(
    study_path: Path,
    outcome: SweepOutcome,
    *,
    dimension: str = "meaning",
    labels: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    rank_by: str = "pearson",
) -> SweepTable:
    """The table of a finished sweep against the study's human `dimension`."""
    if not Path(study_path).exists():
        raise StudyNotFoundError(f"{study_path}: no such study")
    study = open_study(study_path, allow_read_only=True)
    try:
        analysis = StudyAnalysis.from_study(study, dimension, labels)
        table_entries = entries(study, outcome)
    finally:
        study.close()
    if not analysis.data.ratings.arrays()[0].size:
        raise UserError(f"{study_path}: no {dimension!r} ratings of regular items to compare with")
    return sweep_table(analysis, table_entries, n_boot=n_boot, seed=seed, rank_by=rank_by)
