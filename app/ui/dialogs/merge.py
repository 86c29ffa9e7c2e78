"""File ▸ Merge studies…: bring another copy's ratings in, after a preview of what changes.

The preview and the merge are the engine's (`meaningbench.annotation.merge_preview`,
`meaningbench.annotation.merge`); this dialog only picks the file, shows the preview and asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.ui.widgets import is_enter
from meaningbench.ui.window_state import open_at
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.queries.merge import MergeReport
    from meaningbench.ui.context import StudyContext

FILE_FILTER = "MeaningBench studies (*.mbstudy);;All files (*)"
CONFLICT_ROWS = 500  # the table shows this many; the count says how many there are


def describe(report: MergeReport, *, done: bool) -> str:
    """The preview (or the result) in plain words, what is added first."""
    will = "were" if done else "will be"
    added = [f"<b>{counted(report.ratings_added, 'rating')}</b>"]
    if report.items_added:
        added.append(counted(report.items_added, "item"))
    if report.notes_added:
        added.append(counted(report.notes_added, "note"))
    lines = [
        f"{' and '.join([', '.join(added[:-1]), added[-1]] if len(added) > 1 else added)} "
        f"{will} added from {report.other.name}."
    ]
    if report.annotators_added:
        lines.append(f"New annotators: {', '.join(report.annotators_added)}.")
    if report.dimensions_added:
        lines.append(f"New dimensions: {', '.join(report.dimensions_added)}.")
    already = "is" if report.duplicates == 1 else "are"
    lines.append(
        f"{counted(report.duplicates, 'rating')} {already} already in this study (left out)."
    )
    if report.conflicts:
        lines.append(
            f"<b>{counted(len(report.conflicts), 'conflict')}</b>: the same rater rated the same item "
            "differently in the two copies. This study's rating stays current; the other is "
            "kept as history (listed below)."
        )
    else:
        lines.append("No conflicts.")
    if report.skipped:
        lines.append(
            f"{counted(len(report.skipped), 'rating')} cannot come in: "
            + "; ".join(report.skipped[:3])
        )
    return "<br>".join(lines)


class MergeDialog(QDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mergeDialog")
        self.setWindowTitle("Merge studies")
        self.context = context
        self.report: MergeReport | None = None  # the preview, then the merge's report
        self.merged = False
        intro = QLabel(
            "Bring back the ratings and notes of another copy of this study (an annotator's "
            "copy, say). Nothing in this study is overwritten."
        )
        intro.setWordWrap(True)
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("the other copy's .mbstudy file")
        # Enter in the path field previews and stops there: it must not also press a
        # button of the dialog (a merge is asked for on purpose, after the preview).
        self.path_edit.installEventFilter(self)
        browse = QPushButton("Choose…")
        browse.clicked.connect(self.choose_file)
        # Enter in the path field previews; it must not press a button of the dialog too.
        browse.setAutoDefault(False)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        self.summary = QLabel()
        self.summary.setObjectName("mergeSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.error_label = QLabel()
        self.error_label.setObjectName("mergeError")
        self.error_label.setWordWrap(True)
        self.error_label.setProperty("role", "error")  # coloured per theme by the style sheet
        self.error_label.hide()
        self.conflicts = QTableWidget(0, 5)
        self.conflicts.setObjectName("mergeConflicts")
        self.conflicts.setHorizontalHeaderLabels(
            ["Item", "Annotator", "Dimension", "This study", "Other copy"]
        )
        self.conflicts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.conflicts.verticalHeader().setVisible(False)
        self.conflicts.horizontalHeader().setStretchLastSection(True)
        self.conflicts.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.merge_button = self.buttons.addButton("Merge", QDialogButtonBox.ButtonRole.AcceptRole)
        self.merge_button.setEnabled(False)
        self.merge_button.setAutoDefault(False)  # merging is a click (or Tab, Space), never
        # the Enter that asked for the preview
        self.buttons.accepted.connect(self.merge)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.error_label)
        layout.addWidget(self.conflicts, 1)
        layout.addWidget(self.buttons)
        open_at(self, QSize(640, 420))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.path_edit and is_enter(event):
            self.set_file(self.path_edit.text().strip())
            return True
        return super().eventFilter(watched, event)

    def choose_file(self) -> None:
        start = str(self.context.path.parent) if self.context.path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Merge which copy?", start, FILE_FILTER)
        if path:
            self.set_file(path)

    def set_file(self, path: str | Path) -> MergeReport | None:
        """Preview merging `path`: what comes in, what conflicts; the study is unchanged."""
        from meaningbench.queries.merge import preview_merge

        self.path_edit.setText(str(path))
        self.report = None
        self.merged = False
        self.merge_button.setText("Merge")
        self.merge_button.setEnabled(False)
        target = self.context.path
        if target is None:
            self._fail("Open a study first.")
            return None
        try:
            report = preview_merge(target, Path(path).expanduser())
        except UserError as exc:
            self._fail(str(exc))
            return None
        self.report = report
        self.error_label.hide()
        self.summary.setText(describe(report, done=False))
        self._show_conflicts(report)
        useful = bool(report.ratings_added or report.notes_added or report.conflicts)
        self.merge_button.setEnabled(useful)
        if not useful:
            self.summary.setText(self.summary.text() + "<br>Nothing to merge.")
        return report

    def _show_conflicts(self, report: MergeReport) -> None:
        rows = report.conflicts[:CONFLICT_ROWS]
        self.conflicts.setRowCount(len(rows))
        for r, c in enumerate(rows):
            values: list[Any] = [c.item_id, c.annotator, c.dimension, c.ours, c.theirs]
            for k, value in enumerate(values):
                text = f"{value:g}" if isinstance(value, float) else str(value)
                cell = QTableWidgetItem(text)
                if k in (0, 3, 4):
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.conflicts.setItem(r, k, cell)
        self.conflicts.setVisible(bool(rows))

    def _fail(self, message: str) -> None:
        self.summary.clear()
        self.conflicts.hide()
        self.error_label.setText(message)
        self.error_label.show()

    def merge(self) -> None:
        """Merge (the preview's file); a second press closes the dialog."""
        if self.merged:
            self.accept()
            return
        from meaningbench.ops.merge import merge_job

        study = self.context.study
        path = self.path_edit.text().strip()
        if study is None or not path or self.report is None:
            return
        try:
            report = self.context.runner.run_now(merge_job(study, Path(path).expanduser()))
        except UserError as exc:
            self._fail(str(exc))
            return
        self.report, self.merged = report, True
        self.summary.setText(describe(report, done=True))
        self._show_conflicts(report)
        self.merge_button.setText("Close")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).hide()


def open_merge_dialog(window: Any) -> MergeDialog:
    dialog: MergeDialog | None = window.findChild(QDialog, "mergeDialog")
    if dialog is None:
        dialog = MergeDialog(window.context, window)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
