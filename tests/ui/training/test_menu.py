"""The Study menu opens the training dialog, one per window, on the open study."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog


def _study_action(win, text: str):  # noqa: ANN001, ANN202
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Study")
    return next(a for a in menu.actions() if a.text() == text)


def test_the_study_menu_opens_the_training_dialog(window, cue_path, qtbot) -> None:  # noqa: F811
    assert window.studies.open_path(cue_path)
    action = _study_action(window, "&Train a model…")
    action.trigger()
    dialog = window.findChild(QDialog, "trainingDialog")
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert "cue" in dialog.intro.text()
    assert dialog.form.out_dir.text().endswith("cue-meaningbert")
    dialog.close()
    action.trigger()
    assert window.findChild(QDialog, "trainingDialog") is dialog and dialog.isVisible()
    assert window.isEnabled()  # non-modal: the window stays usable


def test_the_curves_and_notices_follow_a_theme_switch(window, cue_path, qtbot) -> None:  # noqa: F811
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    assert window.studies.open_path(cue_path)
    _study_action(window, "&Train a model…").trigger()
    dialog = window.findChild(QDialog, "trainingDialog")
    notice = dialog.folder_notice
    notice.show_text("info", "Checkpoint in this folder", ["seed-0: paused after 3 steps"])
    tints = {}
    for theme, dark in (("dark", True), ("light", False)):
        window.set_theme(theme)
        base = QApplication.palette().color(QPalette.ColorRole.Base)
        assert dialog.curves.colors.dark is dark
        assert dialog.curves.plot.backgroundBrush().color().name() == base.name()
        tints[theme] = notice.styleSheet()  # retinted without being shown again
    assert tints["dark"] != tints["light"] and all("background" in t for t in tints.values())
