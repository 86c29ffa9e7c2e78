"""The practice pass mark: K of the practice items within N points of their expected range
in one attempt, in at most A attempts; then stop (no rating) or flag (rating, flagged). A
pass mark no rater could reach is refused when the protocol is set, and nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.annotation.practice import (
    PracticeNotPassed,
    PracticeSession,
    add_practice,
    practice_results,
    rater_standing,
    within_gold,
)
from meaningbench.annotation.protocols import PracticeOptions, set_protocol, study_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.cli import main
from meaningbench.db.study import Study, create_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items

# Three practice items: expected 60–90, 0–20 and 90–100.
PRACTICE = [
    ("The cat sat on the mat.", "The cat sat.", 60.0, 90.0, "Only the place is lost."),
    ("The storm closed the bridge.", "The bridge opened.", 0.0, 20.0, "Reversed."),
    ("Rain fell all day.", "Rain fell all day.", 90.0, 100.0, "The same sentence."),
]


def _study(tmp_path: Path, after: str = "stop", points: float = 10.0) -> Study:
    study = create_study(tmp_path / "s.mbstudy")
    add_items(study, 4, 2)
    add_practice(study, PRACTICE)
    set_protocol(study, practice=PracticeOptions(2, points, 2, after, out_of=3))
    return study


def _attempt(study: Study, rater: str, values: list[float]) -> None:
    session = PracticeSession(study, rater)
    pending = session.pending()
    assert len(pending) == len(values) == 3
    for practice, value in zip(pending, values, strict=True):
        session.answer(practice, value)


def test_within_n_points_of_gold_is_the_range_widened_by_n() -> None:
    assert within_gold(50, 60, 90, 10) and within_gold(100, 60, 90, 10)
    assert not within_gold(49.5, 60, 90, 10) and not within_gold(100.5, 60, 90, 10)
    assert within_gold(60, 60, 90, 0) and not within_gold(59, 60, 90, 0)


def test_a_failed_attempt_then_a_passed_one_lets_the_rater_rate(tmp_path: Path) -> None:
    study = _study(tmp_path)
    try:
        with pytest.raises(PracticeNotPassed, match="Finish the practice first"):
            AnnotationSession(study, "ana")  # not practised yet
        # 52 is 8 points below 60–90 (counts), 35 is 15 above 0–20, 50 is far from 90–100.
        feedback = PracticeSession(study, "ana")
        first = feedback.answer(feedback.pending()[0], 52)
        assert not first.passed and first.counts and "counts toward the pass mark" in first.text()
        for practice, value in zip(feedback.pending(), (35, 50), strict=True):
            feedback.answer(practice, value)
        standing = rater_standing(study, "ana")
        assert standing is not None
        assert [(a.number, a.within, a.passed) for a in standing.attempts] == [(1, 1, False)]
        assert standing.attempts_left == 1 and not standing.may_rate
        with pytest.raises(PracticeNotPassed):
            AnnotationSession(study, "ana")
        # The next attempt asks every practice item again.
        _attempt(study, "ana", [70, 25, 95])
        standing = rater_standing(study, "ana")
        assert standing is not None and standing.passed and standing.may_rate
        assert standing.summary() == "passed on attempt 2 (1 of 3, then 3 of 3)"
        assert PracticeSession(study, "ana").pending() == []
        assert AnnotationSession(study, "ana").next_item() is not None
        [result] = practice_results(study)
        assert result.attempts == ((3, 1), (3, 3)) and result.may_rate and not result.flagged
    finally:
        study.close()


def test_out_of_attempts_stops_the_rater_or_flags_them(tmp_path: Path) -> None:
    for after in ("stop", "flag"):
        study = _study(tmp_path / after, after=after)
        try:
            _attempt(study, "ben", [0, 100, 0])
            _attempt(study, "ben", [10, 90, 10])
            standing = rater_standing(study, "ben")
            assert standing is not None and standing.failed and standing.attempts_left == 0
            assert PracticeSession(study, "ben").pending() == []  # no third attempt
            if after == "stop":
                assert standing.stopped and standing.verdict() == "stopped"
                with pytest.raises(PracticeNotPassed, match="Contact your study lead"):
                    AnnotationSession(study, "ben")
                # The lead gives one more attempt: the rater practises again.
                set_protocol(study, practice=PracticeOptions(attempts=3))
                assert len(PracticeSession(study, "ben").pending()) == 3
            else:
                assert standing.flagged and standing.verdict() == "flagged"
                assert "failed, flagged after 2 attempts" in standing.summary()
                assert AnnotationSession(study, "ben").next_item() is not None
        finally:
            study.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (PracticeOptions(4, 10.0), "4 practice items must be passed, but the study has 3"),
        (PracticeOptions(2, 120.0), "within 120 points is outside 0–100"),
        (PracticeOptions(2, -1.0), "within -1 points is outside 0–100"),
        (PracticeOptions(0, 10.0), "0 items cannot be a pass mark"),
        (PracticeOptions(2, 10.0, attempts=0), "Practice attempts: 0"),
        (PracticeOptions(2, 10.0, out_of=5), "'2 of 5': the study has 3 practice items"),
        (PracticeOptions(4, 10.0, out_of=4), "so no rater could pass 4"),
    ],
)
def test_an_unreachable_pass_mark_is_refused_and_nothing_changes(
    tmp_path: Path, options: PracticeOptions, message: str
) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    try:
        add_practice(study, PRACTICE)
        before = study_protocol(study)
        with pytest.raises(UserError, match=message):
            set_protocol(study, practice=options)
        assert study_protocol(study) == before and before.pass_mark is None
    finally:
        study.close()


def test_no_practice_items_means_no_pass_mark(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    try:
        with pytest.raises(UserError, match="has 0 practice items, so no rater could pass"):
            set_protocol(study, practice=PracticeOptions(1, 0.0))
    finally:
        study.close()


def test_the_command_sets_shows_and_refuses_the_pass_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    add_practice(study, PRACTICE)
    study.close()
    path = str(tmp_path / "s.mbstudy")
    assert main(["protocol", path, "--practice-pass-mark", "5 of 3 within 10"]) == 2
    assert "has 3 practice items, so no rater could pass" in capsys.readouterr().err
    assert main(["protocol", path, "--practice-pass-mark", "two of three"]) == 2
    assert "write it as 'K of M within N'" in capsys.readouterr().err
    assert main(["protocol", path]) == 0
    assert "practice: 3 practice items, no pass mark" in capsys.readouterr().out
    argv = ["protocol", path, "--practice-pass-mark", "2 of 3 within 10"]
    assert main([*argv, "--practice-attempts", "3", "--after-failed-practice", "flag"]) == 0
    out = capsys.readouterr().out
    assert "pass mark: 2 of the 3 practice items within 10 points of the expected range" in out
    assert "in at most 3 attempts" in out and "with a flag the lead sees" in out
    assert main(["practice", path]) == 0
    assert "practice results: 0 raters" in capsys.readouterr().out
    assert main(["protocol", path, "--no-practice-pass-mark"]) == 0
    assert "no pass mark" in capsys.readouterr().out
