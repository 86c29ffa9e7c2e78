"""The study file under the window's own jobs: the write-ahead log the app holds stays the
one on disk through rounds of metrics, sanity checks, the label audit and sweeps, and a log
deleted under it is noticed and the study opened again, never shown as "malformed".

Why these can break it: POSIX locks belong to the process, so one plain open() and close()
of the study anywhere in the app drops all of the app's SQLite locks; the next child job
that closes its last connection then takes itself for the study's last user, checkpoints
and deletes the `-wal` and `-shm` under the app (see meaningbench.db.study_files).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.cli import main
from tests.metrics.neural.conftest import minilm_path, tiny_encoder  # noqa: F401 - fixtures
from tests.ui.conftest import open_in
from tests.ui.dashboard.conftest import wait_ready
from tests.ui.dialogs.test_battery import wait_metrics

ROUNDS = 3


def held_wal(path: Path) -> list[str]:
    """What this process's descriptors on the study's `-wal` point at: the link targets,
    with "(stale)" added where the file on disk is another one."""
    wal = os.path.realpath(f"{path}-wal")
    try:
        on_disk: int | None = os.stat(wal).st_ino
    except FileNotFoundError:
        on_disk = None
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            if not target.startswith(wal):
                continue
            same = os.fstat(int(fd)).st_ino == on_disk
        except OSError:
            continue
        found.append(target if same else f"{target} (stale)")
    return found


def assert_study_sound(path: Path) -> None:
    held = held_wal(path)
    assert held, "the app holds the study's write-ahead log open"
    assert all(t == os.path.realpath(f"{path}-wal") for t in held), held
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def another_process_reads(path: Path) -> None:
    """A connection of another process that opens, reads and closes (what every child job
    does at its end): were the app's locks gone, it would delete the log under the app."""
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('SELECT COUNT(*) FROM item').fetchone(); c.close()"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)


def error_texts() -> list[str]:
    from PySide6.QtWidgets import QApplication

    return [w.text() for w in QApplication.topLevelWidgets() if w.objectName() == "mbErrorDialog"]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    from tests.conftest import FIXTURE_DATASETS

    path = tmp_path / "dev.mbstudy"
    assert main(["import", str(path), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    return path


@pytest.mark.slow  # rounds of real jobs, sweeps included: about two minutes
def test_the_apps_log_stays_the_one_on_disk_through_its_jobs(
    window,
    qtbot,
    study: Path,
    tiny_encoder: str,  # noqa: F811
) -> None:
    window.runner.show_error_dialogs = True
    open_in(window, study, qtbot)
    assert_study_sound(study)
    for round_ in range(ROUNDS):
        dialog = window.show_battery_dialog()
        wait_metrics(qtbot, dialog)
        dialog.set_checked(["bleu", "chrf"] if round_ % 2 == 0 else ["sari"])
        job = dialog.start()
        assert job is not None
        qtbot.waitUntil(lambda job=job: not job.running, timeout=180_000)
        assert job.outcome == "done", job.failure
        dialog.close()
        assert_study_sound(study)

        window.show_page("dashboard")
        dashboard = window.page("dashboard")
        wait_ready(qtbot, dashboard, timeout=120_000)
        dashboard.tabs.setCurrentWidget(dashboard.sanity)
        dashboard.tabs.setCurrentWidget(dashboard.data_quality)  # the label audit's job
        qtbot.waitUntil(lambda d=dashboard: d.data_quality.view is not None, timeout=120_000)
        wait_ready(qtbot, dashboard, timeout=120_000)
        assert_study_sound(study)

        window.show_page("sweep")
        sweep = window.page("sweep")
        sweep.models.setText(tiny_encoder)
        sweep.layers.setText("1-3" if round_ % 2 == 0 else "2")
        sweep.idf["none"].setChecked(True)
        sweep.boot.setValue(50)
        started = sweep.start()
        assert started is not None, sweep.status.text()
        qtbot.waitUntil(lambda s=sweep: s.job is None, timeout=300_000)
        assert sweep.table_data is not None, sweep.status.text()
        assert_study_sound(study)

        plain_open_then_another_process_closes(study)
        window.page("browser").reload_all()
        qtbot.wait(50)
        assert error_texts() == []


def plain_open_then_another_process_closes(study: Path) -> None:
    """The path that drops the app's locks, made certain: a plain open and close of the
    study in the app process, then another process closing its last connection."""
    try:
        study.open("rb").close()
        refused = ""
    except PermissionError as exc:
        refused = str(exc)
    another_process_reads(study)
    assert_study_sound(study)
    assert "only be read through SQLite" in refused


def test_a_plain_open_in_the_app_is_refused_and_its_log_survives(
    window, qtbot, study: Path
) -> None:
    open_in(window, study, qtbot)
    assert_study_sound(study)
    plain_open_then_another_process_closes(study)
    window.page("browser").reload_all()
    qtbot.waitUntil(lambda: not window.page("browser").model.loading, timeout=30_000)
    assert error_texts() == []


def test_a_log_deleted_under_the_app_is_noticed_and_the_study_reopened(
    window, qtbot, study: Path, caplog
) -> None:
    from meaningbench.ops.settings import set_setting
    from meaningbench.queries.study import get_setting

    window.runner.show_error_dialogs = True
    open_in(window, study, qtbot)
    browser = window.page("browser")
    window.runner.run_now(set_setting(window.context.study, "probe", "before"))
    # The screens reread what the write changed; a reader that opened its connection after
    # the log is replaced below would hold the new log, not the one deleted.
    qtbot.waitUntil(lambda: not browser.model.loading, timeout=30_000)
    assert_study_sound(study)
    # What another program's last close does: checkpoint, then delete the log and the
    # shared memory; then another process writes to a new log.
    os.unlink(f"{study}-wal")
    os.unlink(f"{study}-shm")
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute(\"UPDATE item SET system = 'renamed' WHERE id = 1\"); c.commit(); c.close()"
    )
    subprocess.run([sys.executable, "-c", code, str(study)], check=True, timeout=120)
    assert any(t.endswith("(deleted)") or t.endswith("(stale)") for t in held_wal(study))
    with caplog.at_level(logging.WARNING, logger="meaningbench.db"):
        # The app's next write.
        window.runner.run_now(set_setting(window.context.study, "probe", "after"))
        browser.reload_all()
        qtbot.waitUntil(lambda: not browser.model.loading, timeout=30_000)
        assert get_setting(window.context.study, "probe") == "after"
    # Both writes are in the study on disk, as another process reads it now.
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print("
        "c.execute(\"SELECT value FROM study_setting WHERE key = 'probe'\").fetchone()[0], "
        "c.execute('SELECT system FROM item WHERE id = 1').fetchone()[0]); c.close()"
    )
    seen = subprocess.run(
        [sys.executable, "-c", code, str(study)], capture_output=True, text=True, timeout=120
    )
    assert "after" in seen.stdout and "renamed" in seen.stdout, (seen.stdout, seen.stderr)
    assert any("opened again" in r.getMessage() for r in caplog.records), caplog.text
    assert error_texts() == []
    reader = browser.model.reader
    assert reader is not None
    assert reader.rows([1], None)[1].system == "renamed"
    assert_study_sound(study)
