"""File ▸ Make rater kits… and File ▸ Collect rater kits…: a campaign's two steps for the
study lead. The work is the engine's (`meaningbench.ops.kits`), run by the window's job
runner; these dialogs ask for the raters and folders and show what came of it.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ui.dialogs.dialog_terms import KIT_TERMS, in_dialog_terms
from meaningbench.ui.widgets import grow_to_fit, say_in
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ops.kits import CollectReport, MadeKit
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.workers import JobFailure

KITS_FOLDER = "kits"
RETURNED_FOLDER = "returned"
REPORT_COLUMNS = ["Rater", "Kit file", "New ratings", "Already in", "Conflicts", "Controls passed"]


def _folder_row(edit: QLineEdit, choose: Any) -> QHBoxLayout:
    button = QPushButton("Choose…")
    button.setAutoDefault(False)
    button.clicked.connect(choose)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row


class _KitsDialog(QDialog):
    """What both dialogs share: the study, a folder to choose, a result or error line."""

    def __init__(self, context: StudyContext, parent: QWidget | None, title: str) -> None:
        super().__init__(parent)
        self.context = context
        self.setWindowTitle(title)
        self.folder_edit = QLineEdit()
        self.result_label = QLabel()
        self.result_label.setWordWrap(True)
        self.result_label.setTextFormat(Qt.TextFormat.RichText)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.close)
        self.running = False

    def _study_folder(self) -> Path:
        return self.context.path.parent if self.context.path else Path.home()

    def _choose(self, title: str) -> None:
        chosen = QFileDialog.getExistingDirectory(self, title, self.folder_edit.text())
        if chosen:
            self.folder_edit.setText(chosen)

    def _say(self, html: str, *, error: bool = False) -> None:
        say_in(self.result_label, html, error=error)

    def _failed(self, failure: JobFailure) -> None:
        self.running = False
        self._set_busy(False)
        self._say(escape(in_dialog_terms(failure.message, KIT_TERMS)), error=True)

    def _set_busy(self, busy: bool) -> None:
        raise NotImplementedError


class MakeKitsDialog(_KitsDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(context, parent, "Make rater kits")
        self.setObjectName("makeKitsDialog")
        self.made: list[MadeKit] | None = None
        intro = QLabel(
            "A kit is a small file per rater holding only their own items (by the study's "
            "overlap), the controls, the practice and the guidelines: no other rater's "
            "ratings, no scores. Send each rater their file; they open it in MeaningBench, "
            "rate, and choose Send back."
        )
        intro.setWordWrap(True)
        self.raters_edit = QLineEdit()
        self.raters_edit.setObjectName("kitRaters")
        self.raters_edit.setPlaceholderText("ana, ben, carla")
        self.folder_edit.setObjectName("kitFolder")
        self.folder_edit.setText(str(self._study_folder() / KITS_FOLDER))
        self.top_up = QCheckBox(
            "Top-up: only the items still short of their ratings, shared among these raters"
        )
        self.top_up.setObjectName("kitTopUp")
        form = QFormLayout()
        form.addRow("Raters:", self.raters_edit)
        form.addRow(
            "Into folder:",
            _folder_row(self.folder_edit, lambda: self._choose("Put the kits into which folder?")),
        )
        form.addRow("", self.top_up)
        self.make_button = self.buttons.addButton(
            "Make kits", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.make_button.setObjectName("makeKitsButton")
        self.make_button.setDefault(True)
        self.make_button.clicked.connect(self.make)
        # Asks whether to replace kits without ratings already in the folder (None: not asking).
        self.replace_box: QMessageBox | None = None
        self.result_label.setObjectName("makeKitsResult")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.result_label)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.resize(600, self.sizeHint().height())

    def _set_busy(self, busy: bool) -> None:
        self.make_button.setEnabled(not busy)

    def make(self, *, replace: bool = False) -> None:
        """Make the kits; `replace`: the lead said yes to replacing the kits (without
        ratings) already in the folder under the new names."""
        from meaningbench.ops.kits import make_kits_job

        study = self.context.study
        if study is None or self.running:
            return
        raters = self.raters_edit.text().strip()
        if not raters:
            self._say("Name the raters first, separated by commas (ana, ben).", error=True)
            return
        folder = self.folder_edit.text().strip()
        if not folder:
            self._say("Choose the folder to put the kits in.", error=True)
            return
        self.running = True
        self._set_busy(True)
        self._say("Making the kits…")
        job = make_kits_job(
            study,
            raters,
            Path(folder).expanduser(),
            top_up=self.top_up.isChecked(),
            replace=replace,
        )
        self.context.runner.start(
            job,
            title="Making rater kits",
            on_result=self._made,
            on_failed=self._make_failed,
            show_errors=False,
        )

    def _make_failed(self, failure: JobFailure) -> None:
        from meaningbench.ops.kits import KitsInTheWay

        self._failed(failure)
        if isinstance(failure.exception, KitsInTheWay):
            self._ask_to_replace(failure.exception.paths)

    def _ask_to_replace(self, paths: list[Path]) -> None:
        """Kits without ratings are in the way: replaced only when the lead says so."""
        names = ", ".join(p.name for p in paths)
        one = len(paths) == 1
        self._say(
            f"Nothing was written: {escape(names)} {'is' if one else 'are'} already in "
            f"{escape(str(paths[0].parent))}.",
            error=True,
        )
        box = QMessageBox(self)
        box.setObjectName("replaceKitsBox")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Replace the kits?")
        box.setText(
            f"{names} {'is' if one else 'are'} already in {paths[0].parent}, with no ratings "
            f"in {'it' if one else 'them'}. Replace {'it' if one else 'them'} with the new "
            "kits? A rater who already has the earlier file can still send it back."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("Replace")
        box.button(QMessageBox.StandardButton.No).setText("Keep them")
        box.finished.connect(lambda _code: self._replace_answered(box))
        self.replace_box = box
        box.open()

    def _replace_answered(self, box: QMessageBox) -> None:
        self.replace_box = None
        if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
            self.make(replace=True)
        else:
            self._say("Nothing was written: choose another folder for the new kits.", error=True)

    def _made(self, made: list[MadeKit]) -> None:
        self.running = False
        self._set_busy(False)
        self.made = made
        folder = made[0].path.parent if made else Path(self.folder_edit.text())
        rows = "".join(
            f"<li>{escape(m.path.name)}: {escape(m.rater)}, {counted(m.items, 'item')}</li>"
            for m in made
        )
        self._say(
            f"<b>{counted(len(made), 'kit')} made</b> in {escape(str(folder))}:<ul>{rows}</ul>"
            "Send each rater their own file. When they send their kits back, put the files in "
            "one folder and choose File ▸ Collect rater kits…"
        )


class CollectKitsDialog(_KitsDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(context, parent, "Collect rater kits")
        self.setObjectName("collectKitsDialog")
        self.report: CollectReport | None = None
        intro = QLabel(
            "Put the kits your raters sent back into one folder and choose it here. Each kit "
            "comes in whole or not at all; a kit collected again adds nothing, so you can "
            "collect the whole folder each time more kits arrive."
        )
        intro.setWordWrap(True)
        self.folder_edit.setObjectName("collectFolder")
        self.folder_edit.setText(str(self._study_folder() / RETURNED_FOLDER))
        form = QFormLayout()
        form.addRow(
            "Folder:",
            _folder_row(
                self.folder_edit, lambda: self._choose("Collect the kits of which folder?")
            ),
        )
        self.table = QTableWidget(0, len(REPORT_COLUMNS))
        self.table.setObjectName("collectReport")
        self.table.setHorizontalHeaderLabels(REPORT_COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.hide()
        self.refused = QLabel()
        self.refused.setObjectName("collectRefused")
        self.refused.setWordWrap(True)
        self.refused.setProperty("role", "error")
        self.refused.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refused.hide()
        self.collect_button = self.buttons.addButton(
            "Collect", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.collect_button.setObjectName("collectButton")
        self.collect_button.setDefault(True)
        self.collect_button.clicked.connect(self.collect)
        self.result_label.setObjectName("collectResult")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.result_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.refused)
        layout.addWidget(self.buttons)
        self.resize(760, 440)

    def _set_busy(self, busy: bool) -> None:
        self.collect_button.setEnabled(not busy)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        # Opened again from the menu: a fresh dialog, not the last collect's result (a
        # collect still running keeps its state, and says so when it ends).
        if not self.running and not event.spontaneous():
            self.report = None
            self.result_label.clear()
            self.result_label.hide()
            self.table.setRowCount(0)
            self.table.hide()
            self.refused.clear()
            self.refused.hide()
        super().showEvent(event)

    def collect(self) -> None:
        from meaningbench.ops.kits import collect_job

        study = self.context.study
        if study is None or self.running:
            return
        folder = self.folder_edit.text().strip()
        if not folder:
            self._say("Choose the folder that holds the returned kits.", error=True)
            return
        self.running = True
        self._set_busy(True)
        self.table.hide()
        self.refused.hide()
        self._say("Collecting…")
        self.context.runner.start(
            collect_job(study, Path(folder).expanduser()),
            title="Collecting rater kits",
            on_result=self._collected,
            on_failed=self._failed,
            show_errors=False,
        )

    def _collected(self, report: CollectReport) -> None:
        from meaningbench.ops.kits import controls_passed

        self.running = False
        self._set_busy(False)
        self.report = report
        conflicts = report.conflicts
        summary = (
            f"<b>{counted(report.new_ratings, 'new rating')}</b> from "
            f"{counted(len(report.collected), 'kit')}"
        )
        unchecked = [k.path.name for k in report.collected if k.unchecked]
        if unchecked:
            summary += (
                f"; made before kits kept a sealed log, so not checked for edits: "
                f"{escape(', '.join(unchecked))}"
            )
        unsealed = [k.path.name for k in report.collected if k.practice_unchecked]
        if unsealed:
            summary += (
                "; made before kits sealed their practice answers, so those not checked for "
                f"edits: {escape(', '.join(unsealed))}"
            )
        not_blind = [k.path.name for k in report.collected if k.not_blind]
        if not_blind:
            summary += (
                "; made before kits were blind, so their raters could tell the hidden "
                f"controls: {escape(', '.join(not_blind))}"
            )
        practised = [k for k in report.collected if k.practice_added]
        if practised:
            # Attempts at the practice: on the Campaign page's Practice column.
            summary += f"; {counted(sum(k.practice_added for k in practised), 'practice answer')} "
            summary += f"from {escape(', '.join(k.rater for k in practised))}"
        if conflicts:
            summary += (
                f"; <b>{counted(conflicts, 'conflict')}</b> (a rater rated an item differently "
                "in two returns: the rating already here stays current)"
            )
        if not report.collected and not report.refused:
            summary = "No kit (.mbkit file) in this folder."
        self._say(summary + ".")
        self.table.setRowCount(len(report.collected))
        for r, kit in enumerate(report.collected):
            passed = controls_passed(kit.controls)
            values: list[Any] = [
                kit.rater,
                kit.path.name,
                kit.new_ratings,
                kit.merge.duplicates,
                len(kit.merge.conflicts),
                passed,
            ]
            for k, value in enumerate(values):
                cell = QTableWidgetItem(str(value))
                if isinstance(value, int):
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(r, k, cell)
        self.table.resizeColumnsToContents()
        self.table.setVisible(bool(report.collected))
        if report.refused:
            lines = "".join(
                f"<li><b>{escape(p.name)}</b>: {escape(why.removeprefix(f'{p}: '))}</li>"
                for p, why in report.refused
            )
            self.refused.setText(
                f"{counted(len(report.refused), 'kit')} refused, nothing of them merged:"
                f"<ul>{lines}</ul>"
            )
            self.refused.show()
        grow_to_fit(self)
