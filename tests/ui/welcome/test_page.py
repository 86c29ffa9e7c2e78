"""The first start: a welcome page with the demo study, open, new, import, the user guide
and the recent studies."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.settings import resources_dir
from meaningbench.ui.welcome.importing import free_study_path, import_into_new_study


def count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_first_start_shows_the_welcome_page(window, qtbot) -> None:
    page = window.welcome
    assert window.stack.currentWidget() is page
    labels = [b.text() for b in (page.demo_button, page.open_button, page.new_button)]
    assert labels == ["Open the demo study", "Open study…", "New study…"]
    assert page.import_button.text() == "Import ratings…" and page.import_button.isEnabled()
    assert "user guide" in page.guide_link.text()
    assert page.no_recent.isVisibleTo(page) and not page.recent_list.isVisibleTo(page)


def test_the_demo_button_opens_the_demo_study_and_it_becomes_recent(window, qtbot) -> None:
    qtbot.mouseClick(window.welcome.demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.context.study is not None, timeout=60_000)
    path = window.context.path
    assert path is not None and path.name == "demo.mbstudy"
    assert window.stack.currentWidget() is not window.welcome
    assert count(path, "item") > 0
    window.studies.close_study()
    assert window.stack.currentWidget() is window.welcome
    listed = window.welcome.recent_list.item(0)
    assert listed is not None and Path(listed.toolTip()) == path.resolve()


def test_the_guide_link_opens_the_user_guide(window, qtbot) -> None:
    window.welcome.guide_link.linkActivated.emit("guide")
    dialogs = [w for w in QApplication.topLevelWidgets() if w.objectName() == "guidesDialog"]
    assert len(dialogs) == 1 and dialogs[0].isVisible()
    docs = {p.name for p in (resources_dir() / "docs").glob("*.md")}
    assert Path(dialogs[0].browser.source().toLocalFile()).name in docs
    dialogs[0].close()


def test_import_ratings_makes_a_new_study_from_the_file(window, qtbot, tmp_path: Path) -> None:
    ratings = resources_dir() / "demo" / "demo_ratings.jsonl"
    target = free_study_path(tmp_path, ratings.stem)
    assert target == tmp_path / "demo_ratings.mbstudy"
    dialog = import_into_new_study(window, ratings, target)
    # The import makes the study: until it has committed there is none.
    assert window.context.study is None and sorted(tmp_path.iterdir()) == []
    assert dialog.preview is not None and dialog.preview.error is None
    assert dialog.import_button.isEnabled()
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "done", job.failure
    # Then it is opened, under its name (no partial file is left beside it).
    assert window.context.path == target
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    rows = [json.loads(line) for line in ratings.read_text(encoding="utf-8").splitlines() if line]
    outputs = {(r["source"], r["system"], r["output"]) for r in rows}
    scales = ("meaning", "fluency", "simplicity")
    assert count(target, "item") == len(outputs)
    assert count(target, "rating") == sum(r.get(d) is not None for r in rows for d in scales)
    dialog.close()
    # The name is taken now: the next import of that file gets a new one.
    assert free_study_path(tmp_path, ratings.stem) == tmp_path / "demo_ratings-2.mbstudy"


def test_import_into_a_taken_place_creates_nothing(window, qtbot, tmp_path: Path) -> None:
    from tests.ui.test_workers import close_error_boxes, error_boxes

    taken = tmp_path / "taken.mbstudy"
    taken.write_bytes(b"not a study")
    ratings = resources_dir() / "demo" / "demo_ratings.jsonl"
    assert import_into_new_study(window, ratings, taken) is None
    assert window.context.study is None and taken.read_bytes() == b"not a study"
    assert any("already exists" in box.text() for box in error_boxes())
    close_error_boxes()


def test_closing_the_import_before_importing_makes_no_study(window, qtbot, tmp_path: Path) -> None:
    ratings = resources_dir() / "demo" / "demo_ratings.jsonl"
    target = free_study_path(tmp_path, ratings.stem)
    dialog = import_into_new_study(window, ratings, target)
    dialog.reject()
    assert window.context.study is None
    assert sorted(tmp_path.iterdir()) == []  # no study and no companion files
    assert window.stack.currentWidget() is window.welcome
    page = window.welcome
    listed = [page.recent_list.item(i).toolTip() for i in range(page.recent_list.count())]
    assert str(target) not in listed


def test_closing_the_import_after_importing_keeps_the_study(window, qtbot, tmp_path: Path) -> None:
    ratings = resources_dir() / "demo" / "demo_ratings.jsonl"
    target = free_study_path(tmp_path, ratings.stem)
    dialog = import_into_new_study(window, ratings, target)
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "done", job.failure
    dialog.reject()
    assert window.context.path == target and count(target, "item") > 0


def test_a_failed_import_into_a_new_study_leaves_no_study(window, qtbot, tmp_path: Path) -> None:
    ratings = tmp_path / "data" / "bad.csv"
    ratings.parent.mkdir()
    # The third row's rating is no number: the import stops there, all or nothing.
    ratings.write_text("source,output,system,meaning\na,b,s1,50\nc,d,s1,fifty\n", encoding="utf-8")
    folder = tmp_path / "studies"
    folder.mkdir()
    target = folder / "bad.mbstudy"
    dialog = import_into_new_study(window, ratings, target)
    assert dialog is not None and dialog.import_button.isEnabled()
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "failed"
    assert "Nothing was imported" in dialog.error_label.text()
    assert window.context.study is None and sorted(folder.iterdir()) == []
    dialog.reject()
    assert window.stack.currentWidget() is window.welcome
