"""File ▸ Merge studies…: a preview of what comes in and what conflicts, then the merge."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt

from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.study import copy_study, open_study
from meaningbench.runtime.changes import StudyChanges
from tests.ui.conftest import open_in


def current_ratings(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM rating WHERE state = 'current'").fetchone()[0]
    finally:
        conn.close()


def annotators_copy(path: Path, tmp_path: Path) -> Path:
    """Another copy of the study: a new rater rated two items, and ann1 changed one rating."""
    other = copy_study(path, tmp_path / "carol-copy.mbstudy")
    study = open_study(other)
    try:
        session = AnnotationSession(study, "carol")
        for value in (30.0, 80.0):
            item = session.next_item()
            session.submit(item.item_id, {"meaning": value})
    finally:
        study.close()
    conn = sqlite3.connect(other)
    with conn:
        conn.execute(
            "UPDATE rating SET value = 3.5 WHERE id = (SELECT r.id FROM rating r "
            "JOIN annotator a ON a.id = r.annotator_id WHERE a.name = 'ann1' "
            "AND r.state = 'current' ORDER BY r.id LIMIT 1)"
        )
    conn.close()
    return other


def test_merge_studies_previews_then_merges(window, qtbot, study_with_facts, tmp_path) -> None:
    path, _ = study_with_facts
    other = annotators_copy(path, tmp_path)
    window.show()
    open_in(window, path, qtbot)
    before = current_ratings(path)
    assert window.actions_.merge.isEnabled()
    window.actions_.merge.trigger()
    from meaningbench.ui.dialogs.merge import MergeDialog

    dialog = window.findChild(MergeDialog, "mergeDialog")
    assert dialog is not None and dialog.isVisible()
    assert not dialog.merge_button.isEnabled()
    qtbot.keyClicks(dialog.path_edit, str(other))
    qtbot.keyClick(dialog.path_edit, Qt.Key.Key_Return)
    text = dialog.summary.text()
    preview = dialog.report
    assert preview.annotators_added == ["carol"] and preview.ratings_added >= 2
    assert f"<b>{preview.ratings_added} ratings</b>" in text and "will be added" in text
    assert "carol" in text
    assert "<b>1 conflict</b>:" in text and dialog.conflicts.rowCount() == 1
    assert (
        dialog.conflicts.item(0, 1).text() == "ann1" and dialog.conflicts.item(0, 4).text() == "3.5"
    )
    assert current_ratings(path) == before  # a preview changes nothing
    changed: list[object] = []
    window.context.study_changed.connect(changed.append)
    qtbot.mouseClick(dialog.merge_button, Qt.MouseButton.LeftButton)
    assert dialog.merged and "were added" in dialog.summary.text()
    # The merge did what the preview said.
    assert dialog.report.ratings_added == preview.ratings_added
    assert len(dialog.report.conflicts) == len(preview.conflicts) == 1
    assert current_ratings(path) == before + 2  # carol's two; ann1's other value is history
    assert changed == [StudyChanges(everything=True)]  # every screen reloads, once
    # Merging the same copy again brings nothing new.
    dialog.set_file(other)
    assert not dialog.merge_button.isEnabled() and "Nothing to merge" in dialog.summary.text()


def test_merge_errors_are_shown_in_the_dialog(window, qtbot, study_with_facts, tmp_path) -> None:
    from meaningbench.ui.dialogs.merge import MergeDialog

    path, _ = study_with_facts
    open_in(window, path, qtbot)
    window.actions_.merge.trigger()
    dialog = window.findChild(MergeDialog, "mergeDialog")
    junk = tmp_path / "notes.mbstudy"
    junk.write_text("not a study")
    qtbot.keyClicks(dialog.path_edit, str(junk))
    qtbot.keyClick(dialog.path_edit, Qt.Key.Key_Return)
    assert (
        dialog.error_label.isVisible() and "not a MeaningBench study" in dialog.error_label.text()
    )
    assert not dialog.merge_button.isEnabled()
    dialog.path_edit.clear()
    qtbot.keyClicks(dialog.path_edit, str(path))
    qtbot.keyClick(dialog.path_edit, Qt.Key.Key_Return)
    assert "itself" in dialog.error_label.text()
