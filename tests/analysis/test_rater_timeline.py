"""Rater checks over time on studies rated through the annotation engine: a rater careful for
the first half of their queue and careless for the second (fast, guessing, failing the
controls) shows it in their late stretches and not in their early ones; the whole-queue
figures are those of `meaningbench raters`; a stretch without controls, shared items or
times says why instead of giving NaN."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats
from sqlalchemy import text

from meaningbench.analysis.rater_checks import study_rater_checks
from meaningbench.analysis.rater_timeline import study_timeline
from meaningbench.cli import main
from meaningbench.db.study import create_study, open_study
from tests.analysis import studybuild
from tests.analysis.careless_study import careless_study


@pytest.fixture(scope="module")
def study_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return careless_study(tmp_path_factory.mktemp("timeline") / "t.mbstudy")


def _timeline(path: Path, stretch: int = 20):  # noqa: ANN202
    study = open_study(path)
    try:
        return study_timeline(study, stretch=stretch)
    finally:
        study.close()


def test_the_careless_second_half_shows_in_its_stretches_only(study_path: Path) -> None:
    timeline = _timeline(study_path)
    raters = {r.rater: r for r in timeline.raters}
    assert list(raters) == ["ann", "bo", "cy"]
    cy = raters["cy"]
    assert cy.n_ratings == 76 and [(s.first, s.last) for s in cy.stretches] == [
        (1, 20), (21, 40), (41, 60), (61, 76),
    ]  # fmt: skip
    early, late = cy.stretches[:2], cy.stretches[2:]
    assert not any(s.flagged for s in early)
    for s in early:
        assert 9 <= (s.seconds.value or 0) <= 15 and s.controls.value in (1.0, None)
        assert s.agreement.value is not None and s.agreement.value > 0.9
    for s in late:
        assert s.seconds.value == pytest.approx(1.0)
        assert s.agreement.value is not None and s.agreement.value < 0.5
        assert any("median 1.0 s per item (below 3 s)" in w for w in s.warnings)
    # The controls of the careless half: guessed between 20 and 80, none passes.
    late_controls = [s for s in late if s.controls.n]
    assert late_controls and all(s.controls_passed == 0 for s in late_controls)
    assert any("identical and unrelated controls passed 0%" in w for w in late[0].warnings)
    assert [s.number for s in cy.flagged] == [3, 4]
    assert not raters["ann"].flagged and not raters["bo"].flagged
    # Stretches follow the clock: each starts where the one before ended.
    assert all(a.ended < b.started for a, b in zip(cy.stretches, cy.stretches[1:], strict=False))
    assert (cy.practice_answered, cy.practice_passed) == (2, 1)
    assert (raters["ann"].practice_answered, raters["ann"].practice_passed) == (0, 0)


def test_the_whole_queue_gives_the_figures_of_the_rater_checks(study_path: Path) -> None:
    timeline = _timeline(study_path)
    study = open_study(study_path)
    try:
        checks = {c.rater: c for c in study_rater_checks(study)}
    finally:
        study.close()
    for rater in timeline.raters:
        check, whole = checks[rater.rater], rater.whole
        assert whole.agreement.value == pytest.approx(check.agreement_r)
        assert whole.agreement.n == check.agreement_n
        assert whole.seconds.value == pytest.approx(check.median_seconds)
        assert whole.same_share.value == pytest.approx(check.same_share)
        rates = [x for x in (check.identical_pass, check.unrelated_pass) if math.isfinite(x)]
        assert min(rates) <= (whole.controls.value or 0.0) <= max(rates)


def test_a_stretch_r_is_leave_one_out_pearson_as_scipy_computes_it(study_path: Path) -> None:
    timeline = _timeline(study_path, stretch=25)
    third = {r.rater: r for r in timeline.raters}["cy"].stretches[1]
    study = open_study(study_path)
    try:
        with study.session() as s:
            rows = s.execute(
                text(
                    "SELECT r.item_id, a.name, r.value, i.kind FROM rating r "
                    "JOIN annotator a ON a.id = r.annotator_id JOIN item i ON i.id = r.item_id "
                    "WHERE r.state = 'current' ORDER BY r.submitted_at, r.id"
                )
            ).all()
    finally:
        study.close()
    mine = [(i, v, k) for i, a, v, k in rows if a == "cy"][25:50]
    others = {(i, a): v for i, a, v, k in rows if a != "cy"}
    x, y = [], []
    for item_id, value, kind in mine:
        theirs = [v for (i, _a), v in others.items() if i == item_id]
        if kind == "regular" and theirs:
            x.append(value)
            y.append(sum(theirs) / len(theirs))
    assert third.agreement.n == len(x)
    assert third.agreement.value == pytest.approx(stats.pearsonr(x, y).statistic)


def test_thin_stretches_say_why_they_have_no_figure(tmp_path: Path) -> None:
    study = create_study(tmp_path / "thin.mbstudy")
    try:
        ids = studybuild.add_items(
            study, [(s, s.split(" ", 1)[1], "a") for s in studybuild.SOURCES]
        )
        # dee alone on the first four items, all rated 50, no time kept; eve on two of them.
        studybuild.add_ratings(study, "dee", dict.fromkeys(ids[:4], 50.0))
        studybuild.add_ratings(study, "eve", {ids[0]: 30.0, ids[1]: 70.0})
        timeline = study_timeline(study, stretch=2)
    finally:
        study.close()
    dee = {r.rater: r for r in timeline.raters}["dee"]
    first = dee.stretches[0]
    assert first.controls == type(first.controls)(
        None, 0, "no identical or unrelated control in it"
    )
    assert first.seconds.value is None and first.seconds.why_not == "no time on screen recorded"
    assert first.agreement.value is None and "r needs 3" in first.agreement.why_not
    assert first.same_share.value == 1.0 and first.warnings == ()  # 2 ratings: too few to judge
    text = json.dumps(timeline.to_json())
    assert "NaN" not in text and '"flagged": []' in text


def test_the_command_prints_each_raters_stretches(study_path: Path, capsys) -> None:  # noqa: ANN001
    assert main(["raters", str(study_path), "--over-time", "--stretch", "20"]) == 0
    out = capsys.readouterr().out
    assert "cy: 76 ratings in 4 stretches of 20, practice 1 of 2 passed" in out
    assert "! items 41–60" in out and "median 1.0 s per item" in out
    assert main(["raters", str(study_path), "--over-time", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cy = next(r for r in data["raters"] if r["rater"] == "cy")
    assert cy["flagged"] == [3, 4] and data["stretch"] == 20
    # Bad input: a clear message, exit status 2.
    assert main(["raters", str(study_path), "--over-time", "--stretch", "0"]) == 2
    assert "--stretch 0: a stretch holds at least 1 rating" in capsys.readouterr().err
    assert main(["raters", str(study_path), "--over-time", "--dimension", "nope"]) == 2
    assert "no dimension 'nope'" in capsys.readouterr().err
