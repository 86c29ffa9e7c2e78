"""The practice pass mark in a kit, offline: the kit carries the practice and the pass mark
(and still nothing that tells a control), the rater practises and rates in it, a rater the
pass mark stops sends back their practice alone, and `collect` brings every attempt home."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from meaningbench.annotation.practice import (
    PracticeNotPassed,
    PracticeSession,
    add_practice,
    rater_standing,
)
from meaningbench.annotation.protocols import PracticeOptions, set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.campaign import campaign
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.making import make_kits
from meaningbench.ops.kits import send_back_job
from meaningbench.runtime import JobContext
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import lead_study, rate_kit


def _attempt(kit: Path, rater: str, values: list[float]) -> None:
    study = open_study(kit)
    try:
        session = PracticeSession(study, rater)
        for practice, value in zip(session.pending(), values, strict=True):
            session.answer(practice, value)
    finally:
        study.close()


def _kit_settings(kit: Path) -> dict[str, object]:
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM study_setting WHERE key = 'annotation'").fetchone()
        items = conn.execute("SELECT COUNT(*) FROM practice_item").fetchone()[0]
    finally:
        conn.close()
    return {**json.loads(row[0]), "practice_items_held": items}


def test_attempts_travel_in_a_kit_and_come_back(tmp_path: Path) -> None:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=6)
    try:
        add_practice(lead, PRACTICE)
        set_protocol(lead, practice=PracticeOptions(2, 10.0, 2, "stop", out_of=3))
        make_kits(lead, ["ana", "ben"], tmp_path / "kits")
    finally:
        lead.close()
    kits, back = tmp_path / "kits", tmp_path / "back"
    back.mkdir()
    settings = _kit_settings(kits / "ana.mbkit")
    assert settings["practice_pass_items"] == 2 and settings["practice_within"] == 10.0
    assert settings["practice_after_failed"] == "stop" and settings["practice_items_held"] == 3

    # ana fails once, passes, rates; ben fails twice and is stopped.
    _attempt(kits / "ana.mbkit", "ana", [0, 100, 0])
    with pytest.raises(PracticeNotPassed):
        rate_kit(kits / "ana.mbkit", "ana")
    _attempt(kits / "ana.mbkit", "ana", [75, 10, 95])
    given = rate_kit(kits / "ana.mbkit", "ana")
    _attempt(kits / "ben.mbkit", "ben", [0, 100, 0])
    _attempt(kits / "ben.mbkit", "ben", [0, 100, 0])
    kit = open_study(kits / "ben.mbkit")
    try:
        with pytest.raises(PracticeNotPassed, match="did not reach the practice pass mark"):
            AnnotationSession(kit, "ben")
        # Nothing rated, yet the practice goes back.
        sent = send_back_job(kit, back)(JobContext())
        assert sent.ratings == 0 and sent.path == back / "ben.mbkit"
    finally:
        kit.close()
    copy_study(kits / "ana.mbkit", back / "ana.mbkit")

    lead = open_study(tmp_path / "lead.mbstudy")
    try:
        report = collect_kits(lead, back)
        assert not report.refused
        added = {k.rater: (k.new_ratings, k.practice_added) for k in report.collected}
        assert added == {"ana": (len(given), 6), "ben": (0, 6)}
        ana, ben = rater_standing(lead, "ana"), rater_standing(lead, "ben")
        assert ana is not None and ana.summary() == "passed on attempt 2 (0 of 3, then 3 of 3)"
        assert ben is not None and ben.stopped
        again = collect_kits(lead, back)
        assert [k.practice_added for k in again.collected] == [0, 0]
        figures = {r.rater: r for r in campaign(lead).raters}
        assert (figures["ana"].practice_verdict, figures["ana"].practice_attempts) == (
            "passed",
            (0, 3),
        )
        assert figures["ben"].practice_verdict == "stopped"
        # ben's next kit carries his attempts: still stopped until the lead gives another.
        make_kits(lead, ["ben"], tmp_path / "again")
        set_protocol(lead, practice=PracticeOptions(attempts=3))
        make_kits(lead, ["ben"], tmp_path / "third")
        # ana rated and sent her kit back: her next kit holds no practice and no pass mark.
        make_kits(lead, ["ana"], tmp_path / "next", top_up=False, replace=True)
    finally:
        lead.close()
    for folder, pending in (("again", 0), ("third", 3)):
        kit = open_study(tmp_path / folder / "ben.mbkit")
        try:
            assert len(PracticeSession(kit, "ben").pending()) == pending
        finally:
            kit.close()
    settings = _kit_settings(tmp_path / "next" / "ana.mbkit")
    assert settings["practice_pass_items"] is None and settings["practice_items_held"] == 0


def test_a_kit_answer_to_practice_the_study_lacks_is_refused(tmp_path: Path) -> None:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=4)
    try:
        add_practice(lead, PRACTICE)
        make_kits(lead, ["ana"], tmp_path / "kits")
    finally:
        lead.close()
    kit = tmp_path / "kits" / "ana.mbkit"
    _attempt(kit, "ana", [70, 10, 95])
    conn = sqlite3.connect(kit)
    with conn:
        conn.execute("UPDATE practice_item SET output = 'Edited.' WHERE position = 1")
    conn.close()
    lead = open_study(tmp_path / "lead.mbstudy")
    try:
        report = collect_kits(lead, tmp_path / "kits")
        [(path, why)] = report.refused
        # The kit's practice item is no longer one it was made with (`practice_made`).
        assert path == kit and "practice item 'Edited.': not one the kit was made with" in why
        assert "nothing was merged" in why and rater_standing(lead, "ana") is not None
        standing = rater_standing(lead, "ana")
        assert standing is not None and standing.attempts == ()
    finally:
        lead.close()
