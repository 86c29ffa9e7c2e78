"""A practice answer given in a kit adds an event to the kit's sealed log, in the answer's
own transaction, holding every answer to that practice item (by its text, as collect
matches it) in attempt order; in a study that keeps no log (the lead's) it adds none."""

from __future__ import annotations

import json
from pathlib import Path

from meaningbench.annotation.practice import PracticeSession, add_practice
from meaningbench.db.study import open_study
from meaningbench.kits.making import make_kits
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import lead_study
from tests.ops.study_rows import rows

LOG = "SELECT key, value FROM study_setting WHERE key LIKE 'kit_log%' ORDER BY key"


def test_each_answer_seals_its_items_answers_in_the_kit_and_nothing_in_the_lead(
    tmp_path: Path,
) -> None:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=2, n_sources=3)
    try:
        add_practice(lead, PRACTICE)
        make_kits(lead, ["ana"], tmp_path / "kits")
        PracticeSession(lead, "lead").answer(PracticeSession(lead, "lead").pending()[0], 50.0)
    finally:
        lead.close()
    assert rows(lead.path, LOG) == []
    kit = tmp_path / "kits" / "ana.mbkit"
    study = open_study(kit)
    try:
        session = PracticeSession(study, "ana")
        first = session.pending()[0]
        before = len(rows(kit, LOG))
        session.answer(first, 0.0)
        for practice in session.pending():
            session.answer(practice, 50.0)
        session.answer(first, 75.0)  # the second attempt's first answer
    finally:
        study.close()
    log = rows(kit, LOG)
    assert len(log) == before + len(PRACTICE) + 1
    last = json.loads(log[-1][1])
    assert last["kind"] == "practice" and len(last["seal"]) == 64
    assert last["rows"]["practice"] == [first.source, first.output]
    answers = last["rows"]["answers"]
    held = rows(
        kit,
        "SELECT p.id, p.value, p.passed, p.submitted_at FROM practice_answer p "
        "WHERE p.practice_item_id = ? ORDER BY p.id",
        first.id,
    )
    assert [(a[0], a[2], a[3], a[4]) for a in answers] == held
    assert [a[1] for a in answers] == ["ana", "ana"] and [a[2] for a in answers] == [0.0, 75.0]
    head = json.loads(log[0][1])  # `kit_log` sorts before `kit_log/...`
    assert head["events"] == len(log) - 1
