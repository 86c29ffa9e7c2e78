"""A kit's practice items and pass mark are those it was made with: a rater who widens a
range, lowers the pass mark or allows more attempts with plain sqlite3 passes offline and
rates, but collect refuses the kit by name, saying what differs, and the lead's study is
left as it was. An untouched kit comes in, also after the lead edited the practice since;
a kit made before the lead's record kept its practice comes in as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meaningbench.annotation.practice import PracticeSession
from meaningbench.annotation.protocols import PracticeOptions, set_protocol
from meaningbench.cli import main
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.collecting import collect_kits
from tests.kits.campaign_helpers import edit_kit_records, rate_kit
from tests.kits.test_kit_practice_sealed import FAILED, PASSED, _made, _practise, _sql
from tests.ops.study_rows import every_row

CAT = "output = 'The cat sat.'"
ONE_OF_THREE = [75.0, 100.0, 0.0]  # only 'The cat sat.' within 10 points of its range


def _setting(path: str, value: object) -> str:
    return (
        f"UPDATE study_setting SET value = json_set(value, '$.{path}', json('{json.dumps(value)}'))"
        " WHERE key = 'annotation'"
    )


# How the kit is edited before practising, the attempts that then pass offline, and what
# the refusal says.
TAMPERED = {
    "a range widened": (
        f"UPDATE practice_item SET low = 0, high = 100 WHERE {CAT}",
        [[0.0, 15.0, 0.0]],  # 2 of 3 in range only with the cat's range widened
        "practice item 'The cat sat.': expected range 60–90 when the kit was made, "
        "0–100 in the kit",
    ),
    "every range widened": (
        "UPDATE practice_item SET low = 0, high = 100",
        [FAILED],
        "expected range 0–20 when the kit was made, 0–100 in the kit",
    ),
    "the pass mark lowered": (
        _setting("practice_pass_items", 1),
        [ONE_OF_THREE],
        "practice pass mark, items to pass: 2 when the kit was made, 1 in the kit",
    ),
    "the points widened": (
        _setting("practice_within", 100.0),
        [FAILED],
        "practice pass mark, points from the range: 10 when the kit was made, 100 in the kit",
    ),
    "the attempts raised": (
        _setting("practice_attempts", 9),
        [FAILED, FAILED, PASSED],
        "practice pass mark, attempts: 2 when the kit was made, 9 in the kit",
    ),
    "stop turned into flag": (
        _setting("practice_after_failed", "flag"),
        [FAILED, FAILED],
        "after the last failed attempt: stop when the kit was made, flag in the kit",
    ),
    "the pass mark removed": (
        _setting("practice_pass_items", None),
        [FAILED],
        "items to pass: 2 when the kit was made, none in the kit",
    ),
    "an easy item added": (
        "INSERT INTO practice_item (source, output, low, high, explanation, position) "
        "VALUES ('A.', 'A.', 0, 100, '', 9)",
        [],
        "practice item 'A.': not one the kit was made with",
    ),
    "a hard item deleted": (
        f"DELETE FROM practice_item WHERE {CAT}",
        [],
        "practice item 'The cat sat.': no longer in the kit",
    ),
}


def _returned(tmp_path: Path, edit: str | None, attempts: list[list[float]]) -> tuple[Path, Path]:
    """ana's kit, edited with plain sqlite3 (`edit`) before she practised, then rated and
    sent back; the lead's study and the kit sent back."""
    lead = _made(tmp_path, ["ana"])
    kit = tmp_path / "made" / "ana.mbkit"
    if edit is not None:
        _sql(kit, edit)
    if attempts:
        _practise(kit, "ana", *attempts)
    else:  # every practice item the kit holds now, answered inside its range
        study = open_study(kit)
        try:
            session = PracticeSession(study, "ana")
            for practice in session.pending():
                session.answer(practice, practice.low)
        finally:
            study.close()
    assert len(rate_kit(kit, "ana", 2)) == 2  # the practice passed offline: she rates
    back = tmp_path / "back"
    back.mkdir()
    copy_study(kit, back / kit.name)
    return lead, back / kit.name


@pytest.mark.parametrize("how", sorted(TAMPERED))
def test_a_kit_whose_practice_was_edited_is_refused_and_nothing_comes_in(
    tmp_path: Path, how: str
) -> None:
    edit, attempts, says = TAMPERED[how]
    lead_path, kit = _returned(tmp_path, edit, attempts)
    before, kit_bytes = every_row(lead_path), kit.read_bytes()
    lead = open_study(lead_path)
    try:
        report = collect_kits(lead, kit.parent)
    finally:
        lead.close()
    [(path, why)] = report.refused
    assert path == kit and not report.collected
    assert why.startswith(f"{kit}: the kit was changed since it was made ("), why
    assert says in why, why
    assert why.endswith("; nothing was merged")
    assert every_row(lead_path) == before and kit.read_bytes() == kit_bytes


def test_an_untouched_kit_comes_in_though_the_lead_changed_the_practice_since(
    tmp_path: Path,
) -> None:
    lead_path, kit = _returned(tmp_path, None, [FAILED, PASSED])
    _sql(lead_path, f"UPDATE practice_item SET low = 50, high = 95 WHERE {CAT}")
    lead = open_study(lead_path)
    try:
        set_protocol(lead, practice=PracticeOptions(3, 0.0, 4, "flag", out_of=3))
        [back] = collect_kits(lead, kit.parent).collected
    finally:
        lead.close()
    assert (back.new_ratings, back.practice_added) == (2, 6)


def _as_made_before_practice_was_kept(lead_path: Path) -> None:
    """The lead's records as a MeaningBench before this one left them: no `practice`."""

    def forget(record: dict[str, Any]) -> None:
        assert record.pop("practice")["pass_mark"]["practice_attempts"] == 2

    edit_kit_records(lead_path, forget)


def test_a_kit_made_before_its_practice_was_kept_comes_in_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, attempts, _says = TAMPERED["every range widened"]
    lead_path, kit = _returned(tmp_path, edit, attempts)
    _as_made_before_practice_was_kept(lead_path)
    capsys.readouterr()
    assert main(["collect", str(lead_path), str(kit.parent), "--json"]) == 0
    out, err = capsys.readouterr()
    [got] = json.loads(out)["collected"]
    assert (got["new_ratings"], got["practice_added"], got["practice_checked"]) == (2, 3, True)
    assert err == ""  # no warning: it comes in as it did before kits kept their practice
