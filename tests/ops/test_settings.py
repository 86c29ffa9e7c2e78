"""The settings dialog's save while another process scores the study.

A real `meaningbench score` process commits a batch of scores every few milliseconds while
the test saves the study's name and guidelines through the op, as the dialog does: every
save must be stored, and read back as saved.
"""

from __future__ import annotations

import time
from pathlib import Path

from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.db.study import Study
from meaningbench.ops.settings import save_study_settings
from meaningbench.queries.annotation import settings_view
from meaningbench.queries.study import NAME_KEY, study_name
from meaningbench.runtime import JobContext
from tests.jobs.conftest import make_rows
from tests.jobs.procs import Command, query, wait_until
from tests.jobs.studydata import add_items

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
