"""Practice answers in a kit are sealed in its log as ratings are: a kit whose answers were
edited, added or deleted with plain sqlite3 (a failed attempt's, to pass the pass mark) is
refused by name at collect, saying what differs, and nothing of it comes in; an untouched
kit comes in whole; a kit made before answers were sealed comes in with a warning."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.practice import add_practice, rater_standing
from meaningbench.annotation.protocols import PracticeOptions, set_protocol
from meaningbench.cli import main
from meaningbench.db.models import Annotator, PracticeAnswer, PracticeItem
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.making import make_kits
from meaningbench.ops.practice import answer_practice, open_practice
from meaningbench.runtime import JobContext
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import edit_kit_records, lead_study, rate_kit
from tests.ops.study_rows import every_row, rows

FAILED, PASSED = [0.0, 100.0, 0.0], [75.0, 10.0, 95.0]


def _practise(kit: Path, rater: str, *attempts: list[float]) -> None:
    """The rater's attempts at the kit's practice, through the op the practice screen runs."""
    study = open_study(kit)
    try:
        for values in attempts:
            block = open_practice(study, rater)(JobContext()).value
            for practice, value in zip(block.pending(), values, strict=True):
                answer_practice(block, practice, value)(JobContext())
    finally:
        study.close()


def _made(tmp_path: Path, raters: list[str]) -> Path:
    """The lead's study, with practice and a pass mark, and a kit for each rater."""
    lead = lead_study(tmp_path / "lead.mbstudy", seed=5, n_sources=4)
    try:
        add_practice(lead, PRACTICE)
        set_protocol(lead, practice=PracticeOptions(2, 10.0, 2, "stop", out_of=3))
        make_kits(lead, raters, tmp_path / "made")
    finally:
        lead.close()
    return tmp_path / "lead.mbstudy"


def _returned(tmp_path: Path, rater: str = "ana") -> tuple[Path, Path]:
    """ana failed her first attempt, passed her second and rated two items; sent back."""
    lead = _made(tmp_path, [rater])
    kit = tmp_path / "made" / f"{rater}.mbkit"
    _practise(kit, rater, FAILED, PASSED)
    rate_kit(kit, rater, 2)
    back = tmp_path / "back"
    back.mkdir()
    copy_study(kit, back / kit.name)
    return lead, back / kit.name


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(str(path))
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


FIRST = "(SELECT MIN(id) FROM practice_answer)"
TAMPERED = {
    "a value edited": (f"UPDATE practice_answer SET value = 75 WHERE id = {FIRST}", "value 0.0"),
    "a failed answer deleted": (f"DELETE FROM practice_answer WHERE id = {FIRST}", "deleted"),
    "the failed attempt deleted": (
        "DELETE FROM practice_answer WHERE id IN "
        "(SELECT id FROM practice_answer ORDER BY id LIMIT 3)",
        "deleted",
    ),
    "an answer added": (
        "INSERT INTO practice_answer (practice_item_id, annotator_id, value, passed, "
        "submitted_at) SELECT practice_item_id, annotator_id, 70, 1, submitted_at "
        "FROM practice_answer ORDER BY id LIMIT 1",
        "added",
    ),
    "a time edited": (
        "UPDATE practice_answer SET submitted_at = '2099-01-01 00:00:00.000000' "
        f"WHERE id = {FIRST}",
        "time '",
    ),
    "an answer moved to another item": (
        "UPDATE practice_answer SET practice_item_id = "
        "(SELECT MAX(practice_item_id) FROM practice_answer) WHERE id = " + FIRST,
        "practice answers to",
    ),
}


@pytest.mark.parametrize("how", sorted(TAMPERED))
def test_a_kit_whose_practice_was_edited_is_refused_and_nothing_comes_in(
    tmp_path: Path, how: str
) -> None:
    lead_path, kit = _returned(tmp_path)
    edit, says = TAMPERED[how]
    _sql(kit, edit)
    before, kit_bytes = every_row(lead_path), kit.read_bytes()
    lead = open_study(lead_path)
    try:
        report = collect_kits(lead, kit.parent)
    finally:
        lead.close()
    [(path, why)] = report.refused
    assert path == kit and not report.collected
    assert why.startswith(f"{kit}: the kit was changed outside MeaningBench (the practice")
    assert "not those its log holds" in why and says in why, why
    assert why.endswith("nothing was merged")
    assert every_row(lead_path) == before and kit.read_bytes() == kit_bytes


def test_what_differs_is_said_answer_by_answer(tmp_path: Path) -> None:
    lead_path, kit = _returned(tmp_path)
    first = rows(kit, f"SELECT id FROM practice_answer WHERE id = {FIRST}")[0][0]
    _sql(kit, f"UPDATE practice_answer SET value = 75 WHERE id = {first}")
    lead = open_study(lead_path)
    try:
        [(_path, why)] = collect_kits(lead, kit.parent).refused
    finally:
        lead.close()
    assert "the practice answers to 'The cat sat.'" in why, why
    assert f"answer {first}: value 0.0 in the log, 75.0 in the kit" in why


def test_an_untouched_kit_brings_its_practice_and_ratings_home(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead_path, kit = _returned(tmp_path)
    capsys.readouterr()
    assert main(["collect", str(lead_path), str(kit.parent), "--json"]) == 0
    [got] = json.loads(capsys.readouterr().out)["collected"]
    assert (got["new_ratings"], got["practice_added"], got["practice_checked"]) == (2, 6, True)
    lead = open_study(lead_path)
    try:
        ana = rater_standing(lead, "ana")
        assert ana is not None and ana.summary() == "passed on attempt 2 (0 of 3, then 3 of 3)"
    finally:
        lead.close()


def test_attempts_a_kit_carries_from_the_lead_are_sealed_when_it_is_made(tmp_path: Path) -> None:
    """ben's second kit carries his failed attempts: deleting one there is refused too."""
    lead_path = _made(tmp_path, ["ben"])
    _practise(tmp_path / "made" / "ben.mbkit", "ben", FAILED, FAILED)
    lead = open_study(lead_path)
    try:
        assert collect_kits(lead, tmp_path / "made").collected[0].practice_added == 6
        set_protocol(lead, practice=PracticeOptions(attempts=3))
        make_kits(lead, ["ben"], tmp_path / "again")
    finally:
        lead.close()
    kit = tmp_path / "again" / "ben.mbkit"
    assert rows(kit, "SELECT COUNT(*) FROM practice_answer") == [(6,)]
    untouched = tmp_path / "untouched"
    untouched.mkdir()
    shutil.copy(kit, untouched / kit.name)
    _sql(kit, f"DELETE FROM practice_answer WHERE id = {FIRST}")
    before = every_row(lead_path)
    lead = open_study(lead_path)
    try:
        [(_path, why)] = collect_kits(lead, kit.parent).refused
        assert "deleted" in why and every_row(lead_path) == before
        [back] = collect_kits(lead, untouched).collected
        assert back.practice_added == 0  # all six already here
    finally:
        lead.close()


def _answer_without_event(kit: Path, rater: str) -> None:
    study = open_study(kit)
    try:
        with study.session(write=True) as s:
            item = s.scalar(select(PracticeItem.id).order_by(PracticeItem.position))
            who = s.scalar(select(Annotator.id).where(Annotator.name == rater))
            assert item is not None and who is not None
            s.add(PracticeAnswer(practice_item_id=item, annotator_id=who, value=70.0, passed=True))
    finally:
        study.close()


def _as_made_before_practice_was_sealed(lead_path: Path) -> None:
    """The lead's records as a MeaningBench before this one left them: no `log_practice`."""
    edit_kit_records(lead_path, lambda record: record.pop("log_practice"))


def test_a_kit_made_before_practice_was_sealed_comes_in_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead_path = _made(tmp_path, ["ana"])
    _as_made_before_practice_was_sealed(lead_path)
    kit = tmp_path / "made" / "ana.mbkit"
    # Answered as that MeaningBench did: the answer alone, no event in the log.
    _answer_without_event(kit, "ana")
    capsys.readouterr()
    assert main(["collect", str(lead_path), str(kit.parent)]) == 0
    out, err = capsys.readouterr()
    assert "ana.mbkit (ana): no ratings in it yet, 1 practice answer" in out, out
    assert "ana.mbkit (ana): made before kits sealed their practice answers" in err, err
    assert "could not be checked for edits" in err


def test_a_kit_made_since_refuses_an_answer_given_without_its_event(tmp_path: Path) -> None:
    """An answer written as an older MeaningBench writes it (no event) into a kit whose
    lead's record says its log holds practice answers: refused, as a rating would be."""
    lead_path = _made(tmp_path, ["ana"])
    kit = tmp_path / "made" / "ana.mbkit"
    _answer_without_event(kit, "ana")
    lead = open_study(lead_path)
    try:
        [(_path, why)] = collect_kits(lead, kit.parent).refused
    finally:
        lead.close()
    assert "practice answers to" in why and "added" in why
