"""Import a rating file: format, column mapping, a preview of the first rows, then the
import itself in a child process (all or nothing: a bad row leaves the study unchanged).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.child_process import in_child_process
from meaningbench.ops.importing import import_job
from meaningbench.queries.import_preview import (
    LANGUAGE_CHOICES,
    MAPPED_FIELDS,
    Preview,
    build_preview,
    current_language,
    known_dimensions,
    make_mapping,
)
from meaningbench.ui.dialogs.dialog_terms import in_dialog_terms
from meaningbench.ui.widgets import choice_combo, is_enter
from meaningbench.ui.window_state import open_at
from meaningbench.ui.workers import JobFailure, JobHandle, cancel_job

if TYPE_CHECKING:
    from meaningbench.ops.importing import ImportReport
    from meaningbench.ui.context import StudyContext

FORMATS = (
    ("auto", "Detect"),
    ("csv", "CSV"),
    ("tsv", "TSV"),
    ("jsonl", "JSON lines"),
    ("csmd", "CSMD (original, simplification, label)"),
    ("pairs", "Pairs (one row per output)"),
    ("long", "Long (one row per rating)"),
    ("wide", "Wide (one row per rater, a column per dimension)"),
)
AUTO = "Automatic"
# What the file's ratings are (`--ratings`); None: inferred from the columns.
RATINGS: tuple[tuple[str | None, str], ...] = (
    (None, "Inferred from the columns"),
    ("per-rater", "Per rater, named (a rater column)"),
    ("anonymous", "Per rater, anonymous (one rating per row, raters unknown)"),
    ("aggregate", "Aggregate (one published label per item)"),
)
# How the file's rater ids meet those already in the study from another file.
KNOWN_RATERS: tuple[tuple[str, str], ...] = (
    ("ask", "Refuse the import, naming them"),
    ("same", "Are the same people"),
    ("own", "Are other people: their ids get the dataset's name before them"),
)
KIND_WORDS = {
    "named": "per-rater (named): each row is a named rater's rating",
    "anonymous": "per-rater (anonymous): each row is one rating by an unknown person",
    "aggregate": "aggregate: one published label per item",
}
FILE_FILTER = "Rating files (*.csv *.tsv *.txt *.jsonl *.json);;All files (*)"


class ImportDialog(QDialog):
    """Imports into the open study, or with `new_study` into a study the import makes
    there (named only once the import has committed); `study_made` then gives its path."""

    study_made = Signal(Path)

    def __init__(
        self,
        context: StudyContext,
        parent: QWidget | None = None,
        *,
        new_study: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.setWindowTitle("Import ratings")
        self.context = context
        self.new_study = new_study
        self.preview: Preview | None = None
        self.job: JobHandle | None = None
        self.report: ImportReport | None = None
        self.field_combos: dict[str, QComboBox] = {}
        self.dimension_combos: dict[str, QComboBox] = {}
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(150)
        self._refresh_timer.timeout.connect(self.refresh_preview)
        self._build()

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        top = self._build_file_form()
        mapping_scroll = self._build_mapping()
        split = self._build_preview(mapping_scroll)
        buttons = self._build_buttons()

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.report_view)
        layout.addLayout(buttons)
        open_at(self, QSize(1040, 640))
        self._update_buttons()

    def _build_file_form(self) -> QFormLayout:
        self.path_edit = QLineEdit()
        self.path_edit.setObjectName("importPath")
        self.path_edit.setPlaceholderText("A CSV, TSV or JSON-lines file of items and ratings")
        self.path_edit.editingFinished.connect(self.refresh_preview)
        # Enter in the path field previews and stops there, as in the merge dialog: the
        # import is asked for on purpose, after the preview, format and columns are seen.
        self.path_edit.installEventFilter(self)
        browse = QPushButton("Choose…")
        browse.clicked.connect(self.choose_file)
        browse.setAutoDefault(False)
        self.format_combo = QComboBox()
        for value, label in FORMATS:
            self.format_combo.addItem(label, value)
        self.format_combo.currentIndexChanged.connect(self._schedule)
        self.ratings_combo = choice_combo(
            "importRatings",
            RATINGS,
            "What a rating row is. An item's human score averages each rater's ratings "
            "first, then the raters; anonymous ratings each count as one rater.",
        )
        self.ratings_combo.currentIndexChanged.connect(self._schedule)
        self.raters_combo = choice_combo(
            "importKnownRaters",
            KNOWN_RATERS,
            "A rater id of this file that another imported file also has: the same person, or "
            "another (corpora often number their raters from 0 alike)?",
        )
        self.language_combo = QComboBox()
        self.language_combo.setObjectName("importLanguage")
        for code, words in LANGUAGE_CHOICES:
            self.language_combo.addItem(words, code)
        study = None if self.new_study is not None else self.context.study
        here = current_language(study) if study is not None else "en"
        self.language_combo.setCurrentIndex(max(0, self.language_combo.findData(here)))
        self.language_combo.setToolTip(
            "The language of the study's texts. It chooses BLEU's and SARI's tokenizer, "
            "ROUGE stemming (English only) and the readability formula (FKGL for English, "
            "the Wiener Sachtextformel for German); METEOR and SAMSA run on English only."
        )
        self.dataset_edit = QLineEdit()
        self.dataset_edit.setPlaceholderText("the file's name")
        self.system_edit = QLineEdit()
        self.system_edit.setPlaceholderText("from the file, when it has a system column")
        self.keep_attributes = QCheckBox("Keep the other columns as item attributes")
        self.keep_attributes.setObjectName("importKeepAttributes")
        self.keep_attributes.setChecked(True)
        self.keep_attributes.setToolTip(
            "Columns no field reads (a sentence type, a domain) become categories of the "
            "items: the browser filters by them and analyses break results down by them. "
            "Every row of an item must give the same value."
        )
        self.keep_attributes.toggled.connect(self._schedule)

        file_row = QHBoxLayout()
        file_row.addWidget(self.path_edit, 1)
        file_row.addWidget(browse)
        top = QFormLayout()
        top.addRow("File", file_row)
        top.addRow("Format", self.format_combo)
        top.addRow("Ratings", self.ratings_combo)
        top.addRow("Raters already in the study", self.raters_combo)
        top.addRow("Language", self.language_combo)
        top.addRow("Dataset", self.dataset_edit)
        top.addRow("System", self.system_edit)
        top.addRow("Other columns", self.keep_attributes)
        return top

    def _build_mapping(self) -> QScrollArea:
        """One column choice per field and per dimension the study knows."""
        self.mapping_box = QGroupBox("Columns")
        self.mapping_form = QFormLayout(self.mapping_box)
        for name, label in MAPPED_FIELDS:
            combo = self._column_combo()
            self.field_combos[name] = combo
            self.mapping_form.addRow(label, combo)
        for dim in known_dimensions(self.study_path):
            combo = self._column_combo()
            self.dimension_combos[dim] = combo
            self.mapping_form.addRow(f"{dim.capitalize()} ratings", combo)
        mapping_scroll = QScrollArea()
        mapping_scroll.setWidgetResizable(True)
        mapping_scroll.setWidget(self.mapping_box)
        mapping_scroll.setMinimumWidth(300)
        return mapping_scroll

    def _build_preview(self, mapping_scroll: QScrollArea) -> QSplitter:
        self.table = QTableWidget()
        self.table.setObjectName("importPreview")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.plan_label = QLabel()
        self.plan_label.setObjectName("planLabel")
        self.plan_label.setWordWrap(True)
        self.plan_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel()
        self.error_label.setObjectName("importError")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setProperty("role", "error")  # coloured per theme by the style sheet
        self.error_label.hide()
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(0, 0, 0, 0)
        right_box.addWidget(QLabel("First rows"))
        right_box.addWidget(self.table, 1)
        right_box.addWidget(self.plan_label)
        right_box.addWidget(self.error_label)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(mapping_scroll)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([320, 700])
        return split

    def _build_buttons(self) -> QHBoxLayout:
        self.report_view = QPlainTextEdit()
        self.report_view.setObjectName("importReport")
        self.report_view.setReadOnly(True)
        self.report_view.setMaximumHeight(140)
        self.report_view.hide()
        self.import_button = QPushButton("Import")
        self.import_button.setDefault(True)
        self.import_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel import")
        self.cancel_button.clicked.connect(lambda: cancel_job(self.job))
        self.cancel_button.setEnabled(False)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.import_button, self.cancel_button, close):
            buttons.addWidget(b)
        return buttons

    def _column_combo(self) -> QComboBox:
        combo = QComboBox()
        combo.addItem(AUTO, None)
        combo.currentIndexChanged.connect(self._schedule)
        return combo

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.path_edit and is_enter(event):
            self.refresh_preview()
            return True
        return super().eventFilter(watched, event)

    # -- preview ----------------------------------------------------------------------

    def choose_file(self) -> None:
        start = str(self.study_path.parent) if self.study_path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Import ratings", start, FILE_FILTER)
        if path:
            self.set_file(Path(path))

    def set_file(self, path: Path) -> None:
        self.path_edit.setText(str(path))
        for combo in [*self.field_combos.values(), *self.dimension_combos.values()]:
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        self.refresh_preview()

    def _schedule(self) -> None:
        self._refresh_timer.start()

    def file_path(self) -> Path | None:
        text = self.path_edit.text().strip()
        return Path(text) if text else None

    def mapping(self) -> Any:
        fields = {n: c.currentData() for n, c in self.field_combos.items() if c.currentData()}
        dims = {n: c.currentData() for n, c in self.dimension_combos.items() if c.currentData()}
        return make_mapping(fields, dims)

    def dropped_columns(self) -> list[str] | None:
        """What the import drops of the columns no field reads: all of them, or none."""
        return None if self.keep_attributes.isChecked() else ["*"]

    def ratings_choice(self) -> str | None:
        value = self.ratings_combo.currentData()
        return str(value) if value else None

    def refresh_preview(self) -> None:
        self._refresh_timer.stop()
        path = self.file_path()
        if path is None:
            return
        fmt = str(self.format_combo.currentData())
        self.preview = build_preview(
            path,
            fmt,
            self.mapping(),
            self.study_path,
            ratings=self.ratings_choice(),
            drop=self.dropped_columns(),
        )
        self._show_preview(self.preview)

    def _show_preview(self, p: Preview) -> None:
        self._fill_column_choices(p.columns)
        matched = p.field_of()
        self.table.clear()
        self.table.setColumnCount(len(p.columns))
        self.table.setRowCount(len(p.rows))
        kept = set(p.attributes)
        headers = [
            f"{c}\n→ {matched[c]}"
            if c in matched
            else (f"{c}\n→ attribute" if c in kept else f"{c}\n(ignored)")
            for c in p.columns
        ]
        self.table.setHorizontalHeaderLabels(headers)
        for r, row in enumerate(p.rows):
            for c, value in enumerate(row[: len(p.columns)]):
                self.table.setItem(r, c, QTableWidgetItem(value))
            # The file's own row numbers, so "row 4" in an error is the row labelled 4 here.
            number = QTableWidgetItem(str(p.row_numbers[r]) if r < len(p.row_numbers) else "")
            number.setToolTip("Row in the file (the header is row 1)")
            self.table.setVerticalHeaderItem(r, number)
        for c in range(len(p.columns)):
            self.table.setColumnWidth(c, min(320, max(90, self.table.sizeHintForColumn(c) + 16)))
        if p.shape:
            used = ", ".join(
                f"{k} = {', '.join(v) if isinstance(v, list) else v}" for k, v in p.used.items()
            )
            how = "as chosen" if p.rating_kind_given else "inferred"
            kind = KIND_WORDS.get(p.rating_kind, p.rating_kind)
            text = f"<b>{p.container.upper()}, {p.shape} shape.</b> {used}"
            text += f"<br>Ratings ({how}): {kind}."
            if p.attributes:
                text += f"<br>Kept as item attributes: {', '.join(p.attributes)}"
            if p.ignored:
                text += f"<br>Not imported: {', '.join(p.ignored)}"
            self.plan_label.setText(text)
        else:
            self.plan_label.setText("")
        self.show_error(str(p.error) if p.error is not None else None)
        self._update_buttons()

    def _fill_column_choices(self, columns: list[str]) -> None:
        for combo in [*self.field_combos.values(), *self.dimension_combos.values()]:
            current = combo.currentData()
            existing = [combo.itemData(i) for i in range(1, combo.count())]
            if existing == columns:
                continue
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(AUTO, None)
            for col in columns:
                combo.addItem(col, col)
            combo.setCurrentIndex(max(0, combo.findData(current)) if current else 0)
            combo.blockSignals(False)

    def show_error(self, message: str | None) -> None:
        message = in_dialog_terms(message) if message else message
        self.error_label.setText(message or "")
        self.error_label.setVisible(bool(message))

    # -- the import -------------------------------------------------------------------

    @property
    def study_path(self) -> Path | None:
        return self.new_study if self.new_study is not None else self.context.path

    def start(self) -> JobHandle | None:
        path, study_path = self.file_path(), self.study_path
        if path is None or study_path is None or self.job is not None:
            return None
        fmt = str(self.format_combo.currentData())
        mapping = self.mapping()
        dataset = self.dataset_edit.text().strip() or None
        system = self.system_edit.text().strip() or None

        self.show_error(None)
        self.report_view.hide()
        self.job = self.context.runner.start(
            in_child_process(
                import_job,
                study_path,
                path,
                fmt,
                mapping,
                dataset,
                system,
                self.ratings_choice(),
                str(self.language_combo.currentData()),
                self.dropped_columns(),
                new=self.new_study is not None,
                same_raters=self.raters_combo.currentData() == "same",
                rater_prefix=f"{dataset or path.stem}:"
                if self.raters_combo.currentData() == "own"
                else "",
            ),
            title=f"Importing {path.name}",
            on_result=self._on_result,
            show_errors=False,
        )
        self.job.failed.connect(self._on_failed)
        self.job.finished.connect(self._on_finished)
        self._update_buttons()
        return self.job

    def _on_result(self, report: ImportReport) -> None:
        self.report = report
        self.report_view.setPlainText(in_dialog_terms("\n".join(report.summary_lines())))
        self.report_view.show()
        made, self.new_study = self.new_study, None
        if made is not None:
            self.study_made.emit(made)  # imports from now on go into it

    def _on_failed(self, failure: JobFailure) -> None:
        if failure.is_user_error:
            self.show_error(f"Nothing was imported. {failure.message}")
        else:
            from meaningbench.ui.dialogs.errors import show_failure

            self.show_error("Nothing was imported.")
            show_failure(self, failure)

    def _on_finished(self) -> None:
        if self.job is not None and self.job.outcome == "cancelled":
            self.show_error("Import cancelled; the study is unchanged.")
        self.job = None
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.job is not None
        ready = self.preview is not None and self.preview.error is None and bool(self.preview.shape)
        self.import_button.setEnabled(ready and not running)
        self.cancel_button.setEnabled(running)
