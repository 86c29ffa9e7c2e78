"""The dashboard's queries on a real study file."""

from __future__ import annotations

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.queries.dashboard import (
    apply_rating_changes,
    current_ratings,
    load_analysis,
    pick_dimension,
    report_summary,
)
from tests.analysis.studybuild import add_ratings


def test_current_ratings_leave_superseded_rows_out(study_with_facts) -> None:
    study, facts = study_with_facts
    rows = current_ratings(study, facts.item_ids, "meaning")
    got = sorted(zip(rows["item_id"], rows["annotator"], rows["value"], strict=True))
    written = sorted((i, a, v) for i, rs in facts.ratings.items() for a, v in rs)
    assert got == written
    assert current_ratings(study, [], "meaning").empty


def test_a_rating_written_elsewhere_reaches_the_analysis(study_with_facts) -> None:
    study, facts = study_with_facts
    analysis = StudyAnalysis.from_study(study, "meaning")
    unrated = next(i for i in facts.item_ids if i not in facts.rated)
    add_ratings(study, "ann1", {unrated: 42.0})  # a rating submitted after the analysis loaded
    assert apply_rating_changes(analysis, study, [unrated]) == 1
    raw, _ = analysis.human()
    at = list(analysis.data.item_ids).index(unrated)
    assert raw[at] == 42.0
    assert apply_rating_changes(analysis, study, [unrated]) == 0  # already in step


def test_load_analysis_picks_the_dimension(study_with_facts) -> None:
    study, facts = study_with_facts
    loaded = load_analysis(study.path, None)
    assert loaded.analysis.dimension == "meaning" and "fluency" in loaded.dimensions
    assert load_analysis(study.path, "fluency").analysis.dimension == "fluency"
    assert load_analysis(study.path, "no such").analysis.dimension == "meaning"
    assert pick_dimension(None, ["fluency", "simplicity"]) == "fluency"
    summary = report_summary(study)
    assert summary["regular items"] == len(facts.item_ids)
    assert summary["control items"] == len(facts.control_ids)
    assert summary["current ratings"] == sum(len(r) for r in facts.ratings.values())
