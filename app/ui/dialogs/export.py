"""Export the study: items with mean ratings and scores, or the per-rater ratings.

The export runs in a child process through `meaningbench.datasets.exporters.export_study`, the
same code as `meaningbench export`; the format follows the file's extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.child_process import in_child_process
from meaningbench.ops.export import export_job
from meaningbench.ui.window_state import open_at
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobHandle

if TYPE_CHECKING:
    from meaningbench.ops.export import ExportReport
    from meaningbench.ui.context import StudyContext

FILE_FILTER = "CSV (*.csv);;TSV (*.tsv);;JSON lines (*.jsonl)"


class ExportDialog(QDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export")
        self.context = context
        self.job: JobHandle | None = None
        self.report: ExportReport | None = None

        self.items_radio = QRadioButton(
            "Items: one row per item, mean ratings per dimension, one column per metric"
        )
        self.ratings_radio = QRadioButton(
            "Ratings: one row per rating (long shape; imports back into a study)"
        )
        self.items_radio.setChecked(True)
        self.raw_cells = QCheckBox(
            "Write text cells as they are (for programs: a spreadsheet would run text "
            "starting with = + - @ as a formula)"
        )
        self.raw_cells.setObjectName("exportRawCells")
        self.raw_cells.setToolTip(
            "Unticked, CSV/TSV text cells starting with = + - @, a tab or a carriage return "
            "get a leading ' so that spreadsheets show them; importing the file removes it."
        )
        group = QButtonGroup(self)
        group.addButton(self.items_radio)
        group.addButton(self.ratings_radio)
        self.path_edit = QLineEdit()
        self.path_edit.setObjectName("exportPath")
        self.path_edit.setPlaceholderText("a .csv, .tsv or .jsonl file")
        if context.path is not None:
            self.path_edit.setText(str(context.path.with_name(f"{context.path.stem}-items.csv")))
        browse = QPushButton("Choose…")
        browse.clicked.connect(self.choose_file)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("File", row)
        self.status = QLabel()
        self.status.setObjectName("exportStatus")
        self.status.setWordWrap(True)
        self.export_button = QPushButton("Export")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.items_radio)
        layout.addWidget(self.ratings_radio)
        layout.addLayout(form)
        layout.addWidget(self.raw_cells)
        layout.addWidget(self.status)
        layout.addStretch(1)
        layout.addLayout(buttons)
        open_at(self, QSize(620, 240))

    def choose_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export", self.path_edit.text(), FILE_FILTER)
        if path:
            self.path_edit.setText(path)

    def start(self) -> JobHandle | None:
        study_path = self.context.path
        text = self.path_edit.text().strip()
        if study_path is None or not text or self.job is not None:
            return None
        out = Path(text)
        ratings = self.ratings_radio.isChecked()

        self.status.setText("Exporting…")
        self.export_button.setEnabled(False)
        self.job = self.context.runner.start(
            in_child_process(export_job, study_path, out, ratings, self.raw_cells.isChecked()),
            title=f"Exporting {out.name}",
            on_result=self._on_result,
        )
        self.job.failed.connect(lambda f: self.status.setText(f"Not exported: {f.message}"))
        self.job.finished.connect(self._on_finished)
        return self.job

    def _on_result(self, report: ExportReport) -> None:
        from meaningbench.queries.export import cells_note

        self.report = report
        self.status.setText(
            f"Wrote {counted(report.rows, 'row')} ({counted(report.items, 'item')}) "
            f"to {report.path} "
            f"in {report.elapsed_s:.1f} s.\nText cells: {cells_note(report)}."
        )

    def _on_finished(self) -> None:
        self.job = None
        self.export_button.setEnabled(True)
