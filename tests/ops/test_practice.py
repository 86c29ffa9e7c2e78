"""A practice answer through the op, on a real study: stored apart from ratings, with the
feedback on it as the job's value; no screen is told (none shows practice answers)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from meaningbench.annotation.practice import add_practice, practice_results
from meaningbench.db.models import Annotator, PracticeAnswer, Rating
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.practice import add_practice_items, answer_practice, open_practice
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import changes_of
from tests.analysis.studybuild import add_ratings
from tests.ops.study_rows import every_row


def test_an_answer_is_stored_with_its_feedback(new_study: Study) -> None:
    add_practice(
        new_study,
        [("a b c", "a b", 40.0, 80.0, "b carries little."), ("d e f", "d", 0.0, 30.0, "")],
    )
    block = open_practice(new_study, "newcomer")(JobContext()).value
    first, second = block.pending()
    wrote = answer_practice(block, first, 55.0)(JobContext())
    assert (wrote.value.passed, wrote.value.value) == (True, 55.0)
    assert "within the expected 40–80" in wrote.value.text() and not changes_of(wrote)
    missed = answer_practice(block, second, 70.0)(JobContext()).value
    assert not missed.passed and "above" in missed.text()
    assert block.pending() == []
    with new_study.session() as s:
        assert s.execute(select(PracticeAnswer.value, PracticeAnswer.passed)).all() == [
            (55.0, True),
            (70.0, False),
        ]
        assert s.scalar(select(func.count()).select_from(Rating)) == 0
    [result] = practice_results(new_study)
    assert (result.rater, result.answered, result.passed) == ("newcomer", 2, 1)


def test_opening_a_practice_stores_the_rater_and_refuses_a_rating_source(new_study: Study) -> None:
    add_practice(new_study, [("a b c", "a b", 40.0, 80.0, "")])
    add_ratings(new_study, "judge-x", {}, kind="aggregate")
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="not a rater"):
        open_practice(new_study, "judge-x")(JobContext())
    assert every_row(new_study.path) == before
    block = open_practice(new_study, "newcomer")(JobContext()).value
    assert [p.source for p in block.pending()] == ["a b c"]
    with new_study.session() as s:
        assert s.scalar(select(Annotator.kind).where(Annotator.name == "newcomer")) == "named"


def test_practice_items_are_added_after_those_there_in_order(new_study: Study) -> None:
    first = add_practice_items(new_study, [("a b c", "a b", 40.0, 80.0, "b carries little.")])
    wrote = first(JobContext())
    assert wrote.value == 1 and not changes_of(wrote)  # no screen shows practice items
    more = add_practice_items(
        new_study, [("d e f", "d", 0.0, 30.0, ""), ("g h", "g h", 90.0, 100.0, "")]
    )(JobContext())
    assert more.value == 2 and not changes_of(more)
    block = open_practice(new_study, "newcomer")(JobContext()).value
    assert [(p.source, p.low, p.high) for p in block.pending()] == [
        ("a b c", 40.0, 80.0),
        ("d e f", 0.0, 30.0),
        ("g h", 90.0, 100.0),
    ]
    with new_study.session() as s:
        assert s.scalar(select(func.count()).select_from(Rating)) == 0
