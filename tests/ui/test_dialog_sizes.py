"""Every dialog fits a 1024×640 screen: its minimum size leaves room for the frame the window
manager adds, what does not fit scrolls inside it, and at that size its buttons are on the
dialog, not below it. Each dialog the screens define is opened here, as the app opens it;
a new dialog that this test does not open fails it."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QLabel,
    QTreeWidget,
    QTreeWidgetItemIterator,
    QWidget,
)

from meaningbench.ui.window_state import FRAME_ALLOWANCE, fitted_size
from tests.kits.campaign_study import campaign_study
from tests.ui.conftest import open_in

SCREEN = QSize(1024, 640)
ROOM = SCREEN - FRAME_ALLOWANCE  # what a dialog may take inside its frame


def _top_up(window: Any, qtbot: Any) -> QWidget:
    assert window.show_page("campaign")
    page = window.page("campaign")
    qtbot.waitUntil(lambda: page.figures is not None)
    return page.show_top_up_dialog()


def _disagreements(window: Any, qtbot: Any) -> QWidget:
    assert window.show_page("campaign")
    page = window.page("campaign")
    dialog = page.show_disagreements()
    qtbot.waitUntil(lambda: dialog.view is not None)
    return dialog


def _rater_qc(window: Any, qtbot: Any) -> QWidget:
    assert window.show_page("campaign")
    dialog = window.page("campaign").show_qc_view()
    qtbot.waitUntil(lambda: dialog.view is not None)
    return dialog


def _picker(window: Any, _qtbot: Any) -> QWidget:
    from meaningbench.ui.annotation.picker import AnnotatorPicker

    return AnnotatorPicker(window.context.study, window)


def _flag(window: Any, _qtbot: Any) -> QWidget:
    from meaningbench.ui.annotation.panels import FlagDialog

    return FlagDialog("The output is cut off.", True, window)


def _training(window: Any, _qtbot: Any) -> QWidget:
    from meaningbench.ui.training import open_training_dialog

    return open_training_dialog(window)


def _merge(window: Any, _qtbot: Any) -> QWidget:
    from meaningbench.ui.dialogs.merge import open_merge_dialog

    return open_merge_dialog(window)


def _about(window: Any, _qtbot: Any) -> QWidget:
    from meaningbench.ui.dialogs.help import show_about

    return show_about(window)


def _send_back(window: Any, _qtbot: Any) -> QWidget:
    kit = Path(window.context.path).parent / "kits" / "ana.mbkit"
    assert window.studies.open_path(kit)
    return window.rater_mode.send_back()


def _by_method(name: str) -> Callable[[Any, Any], QWidget]:
    return lambda window, _qtbot: getattr(window, name)()


# Each dialog class of the screens, and how the app opens it.
OPENERS: dict[str, Callable[[Any, Any], QWidget]] = {
    "ImportDialog": _by_method("show_import_dialog"),
    "ExportDialog": _by_method("show_export_dialog"),
    "MakeKitsDialog": _by_method("show_make_kits_dialog"),
    "CollectKitsDialog": _by_method("show_collect_kits_dialog"),
    "BatteryDialog": _by_method("show_battery_dialog"),
    "StudySettingsDialog": _by_method("show_settings_dialog"),
    "KeymapDialog": _by_method("show_keymap"),
    "GuidesDialog": _by_method("show_guides"),
    "MergeDialog": _merge,
    "TrainingDialog": _training,
    "TopUpDialog": _top_up,
    "DisagreementsDialog": _disagreements,
    "RaterQCDialog": _rater_qc,
    "AnnotatorPicker": _picker,
    "FlagDialog": _flag,
    "SendBackDialog": _send_back,
}
# Message boxes the screens build themselves (not classes of their own).
BOXES: dict[str, Callable[[Any, Any], QWidget]] = {"about": _about}


def dialog_classes() -> set[str]:
    """The names of the QDialog subclasses defined in the screens' modules."""
    import meaningbench.ui as ui

    for info in pkgutil.walk_packages(ui.__path__, "meaningbench.ui."):
        importlib.import_module(info.name)
    found: set[str] = set()
    todo = list(QDialog.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("meaningbench.ui.") and not cls.__name__.startswith("_"):
            found.add(cls.__name__)
    return found


def test_every_dialog_of_the_screens_is_opened_here() -> None:
    assert dialog_classes() == set(OPENERS)


@pytest.fixture
def lead_window(window: Any, qtbot: Any, tmp_path: Path) -> Any:
    path = campaign_study(tmp_path, returned=("ana",))
    window.show()
    window.resize(SCREEN)
    open_in(window, path, qtbot)
    return window


FLAG = re.compile(r"(^|[\s`(])--[a-z]")


def flags_said(dialog: QWidget) -> list[str]:
    """The words on the dialog (labels, buttons, tooltips, list rows) that quote a
    command-line flag: a dialog speaks of its own fields."""
    said: list[str] = []
    for widget in [dialog, *dialog.findChildren(QWidget)]:
        texts = [widget.toolTip()]
        if isinstance(widget, (QLabel, QAbstractButton)):
            texts.append(widget.text())
        if isinstance(widget, QTreeWidget):
            it = QTreeWidgetItemIterator(widget)
            while it.value():
                item = it.value()
                for c in range(widget.columnCount()):
                    texts += [item.text(c), item.toolTip(c)]
                it += 1
        said += [t for t in texts if t and FLAG.search(t)]
    return said


def buttons_outside(dialog: QWidget) -> list[str]:
    """The visible buttons of `dialog` not wholly on it at its present size."""
    inside = dialog.rect()
    out = []
    for button in dialog.findChildren(QAbstractButton):
        if not button.isVisibleTo(dialog) or not button.text():
            continue
        top_left = button.mapTo(dialog, QPoint(0, 0))
        if not inside.contains(QRect(top_left, button.size())):
            out.append(button.text())
    return out


@pytest.mark.parametrize("name", [*OPENERS, *BOXES])
def test_the_dialog_fits_a_small_screen(lead_window: Any, qtbot: Any, name: str) -> None:
    dialog = {**OPENERS, **BOXES}[name](lead_window, qtbot)
    assert dialog is not None
    dialog.show()
    qtbot.waitUntil(dialog.isVisible)
    qtbot.wait(50)
    hint = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert hint.width() <= ROOM.width() and hint.height() <= ROOM.height(), (name, hint)
    # Opened on any screen, it is no larger than that screen leaves it (or its minimum).
    screen = (dialog.screen() or QApplication.primaryScreen()).availableGeometry().size()
    room = (screen - FRAME_ALLOWANCE).expandedTo(hint)
    assert dialog.width() <= room.width() and dialog.height() <= room.height(), (name, room)
    # Made as small as the laptop's screen asks: every button stays on the dialog.
    dialog.resize(dialog.size().boundedTo(ROOM))
    qtbot.wait(50)
    assert dialog.width() <= ROOM.width() and dialog.height() <= ROOM.height(), name
    assert buttons_outside(dialog) == [], name
    assert flags_said(dialog) == [], name
    dialog.close()


def test_a_dialog_opens_at_its_size_where_there_is_room_and_smaller_where_not() -> None:
    wanted = QSize(1040, 700)
    assert fitted_size(wanted, QSize(1920, 1080)) == wanted
    assert fitted_size(wanted, QSize(1024, 640)) == ROOM
    assert fitted_size(QSize(600, 300), QSize(1024, 640)) == QSize(600, 300)


def test_run_metrics_keeps_its_width_while_it_names_a_long_run(
    lead_window: Any, qtbot: Any
) -> None:
    from meaningbench.runtime import Progress

    dialog = lead_window.show_battery_dialog()
    qtbot.waitUntil(dialog.isVisible)
    dialog.resize(dialog.size().boundedTo(ROOM))
    width = dialog.width()
    run = "bertscore@/home/lead/encoders/" + "a-long-local-model-folder-name" * 3 + "[layer=9]"
    dialog._on_progress(Progress(3, 60, f"{run} on 60 items"))
    qtbot.wait(50)
    assert dialog.width() == width and dialog.minimumSizeHint().width() <= ROOM.width()
    assert dialog.phase_label.toolTip() == f"Now: {run} on 60 items"
