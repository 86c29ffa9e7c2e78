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


def test_a_chosen_resolution_set_holds_as_ratings_land(new_study) -> None:
    from meaningbench.analysis.label_sets import choose_label_set
    from meaningbench.analysis.resolutions import resolve_item
    from tests.analysis.studybuild import SOURCES, add_items

    ids = add_items(new_study, [(SOURCES[0], "The cat sat.", "s"), (SOURCES[1], "Fell.", "s")])
    add_ratings(new_study, "ann", {ids[0]: 10.0, ids[1]: 10.0})
    add_ratings(new_study, "bob", {ids[0]: 90.0, ids[1]: 90.0})
    with new_study.session() as s:
        resolve_item(s, ids[0], "exclude")
        resolve_item(s, ids[1], "score", score=30.0)
        choose_label_set(s, "resolved")
    analysis = StudyAnalysis.from_study(new_study, "meaning")
    add_ratings(new_study, "cat", {ids[0]: 50.0, ids[1]: 50.0})  # a third rater, later
    apply_rating_changes(analysis, new_study, ids)
    raw, _ = analysis.human()
    live = dict(zip(analysis.data.item_ids.tolist(), raw.tolist(), strict=True))
    fresh_raw, _ = StudyAnalysis.from_study(new_study, "meaning").human()
    assert live[ids[1]] == 30.0 and live[ids[0]] != live[ids[0]]  # NaN: still excluded
    assert fresh_raw.tolist()[1] == 30.0


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
