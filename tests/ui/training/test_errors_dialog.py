"""Mistakes show in the dialog as messages; the dialog and the app go on."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.training.conftest import add_rated_items

from .conftest import use_tiny_model, wait_idle


def _no_message_boxes() -> bool:
    return not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]


def test_a_study_without_ratings_shows_the_error_in_the_dialog(
    open_dialog, tmp_path, tiny_encoder, qtbot
) -> None:
    from meaningbench.db.study import create_study

    study = create_study(tmp_path / "unrated.mbstudy")
    with study.session() as s:
        add_rated_items(s, [{"source": "A b c d.", "output": "A b.", "rating": None}] * 3)
    study.close()
    dialog = open_dialog(tmp_path / "unrated.mbstudy")
    use_tiny_model(dialog, tiny_encoder)
    out = Path(dialog.form.out_dir.text())
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    handle = dialog.job
    wait_idle(qtbot, dialog)
    assert handle.outcome == "failed" and handle.failure.is_user_error
    assert dialog.error_notice.isVisible()
    text = dialog.error_notice.text()
    assert "Training failed" in text and "no current ratings" in text
    assert dialog.error_notice.details_button.isHidden()  # the user's mistake, not a bug
    assert dialog.phase_label.text() == "Stopped by an error."
    assert _no_message_boxes()
    # Nothing was written, and the dialog is ready for another try.
    assert not out.exists()
    assert dialog.start_button.isEnabled() and dialog.form.isEnabled()
    assert dialog.progress.maximum() == 1  # not left spinning


def test_fields_and_folders_that_cannot_train_are_refused_up_front(
    open_dialog, cue_path, tmp_path, tiny_encoder, qtbot
) -> None:
    dialog = open_dialog(cue_path)
    use_tiny_model(dialog, tiny_encoder)
    dialog.form.seeds.setText("0 zero")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.job is None
    assert "seeds are whole numbers" in dialog.error_notice.text()

    dialog.form.seeds.setText("0")
    dialog.form.base.set_value(str(tmp_path / "no-such-model"))
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert "no such model folder" in dialog.error_notice.text()
    assert _no_message_boxes()

    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    dialog.form.out_dir.set_text(str(busy))
    dialog.check_folder()
    assert not dialog.start_button.isEnabled() and not dialog.resume_button.isEnabled()
    assert "is not empty" in dialog.folder_notice.text()
    assert (busy / "notes.txt").read_text() == "mine"
