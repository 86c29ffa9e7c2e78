"""The Disagreements view's reads on a real study: the list read in the background, the
reason in place of a list where raters cannot disagree yet, and the view's wording."""

from __future__ import annotations

from meaningbench.analysis.resolutions import resolve_item
from meaningbench.db.models import Rating, RatingSpan
from meaningbench.db.study import Study
from meaningbench.queries.disagreements import (
    decision_text,
    disagreements_job,
    ratings_text,
    spans_html,
)
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import SOURCES, add_items, add_ratings


def test_the_list_and_its_wording(new_study: Study) -> None:
    ids = add_items(new_study, [(SOURCES[0], "The cat <sat>.", "s"), (SOURCES[1], "Fell.", "s")])
    add_ratings(new_study, "ann", {ids[0]: 10.0, ids[1]: 50.0})
    add_ratings(new_study, "bob", {ids[0]: 90.0, ids[1]: 52.0})
    with new_study.session() as s:
        rating = s.query(Rating).filter(Rating.value == 10.0).one()
        s.add(RatingSpan(rating_id=rating.id, start=8, end=13, severity="minor", text="<sat>"))
        resolve_item(s, ids[0], "score", score=30.0)
    view = disagreements_job(new_study.path, threshold=5)(JobContext())
    assert view.why_not == "" and view.report is not None
    (d,) = view.report.items
    assert ratings_text(d) == "ann 10 · bob 90"
    assert decision_text(d) == "adjudicated 30"
    html = spans_html(d)
    assert "“&lt;sat&gt;” (minor)" in html and "no spans" in html  # bob marked none
    assert view.report.scale == (0.0, 100.0)


def test_a_study_where_raters_cannot_disagree_gives_the_reason(new_study: Study) -> None:
    (item,) = add_items(new_study, [(SOURCES[0], "The cat sat.", "s")])
    add_ratings(new_study, "ann", {item: 10.0})
    view = disagreements_job(new_study.path)(JobContext())
    assert view.report is None and "two human raters" in view.why_not
