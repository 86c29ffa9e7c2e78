"""The study-wide queries against a real study file whose contents the test wrote."""

from __future__ import annotations

import sqlite3

from meaningbench.db.study import DEFAULT_DIMENSIONS
from meaningbench.ops.settings import set_setting
from meaningbench.queries.study import (
    NAME_KEY,
    dimension_names,
    get_setting,
    reference_coverage,
    study_counts,
    study_name,
)
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges


def test_counts_match_what_was_written(study_with_facts) -> None:
    study, facts = study_with_facts
    counts = study_counts(study)
    assert counts.items == len(facts.item_ids)
    assert counts.control_items == len(facts.control_ids)
    # Superseded ratings are not ratings any more.
    assert counts.ratings == sum(len(r) for r in facts.ratings.values())
    assert counts.annotators == 2  # the aggregate source is not a person
    assert counts.metric_runs == 1 and counts.datasets == 2
    assert "control" not in counts.summary()  # hidden from raters in the status bar


def test_cancelled_runs_are_not_counted_as_metric_runs(study_with_facts) -> None:
    study, _facts = study_with_facts
    assert study_counts(study).metric_runs == 1
    conn = sqlite3.connect(study.path)
    try:
        with conn:
            conn.execute("UPDATE metric_run SET status = 'cancelled'")
    finally:
        conn.close()
    counts = study_counts(study)
    assert counts.metric_runs == 0
    assert "0 metric runs" in counts.summary()


def test_name_falls_back_to_the_file_name_and_settings_round_trip(study_with_facts) -> None:
    study, _facts = study_with_facts
    assert study_name(study) == "facts"
    assert set_setting(study, NAME_KEY, "  Pilot  ")(JobContext()) == StudyChanges(settings=True)
    assert study_name(study) == "Pilot"
    assert get_setting(study, "nothing here", default=3) == 3
    set_setting(study, "threshold", {"low": 10})(JobContext())
    set_setting(study, "threshold", {"low": 20})(JobContext())  # replaces, never duplicates
    conn = sqlite3.connect(study.path)
    try:
        rows = conn.execute("SELECT value FROM study_setting WHERE key = 'threshold'").fetchall()
    finally:
        conn.close()
    assert len(rows) == 1 and get_setting(study, "threshold") == {"low": 20}


def test_dimensions_in_the_study_order(study_with_facts) -> None:
    study, _facts = study_with_facts
    expected = [d["name"] for d in sorted(DEFAULT_DIMENSIONS, key=lambda d: d["position"])]
    assert dimension_names(study) == expected


def test_reference_coverage_counts_regular_items_with_references(study_with_facts) -> None:
    study, facts = study_with_facts
    # populated_study gives every fifth item a human reference.
    expected = sum(1 for n, _ in enumerate(facts.item_ids) if n % 5 == 0)
    assert reference_coverage(study) == (expected, len(facts.item_ids))
