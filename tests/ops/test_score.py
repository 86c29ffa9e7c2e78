"""The battery through its op, on a real study with cheap metrics: one run per metric with a
score per item, every committed batch told while it runs and all of them in the result's
`StudyChanges.scores`, and a cancelled battery that stores no score."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.db.study import Study
from meaningbench.ops.score import close_gone_runs, list_metrics_job, score_job
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges
from tests.jobs.conftest import make_rows
from tests.jobs.studydata import add_items
from tests.ops.study_rows import every_row, rows

SCORES = (
    "SELECT r.label, COUNT(s.id), COUNT(s.value) FROM metric_run r "
    "LEFT JOIN score s ON s.run_id = r.id GROUP BY r.label ORDER BY r.label"
)


def test_the_battery_stores_a_run_per_metric_and_names_every_scored_item(
    new_study: Study,
) -> None:
    ids = add_items(new_study, make_rows(12))
    told: list[StudyChanges] = []
    ctx = JobContext(on_changes=told.append)
    wrote = score_job(ctx, new_study.path, ["chrf", "compression"], {"workers": 1})
    labels = sorted(s.label for s in wrote.value)
    assert [s.status for s in wrote.value] == ["done", "done"]
    assert rows(new_study.path, SCORES) == [(label, 12, 12) for label in labels]
    assert wrote.changes.runs
    assert wrote.changes.scores_by_label == {label: frozenset(ids) for label in labels}
    # What was told batch by batch is what the result names.
    assert told and (told[0].scores and not told[0].runs)
    merged = StudyChanges()
    for batch in told:
        merged = merged | batch
    assert merged.scores_by_label == wrote.changes.scores_by_label

    # Run again, the scores are found stored: nothing is scored, the runs are named.
    again = score_job(JobContext(), new_study.path, ["chrf"], {"workers": 1})
    assert [s.status for s in again.value] == ["cached"]
    assert not again.changes.scores and again.changes.runs


def test_a_battery_cancelled_before_it_began_writes_and_names_nothing(new_study: Study) -> None:
    add_items(new_study, make_rows(12))
    before = every_row(new_study.path)
    ctx = JobContext()
    ctx.cancel.cancel()
    wrote = score_job(ctx, new_study.path, ["chrf"], {"workers": 1})
    assert [(s.status, s.run_id) for s in wrote.value] == [("cancelled", None)]
    assert not wrote.changes  # no run was made: no screen has anything to refresh
    assert every_row(new_study.path) == before


def test_the_listing_offers_the_cheap_metrics(new_study: Study, tmp_path: Path) -> None:
    listed = {m.name for m in list_metrics_job(JobContext(), new_study.path)}
    assert {"bleu", "chrf", "compression"} <= listed
    assert {m.name for m in list_metrics_job(JobContext(), None)} >= {"bleu", "chrf"}
    with pytest.raises(Exception):  # noqa: B017 - the study must exist
        list_metrics_job(JobContext(), tmp_path / "missing.mbstudy")


def _running_run(study: Study, items: list[int], scored: int) -> None:
    """A run left `running` by a version that recorded no owner: nobody will finish it."""
    with study.session(write=True) as s:
        conn = s.connection()
        conn.exec_driver_sql(
            "INSERT INTO metric_run (id, metric, config, config_hash, label, versions, status, "
            "started_at, n_items, n_failed, elapsed_s) VALUES (7, 'chrf', '{}', 'h', 'chrf', "
            "'{}', 'running', '2026-01-01', 0, 0, 0.0)"
        )
        conn.exec_driver_sql(
            "INSERT INTO score (run_id, item_id, value, raw) VALUES (7, ?, 0.5, 0.5)",
            [(i,) for i in items[:scored]],
        )


def test_a_run_whose_process_is_gone_is_closed_as_interrupted(new_study: Study) -> None:
    ids = add_items(new_study, make_rows(6))
    before = every_row(new_study.path)
    none = close_gone_runs(new_study)(JobContext())
    assert none.value == [] and not none.changes  # nothing to close: nothing written
    assert every_row(new_study.path) == before
    _running_run(new_study, ids, scored=4)
    closed = close_gone_runs(new_study)(JobContext())
    assert closed.value == [7] and closed.changes == StudyChanges(runs=True)
    [(status, n_items, error)] = rows(
        new_study.path, "SELECT status, n_items, error FROM metric_run"
    )
    assert (status, n_items) == ("interrupted", 4) and "scoring again resumes it" in error
    assert close_gone_runs(new_study)(JobContext()).value == []
