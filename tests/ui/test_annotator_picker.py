"""Who rates is chosen on purpose: the start button opens the picker, typing a name never
selects an existing rater, and a new rater is made only after a confirmation."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog

from meaningbench.db.study import open_study
from meaningbench.ui.annotation.picker import AnnotatorPicker
from tests.ui.conftest import open_in


def focused():  # noqa: ANN201
    return QApplication.focusWidget()


def shown_picker(qtbot, path) -> AnnotatorPicker:  # noqa: ANN001
    study = open_study(path)
    picker = AnnotatorPicker(study, None)
    study.close()
    qtbot.addWidget(picker)
    with qtbot.waitExposed(picker):
        picker.show()
    picker.activateWindow()
    qtbot.waitUntil(lambda: focused() is not None)
    return picker


def test_the_start_button_opens_the_picker_and_a_new_rater_needs_confirming(
    window, qtbot, study_with_facts
) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    seen: dict[str, object] = {}

    def answer() -> None:
        picker = next(
            w for w in QApplication.topLevelWidgets()
            if isinstance(w, AnnotatorPicker) and w.isVisible()
        )  # fmt: skip
        qtbot.keyClicks(focused(), "newcomer")
        qtbot.keyClick(focused(), Qt.Key.Key_Return)
        # The first Enter only asks: a new identity is never made by accident.
        seen["asked"] = picker.isVisible() and picker.confirm.isVisible()
        seen["button"] = picker.ok_button.text()
        qtbot.keyClick(focused(), Qt.Key.Key_Return)

    QTimer.singleShot(300, answer)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert seen == {"asked": True, "button": "Create new rater"}
    assert page.annotator == "newcomer" and page.screen is not None
    assert page.screen.who_label.isVisible()
    assert "newcomer" in page.screen.who_label.text()


def test_typing_a_name_never_starts_the_previous_rater(qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    picker = shown_picker(qtbot, path)
    # Nothing is preselected: Enter alone chooses nobody.
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.isVisible() and picker.error.isVisible()
    # The user clicks into the list of earlier raters, then types a new name there.
    first = picker.list.item(0)
    rect = picker.list.visualItemRect(first)
    qtbot.mouseClick(picker.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert picker.selected_name() == "ann1"
    qtbot.keyClicks(focused(), "zoe")
    assert picker.new_name.text() == "zoe" and picker.selected_name() == "zoe"
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.isVisible() and picker.confirm.isVisible() and "zoe" in picker.confirm.text()
    # Changing the name withdraws the question: the new name is asked about afresh.
    qtbot.keyClick(focused(), Qt.Key.Key_Backspace)
    assert not picker.confirm.isVisible()
    qtbot.keyClicks(focused(), "e")
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.isVisible()
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.result() == QDialog.DialogCode.Accepted
    assert picker.selected_name() == "zoe" and picker.is_new()


def test_an_existing_rater_is_chosen_from_the_list_without_a_question(
    qtbot, study_with_facts
) -> None:
    path, _ = study_with_facts
    picker = shown_picker(qtbot, path)
    rect = picker.list.visualItemRect(picker.list.item(1))
    qtbot.mouseClick(picker.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.result() == QDialog.DialogCode.Accepted
    assert picker.selected_name() == "ann2" and not picker.is_new()


def test_down_arrow_from_the_name_field_chooses_an_existing_rater(qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    picker = shown_picker(qtbot, path)
    assert focused() is picker.new_name
    qtbot.keyClick(focused(), Qt.Key.Key_Down)
    assert focused() is picker.list and picker.selected_name() == "ann1"
    qtbot.keyClick(focused(), Qt.Key.Key_Down)
    assert picker.selected_name() == "ann2"
    qtbot.keyClick(focused(), Qt.Key.Key_Return)
    assert picker.result() == QDialog.DialogCode.Accepted and not picker.is_new()


def test_a_rater_with_merged_ratings_is_listed_as_his_queue_counts_him(
    qtbot, study_with_facts
) -> None:
    from meaningbench.annotation.session import AnnotationSession

    path, _ = study_with_facts
    picker = shown_picker(qtbot, path)  # ann1's ratings came in without a queue
    row = next(
        picker.list.item(i).text()
        for i in range(picker.list.count())
        if picker.list.item(i).text().startswith("ann1 ")
    )
    study = open_study(path)
    try:
        progress = AnnotationSession(study, "ann1").progress()
    finally:
        study.close()
    assert progress.rated > 0 and "not started" not in row
    assert f"{progress.rated} rated" in row
    picker = shown_picker(qtbot, path)  # the queue made: the picker and the queue agree
    row = next(
        picker.list.item(i).text()
        for i in range(picker.list.count())
        if picker.list.item(i).text().startswith("ann1 ")
    )
    assert f"{progress.rated} of {progress.total} rated" in row
