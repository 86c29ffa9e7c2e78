"""`judge --as-rater` through its op, on a real study with a tiny judge built from a config:
the judge's scores become the current ratings of a machine rater, the humans' ratings stay as
they were, the result names a new run and every screen's reload; a human's name is refused
with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.judge import judge_as_rater_job
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges
from tests.analysis.studybuild import add_items, add_ratings
from tests.metrics.neural.judge_models import tiny_judge
from tests.ops.study_rows import every_row, rows

RATINGS = (
    "SELECT a.name, a.kind, r.item_id, r.value, r.state FROM rating r "
    "JOIN annotator a ON a.id = r.annotator_id ORDER BY a.name, r.item_id, r.id"
)
ROWS = [
    ("The cat sat on the mat.", "The cat sat.", "s1"),
    ("The bridge was closed because of strong winds.", "The bridge was closed.", "s1"),
    ("Many birds migrate south in winter.", "Birds fly.", "s2"),
]


@pytest.fixture
def rated(new_study: Study) -> list[int]:
    ids = add_items(new_study, ROWS)
    add_ratings(new_study, "ann", {i: 50.0 + k for k, i in enumerate(ids)})
    return ids


def _spec(folder: Path) -> str:
    model = tiny_judge(folder / "judge", writes="0123456789", context=4096)
    return f"llm_judge[model={model},max_tokens=2]"


def test_the_judges_scores_become_a_machine_raters_ratings(
    new_study: Study, rated: list[int], tmp_path: Path
) -> None:
    humans = [r for r in rows(new_study.path, RATINGS) if r[0] == "ann"]
    wrote = judge_as_rater_job(JobContext(), new_study.path, _spec(tmp_path), "judge", device="cpu")
    assert wrote.changes == StudyChanges(runs=True, everything=True)
    result = wrote.value
    assert (result.rater, result.status) == ("judge", "done")
    assert result.rated + result.unrated == len(rated)
    machine = [r for r in rows(new_study.path, RATINGS) if r[0] == "judge"]
    scores = dict(rows(new_study.path, "SELECT item_id, value FROM score WHERE value IS NOT NULL"))
    assert {(kind, state) for _, kind, _, _, state in machine} == {("machine", "current")}
    assert {item: value for _, _, item, value, _ in machine} == pytest.approx(scores)
    assert len(machine) == result.rated > 0
    assert [r for r in rows(new_study.path, RATINGS) if r[0] == "ann"] == humans


def test_a_human_raters_name_is_refused_and_nothing_is_written(
    new_study: Study, rated: list[int], tmp_path: Path
) -> None:
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="a name of their own"):
        judge_as_rater_job(JobContext(), new_study.path, _spec(tmp_path), "ann", device="cpu")
    with pytest.raises(UserError, match="needs a name"):
        judge_as_rater_job(JobContext(), new_study.path, _spec(tmp_path), "  ", device="cpu")
    assert every_row(new_study.path) == before
