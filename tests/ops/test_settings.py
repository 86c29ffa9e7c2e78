"""The settings ops on a real study: each stores its setting and names the settings as
changed, a refused one writes nothing; and the settings dialog's save while another process
scores the study.

A real `meaningbench score` process commits a batch of scores every few milliseconds while
the test saves the study's name and guidelines through the op, as the dialog does: every
save must be stored, and read back as saved.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.settings import (
    SETTINGS,
    add_rater_thresholds,
    save_study_settings,
    set_language,
    set_protocol,
    set_setting,
    store_settings,
)
from meaningbench.queries.annotation import settings_view
from meaningbench.queries.study import NAME_KEY, study_name
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import add_ratings
from tests.jobs.conftest import make_rows
from tests.jobs.procs import Command, query, wait_until
from tests.jobs.studydata import add_items
from tests.ops.study_rows import every_row, rows

SAVES = 50
ITEMS = 200_000
STEADY = "tests.ops.steady_metric"


def _scores(path: Path) -> int:
    return query(path, "SELECT COUNT(*) FROM score")[0][0]


def _save(study: Study, n: int) -> None:
    mine = AnnotationSettings(guidelines=f"Guidelines, version {n}")
    sections = [(mine, {"guidelines": ("guidelines",)})]
    result = save_study_settings(study, NAME_KEY, f"Pilot {n}", sections)(JobContext())
    assert result.value == [None], n
    assert study_name(study) == f"Pilot {n}"
    assert settings_view(study).settings.guidelines == f"Guidelines, version {n}"


def test_settings_saves_succeed_while_a_score_run_commits(new_study: Study) -> None:
    add_items(new_study, make_rows(ITEMS))
    path = new_study.path
    args = ["score", str(path), "--metrics", "steady", "--workers", "1", "--json"]
    scorer = Command(args, modules=[STEADY])
    try:
        wait_until(lambda: _scores(path) > 0, "the scorer's first batch")
        before = _scores(path)
        # Saves go on until the scorer has committed between them, however fast or busy the
        # machine: at least SAVES of them, each stored and read back.
        deadline = time.monotonic() + 120
        n = 0
        while n < SAVES or _scores(path) == before:
            assert time.monotonic() < deadline, f"the scorer committed nothing in {n} saves"
            _save(new_study, n)
            n += 1
        # The scorer committed all along: it was still scoring when the last save was read back.
        assert scorer.proc.poll() is None, scorer.err_lines
        assert before < _scores(path) < ITEMS
    finally:
        scorer.kill()


def _setting(study: Study, key: str) -> object:
    found = rows(study.path, "SELECT value FROM study_setting WHERE key = ?", key)
    return json.loads(found[0][0]) if found else None


def test_each_settings_op_stores_its_setting_and_names_the_settings(new_study: Study) -> None:
    assert set_setting(new_study, NAME_KEY, "Pilot")(JobContext()) == SETTINGS
    assert _setting(new_study, NAME_KEY) == "Pilot"
    mine = AnnotationSettings(guidelines="Read twice.", pool_size=7)
    assert store_settings(new_study, mine, {"g": ("guidelines",)})(JobContext()) == SETTINGS
    stored = settings_view(new_study).settings
    assert stored.guidelines == "Read twice." and stored.pool_size != 7  # its section only
    assert add_rater_thresholds(new_study, {"min_agreement": 0.5})(JobContext()) == SETTINGS
    assert settings_view(new_study).settings.rater_thresholds["min_agreement"] == 0.5
    chosen = set_protocol(new_study, "esa", hidden_number=True)(JobContext())
    assert chosen.changes == SETTINGS and (chosen.value.protocol, chosen.value.hidden_number) == (
        "esa",
        True,
    )
    assert settings_view(new_study).settings.protocol == "esa"
    switched = set_language(new_study, "de")(JobContext())
    assert switched.value == ("en", "de") and switched.changes == SETTINGS
    assert _setting(new_study, "language") == "de"
    # The language it has already: nothing written, nothing to refresh.
    assert not set_language(new_study, "de")(JobContext()).changes


def test_a_refused_setting_writes_nothing(new_study: Study) -> None:
    (item, *_) = add_items(new_study, make_rows(4))
    add_ratings(new_study, "ann", {item: 50.0})  # a rater has rated under the protocol
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="can no longer change"):
        set_protocol(new_study, "likert")(JobContext())
    with pytest.raises(UserError):
        set_language(new_study, "not a language")(JobContext())
    assert every_row(new_study.path) == before


def test_balanced_is_refused_on_one_system_by_the_dialogs_save_as_by_the_command(
    new_study: Study,
) -> None:
    """One rule for both writers: the settings dialog's store refuses `balanced` where
    `protocol --selection balanced` does, and writes nothing; with two systems both take it."""
    add_items(new_study, make_rows(4))  # every output from sys0
    before = every_row(new_study.path)
    mine = AnnotationSettings(selection="balanced")
    fields = {"queues": ("selection", "selection_metrics")}
    with pytest.raises(UserError, match="1 system \\(sys0\\)"):
        store_settings(new_study, mine, fields)(JobContext())
    with pytest.raises(UserError, match="1 system \\(sys0\\)"):
        set_protocol(new_study, selection="balanced")(JobContext())
    assert every_row(new_study.path) == before
    # Unchanged, it is not asked again (a study's other settings still save).
    assert store_settings(new_study, AnnotationSettings(), fields)(JobContext()) == SETTINGS
    add_items(new_study, make_rows(4 * 40)[-4:])  # outputs of another system
    assert store_settings(new_study, mine, fields)(JobContext()) == SETTINGS
    assert settings_view(new_study).settings.selection == "balanced"
