"""The study lead's annotation settings, as a widget the settings dialog embeds.

Three sections: the scales (dimensions), the queues (overlap, datasets, hidden QC items,
seed, order and which items first, diff highlighting) and the guidelines. A dialog that edits some of these
itself shows only the others (`sections=("queues",)`); `save()` writes only the sections
shown and keeps the file's values for the rest. Nothing reaches the study file before
that, except practice items (*Add practice items…*): they are the study's, not settings,
and are added at once. Queues already built keep their order and their control items (raters must not see
their queue reshuffled); new settings apply to new annotators and to items added later.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTableWidget,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from meaningbench.errors import UserError
from meaningbench.ops.practice import add_practice_items
from meaningbench.ops.settings import store_settings
from meaningbench.queries.annotation import (
    AFTER_FAILED_PRACTICE,
    MAX_QC_PER_100,
    PROTOCOLS,
    QC_KINDS,
    SCORELESS_SELECTIONS,
    SELECTIONS,
    AnnotationSettings,
    DimensionConfig,
    QCMix,
    read_practice_file,
    settings_view,
)
from meaningbench.queries.files import StudyHandle
from meaningbench.ui.widgets import say_in
from meaningbench.ui.workers import JobRunner

SCALE_CHOICES = (("continuous", "Slider 0–100"), ("likert", "Likert 1–5"))
QC_LABELS = {
    "degraded": "Degraded (a phrase swapped in)",
    "identical": "Identical (output = original)",
    "repeat": "Repeat of a rated item",
    "unrelated": "Unrelated real sentence",
    "word_soup": "Word soup",
}
COLUMNS = ("Active", "Dimension", "Scale", "Low end label", "High end label", "Question")


SECTIONS = ("scales", "queues", "guidelines")
# Stored with the scales: the protocol decides what the scales are.
PROTOCOL_FIELDS = ("protocol", "hidden_number", "esa_source_spans", "esa_prefill", "show_systems")
QUEUE_FIELDS = (
    "seed",
    "overlap_k",
    "pool_size",
    "qc_enabled",
    "qc",
    "diff_highlighting",
    "same_source_back_to_back",
    "datasets",
    "selection",
    "selection_metrics",
    "practice_pass_items",
    "practice_within",
    "practice_attempts",
    "practice_after_failed",
)


class AnnotationSettingsWidget(QWidget):
    changed = Signal()

    def __init__(
        self,
        study: StudyHandle,
        parent: QWidget | None = None,
        *,
        sections: tuple[str, ...] = SECTIONS,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.study = study
        # Writes run through the window's runner, which tells every screen once.
        self.runner = runner or JobRunner(self)
        self.sections = tuple(x for x in SECTIONS if x in sections)
        view = settings_view(study)
        self._loaded = view.settings
        self._datasets = view.datasets
        self._prefill_sources = view.prefill_sources
        self._selection_runs = view.selection_runs
        self._practice_items = view.practice_items
        pages = {
            "scales": (self._scales_tab(), "Scales"),
            "queues": (self._queue_tab(), "Queues and QC"),
            "guidelines": (self._guidelines_tab(), "Guidelines"),
        }
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for name, (page, _title) in pages.items():
            if name not in self.sections:  # kept (hidden) so that settings() reads it
                page.setParent(self)
                page.hide()
        if len(self.sections) == 1:
            layout.addWidget(pages[self.sections[0]][0])
        else:
            tabs = QTabWidget()
            for name in self.sections:
                tabs.addTab(*pages[name])
            layout.addWidget(tabs)
        self.error = QLabel()
        self.error.setProperty("role", "error")  # coloured per theme by the style sheet
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        self._load(self._loaded)

    # -- tabs ------------------------------------------------------------------------------

    def _scales_tab(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        form = QFormLayout()
        self.protocol = QComboBox()
        self.protocol.setObjectName("protocolChoice")
        for key, text in PROTOCOLS.items():
            self.protocol.addItem(f"{key} — {text}", key)
        self.protocol.setToolTip("Fixed once the study's raters have rated.")
        form.addRow("Protocol", self.protocol)
        self.hidden_number = QCheckBox(
            "Hide the number on the slider (the rater sees only the position)"
        )
        self.source_spans = QCheckBox("Error spans: omissions may be marked in the original too")
        form.addRow(self.hidden_number)
        form.addRow(self.source_spans)
        self.prefill = QComboBox()
        self.prefill.setObjectName("prefillChoice")
        self.prefill.setToolTip(
            "Error spans: show a judge's stored spans pre-marked, for the rater to keep, edit "
            "or delete. Score the items with llm_judge[template=esa] first."
        )
        form.addRow("Pre-fill error spans", self.prefill)
        self.show_systems = QCheckBox("Rater kits show which system wrote each output")
        self.show_systems.setObjectName("showSystems")
        self.show_systems.setToolTip(
            "Off (the default): kits leave the system names out, so raters rate blind, even "
            "one who opens the kit file. On: kits made from now on keep them. Kits already "
            "sent keep what they were made with; the rating screen never shows system names."
        )
        form.addRow(self.show_systems)
        v.addLayout(form)
        v.addWidget(QLabel("Raters see one scale per active dimension, in this order."))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setVisible(False)
        v.addWidget(self.table, 1)
        return page

    def _queue_tab(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.addWidget(self._overlap_group())
        v.addWidget(self._qc_group())
        v.addWidget(self._practice_group())
        v.addWidget(self._order_group())
        note = QLabel(
            "Queues already started keep their order and control items; changes apply to "
            "new annotators and to items added later."
        )
        note.setWordWrap(True)
        v.addWidget(note)
        v.addStretch(1)
        return page

    def _overlap_group(self) -> QGroupBox:
        overlap = QGroupBox("Who rates what")
        f = QFormLayout(overlap)
        self.all_items = QRadioButton("Every annotator rates every item")
        self.k_items = QRadioButton("Each item is rated by")
        group = QButtonGroup(self)
        group.addButton(self.all_items)
        group.addButton(self.k_items)
        self.k = QSpinBox()
        self.k.setRange(1, 99)
        self.pool = QSpinBox()
        self.pool.setRange(1, 999)
        row = QHBoxLayout()
        row.addWidget(self.k_items)
        row.addWidget(self.k)
        row.addWidget(QLabel("of a pool of"))
        row.addWidget(self.pool)
        row.addWidget(QLabel("annotators"))
        row.addStretch(1)
        f.addRow(self.all_items)
        f.addRow(row)
        self.dataset_list = QListWidget()
        self.dataset_list.setMaximumHeight(110)
        for name in self._datasets:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            self.dataset_list.addItem(item)
        f.addRow("Datasets in the queues", self.dataset_list)
        return overlap

    def _qc_group(self) -> QGroupBox:
        qc = QGroupBox("Hidden control items (per 100 queue entries)")
        qf = QFormLayout(qc)
        self.qc_enabled = QCheckBox("Mix control items into every queue")
        qf.addRow(self.qc_enabled)
        self.qc_spins: dict[str, QSpinBox] = {}
        for kind in QC_KINDS:
            spin = QSpinBox()
            spin.setRange(0, MAX_QC_PER_100)
            spin.valueChanged.connect(self._update_normal)
            self.qc_spins[kind] = spin
            qf.addRow(QC_LABELS[kind], spin)
        self.normal_label = QLabel()
        qf.addRow("Normal items", self.normal_label)
        self.qc_enabled.toggled.connect(self._update_normal)
        return qc

    def _practice_group(self) -> QGroupBox:
        """The practice pass mark: K of the practice items within N points of their range in
        one attempt, in A attempts, then stop or flag (`meaningbench.annotation.practice`)."""
        box = QGroupBox("Practice pass mark")
        box.setObjectName("practicePassMark")
        f = QFormLayout(box)
        self.pass_mark = QCheckBox("Raters must pass the practice before they rate")
        self.pass_mark.setObjectName("practicePassMarkOn")
        self.pass_items = QSpinBox()
        self.pass_within = QDoubleSpinBox()
        self.pass_within.setRange(0.0, 100.0)
        self.pass_within.setDecimals(1)
        self.pass_attempts = QSpinBox()
        self.pass_attempts.setRange(1, 20)
        self.after_failed = QComboBox()
        for key, words in AFTER_FAILED_PRACTICE.items():
            self.after_failed.addItem(f"{key}: {words}", key)
        self.practice_count = QLabel()
        row = QHBoxLayout()
        for w in (
            self.pass_items,
            self.practice_count,
            self.pass_within,
            QLabel("points of the expected range, in at most"),
            self.pass_attempts,
            QLabel("attempts"),
        ):
            row.addWidget(w)
        row.addStretch(1)
        f.addRow(self.pass_mark)
        f.addRow(row)
        f.addRow("After the last failed attempt", self.after_failed)
        f.addRow(self._practice_adding())
        self._show_practice_count()
        self.pass_mark.toggled.connect(self._update_practice)
        return box

    def _practice_adding(self) -> QWidget:
        # Practice items are the study's, not a setting: they are added at once, and
        # Cancel does not take them back (as `meaningbench practice STUDY --add` would).
        self.add_practice_button = QPushButton("Add practice items…")
        self.add_practice_button.setObjectName("addPracticeItems")
        self.add_practice_button.setToolTip(
            "Add practice pairs from a CSV file with columns source, output, low, high and, "
            "optionally, explanation. They are added to the study at once."
        )
        self.add_practice_button.clicked.connect(self.choose_practice_file)
        self.practice_note = QLabel()
        self.practice_note.setWordWrap(True)
        self.practice_note.hide()
        holder = QWidget()
        v = QVBoxLayout(holder)
        v.setContentsMargins(0, 0, 0, 0)
        line = QHBoxLayout()
        line.addWidget(self.add_practice_button)
        line.addStretch(1)
        v.addLayout(line)
        v.addWidget(self.practice_note)
        return holder

    def _show_practice_count(self) -> None:
        n = self._practice_items
        self.pass_items.setRange(1, max(1, n))
        self.practice_count.setText(f"of the {n} practice item{'' if n == 1 else 's'} within")
        self.pass_mark.setToolTip("" if n else "Add practice items first: Add practice items…")

    def choose_practice_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add practice items", str(self.study.path.parent), "CSV (*.csv);;All files (*)"
        )
        if path:
            self.add_practice_file(Path(path))

    def add_practice_file(self, path: Path) -> int:
        """Add the practice pairs of the CSV at `path` to the study, all or none; the number
        added (0 when the file is refused, its reason shown under the button)."""
        try:
            added = self.runner.run_now(add_practice_items(self.study, read_practice_file(path)))
        except UserError as exc:
            say_in(self.practice_note, str(exc), error=True)
            return 0
        self._practice_items = settings_view(self.study).practice_items
        self._show_practice_count()
        if not self.pass_mark.isChecked():  # a pass mark starts out of all of them
            self.pass_items.setValue(self._practice_items)
        self._update_practice()
        say_in(
            self.practice_note,
            f"Added {added} practice item{'' if added == 1 else 's'} from {path.name}.",
            error=False,
        )
        return added

    def _update_practice(self, *_args: object) -> None:
        on = self.pass_mark.isChecked()
        for w in (self.pass_items, self.pass_within, self.pass_attempts, self.after_failed):
            w.setEnabled(on)
        # Without practice items no pass mark can be reached: only one stored is shown.
        self.pass_mark.setEnabled(bool(self._practice_items) or on)

    def _order_group(self) -> QGroupBox:
        order = QGroupBox("Order and display")
        of = QFormLayout(order)
        seed_row = QHBoxLayout()
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        new_seed = QPushButton("New seed")
        new_seed.clicked.connect(lambda: self.seed.setValue(secrets.randbits(31)))
        seed_row.addWidget(self.seed)
        seed_row.addWidget(new_seed)
        seed_row.addStretch(1)
        of.addRow("Random seed", seed_row)
        self.back_to_back = QCheckBox("Outputs of the same original may come back to back")
        of.addRow(self.back_to_back)
        self.selection = QComboBox()
        self.selection.setObjectName("selectionChoice")
        for key, text in SELECTIONS.items():
            self.selection.addItem(f"{key} — {text}", key)
        self.selection.setToolTip(
            "Chosen from the stored metric scores (balanced: the systems) only, never from "
            "ratings; "
            "`meaningbench simulate` shows on a pilot how soon each one settles the ranking."
        )
        of.addRow("Items first", self.selection)
        self.selection_list = QListWidget()
        self.selection_list.setObjectName("selectionMetrics")
        self.selection_list.setMaximumHeight(90)
        for label in self._selection_runs:
            item = QListWidgetItem(label)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            self.selection_list.addItem(item)
        self.selection_note = QLabel("No finished metric run yet: score the study first.")
        of.addRow("From the scores of", self.selection_list)
        of.addRow("", self.selection_note)
        self.selection.currentIndexChanged.connect(self._update_selection)
        self.highlight = QCheckBox("Highlight word differences between original and output")
        self.highlight.setToolTip("Off by default: highlighting can steer raters to the changes.")
        of.addRow(self.highlight)
        return order

    def _guidelines_tab(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.addWidget(QLabel("Guidelines for raters (Markdown); G opens them on the rating screen."))
        h = QHBoxLayout()
        self.guidelines = QPlainTextEdit()
        self.preview = QTextBrowser()
        self.guidelines.textChanged.connect(
            lambda: self.preview.setMarkdown(self.guidelines.toPlainText())
        )
        h.addWidget(self.guidelines, 1)
        h.addWidget(self.preview, 1)
        v.addLayout(h, 1)
        return page

    # -- values ----------------------------------------------------------------------------

    def _load(self, st: AnnotationSettings) -> None:
        self.protocol.setCurrentIndex(max(0, self.protocol.findData(st.protocol)))
        self.hidden_number.setChecked(st.hidden_number)
        self.source_spans.setChecked(st.esa_source_spans)
        self.show_systems.setChecked(st.show_systems)
        self._load_prefill(st)
        self._table_dims = list(st.dimensions)  # the rows of the table, in order
        self.table.setRowCount(len(st.dimensions))
        for r, d in enumerate(st.dimensions):
            active = QCheckBox()
            active.setChecked(d.active)
            self.table.setCellWidget(r, 0, active)
            name = QLabel(d.name)
            self.table.setCellWidget(r, 1, name)
            combo = QComboBox()
            for key, label in SCALE_CHOICES:
                combo.addItem(label, key)
            combo.setCurrentIndex(max(0, combo.findData(d.scale)))
            self.table.setCellWidget(r, 2, combo)
            for c, text in ((3, d.label_low), (4, d.label_high), (5, d.question)):
                self.table.setCellWidget(r, c, QLineEdit(text))
        self.table.resizeColumnsToContents()
        self.highlight.setChecked(st.diff_highlighting)
        self.all_items.setChecked(st.overlap_k is None)
        self.k_items.setChecked(st.overlap_k is not None)
        self.k.setValue(st.overlap_k or 2)
        self.pool.setValue(st.pool_size)
        for i in range(self.dataset_list.count()):
            item = self.dataset_list.item(i)
            on = st.datasets is None or item.text() in st.datasets
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.qc_enabled.setChecked(st.qc_enabled)
        for kind, spin in self.qc_spins.items():
            spin.setValue(getattr(st.qc, kind))
        self.seed.setValue(st.seed if st.seed is not None else secrets.randbits(31))
        self.back_to_back.setChecked(st.same_source_back_to_back)
        self.selection.setCurrentIndex(max(0, self.selection.findData(st.selection)))
        for i in range(self.selection_list.count()):
            item = self.selection_list.item(i)
            on = st.selection_metrics is None or item.text() in st.selection_metrics
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self._update_selection()
        self.pass_mark.setChecked(st.practice_pass_items is not None)
        self.pass_items.setValue(st.practice_pass_items or self._practice_items)
        self.pass_within.setValue(float(st.practice_within))
        self.pass_attempts.setValue(st.practice_attempts)
        self.after_failed.setCurrentIndex(
            max(0, self.after_failed.findData(st.practice_after_failed))
        )
        self._update_practice()
        self.guidelines.setPlainText(st.guidelines)
        self._update_normal()

    def _update_normal(self, *_args: object) -> None:
        mix = QCMix(**{k: s.value() for k, s in self.qc_spins.items()})
        for spin in self.qc_spins.values():
            spin.setEnabled(self.qc_enabled.isChecked())
        self.normal_label.setText(
            f"{mix.normal()} of 100" if self.qc_enabled.isChecked() else "100 of 100 (no controls)"
        )
        self.changed.emit()

    def _update_selection(self, *_args: object) -> None:
        chosen = self.selection.currentData() not in SCORELESS_SELECTIONS
        self.selection_list.setEnabled(chosen)
        self.selection_note.setVisible(chosen and not self._selection_runs)

    def _selection_metrics(self) -> list[str] | None:
        """The checked runs; None when all are (every finished run, later ones too)."""
        checked = [
            self.selection_list.item(i).text()
            for i in range(self.selection_list.count())
            if self.selection_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        if len(checked) == self.selection_list.count():
            return None
        # A stored choice whose run is gone (not in the list) is kept, as the prefill is.
        kept = [m for m in self._loaded.selection_metrics or [] if m not in self._selection_runs]
        return [*kept, *checked]

    def settings(self) -> AnnotationSettings:
        """The settings as the widget shows them (not yet written)."""
        dims = []
        for r, d in enumerate(self._table_dims):
            active = self.table.cellWidget(r, 0)
            combo = self.table.cellWidget(r, 2)
            low, high, question = (self.table.cellWidget(r, c) for c in (3, 4, 5))
            dims.append(
                DimensionConfig(
                    name=d.name,
                    scale=str(combo.currentData()),  # type: ignore[attr-defined]
                    active=active.isChecked(),  # type: ignore[attr-defined]
                    label_low=low.text(),  # type: ignore[attr-defined]
                    label_high=high.text(),  # type: ignore[attr-defined]
                    question=question.text(),  # type: ignore[attr-defined]
                    position=d.position,
                )
            )
        checked = [
            self.dataset_list.item(i).text()
            for i in range(self.dataset_list.count())
            if self.dataset_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        return AnnotationSettings(
            seed=self.seed.value(),
            overlap_k=self.k.value() if self.k_items.isChecked() else None,
            pool_size=self.pool.value(),
            qc_enabled=self.qc_enabled.isChecked(),
            qc=QCMix(**{k: s.value() for k, s in self.qc_spins.items()}),
            guidelines=self.guidelines.toPlainText(),
            diff_highlighting=self.highlight.isChecked(),
            same_source_back_to_back=self.back_to_back.isChecked(),
            datasets=None if len(checked) == len(self._datasets) else checked,
            dimensions=dims,
            protocol=str(self.protocol.currentData()),
            hidden_number=self.hidden_number.isChecked(),
            esa_source_spans=self.source_spans.isChecked(),
            esa_prefill=self.prefill.currentData(),
            show_systems=self.show_systems.isChecked(),
            selection=str(self.selection.currentData()),
            selection_metrics=self._selection_metrics(),
            practice_pass_items=self.pass_items.value() if self.pass_mark.isChecked() else None,
            practice_within=float(self.pass_within.value()),
            practice_attempts=self.pass_attempts.value(),
            practice_after_failed=str(self.after_failed.currentData()),
        )

    def _load_prefill(self, st: AnnotationSettings) -> None:
        self.prefill.clear()
        self.prefill.addItem("none: raters start with no spans", None)
        sources = list(self._prefill_sources)
        if st.esa_prefill is not None and st.esa_prefill not in sources:
            sources.append(st.esa_prefill)  # its run is gone, but the setting stands
        for source in sources:
            self.prefill.addItem(source.describe(), source)
        chosen = sources.index(st.esa_prefill) + 1 if st.esa_prefill is not None else 0
        self.prefill.setCurrentIndex(chosen)

    def fields(self) -> dict[str, tuple[str, ...]]:
        """The settings' fields the shown sections write; the others keep the file's values
        (another tab of the dialog may have changed them since this widget was opened)."""
        chosen = {
            "scales": ("dimensions", *PROTOCOL_FIELDS),
            "queues": QUEUE_FIELDS,
            "guidelines": ("guidelines",),
        }
        return {k: v for k, v in chosen.items() if k in self.sections}

    def save(self) -> None:
        """Write the shown sections to the study; raises UserError when they are invalid."""
        self.runner.run_now(store_settings(self.study, self.settings(), self.fields()))

    def apply(self) -> bool:
        """`save()`, showing the reason in the widget instead of raising; False if refused."""
        try:
            self.save()
        except UserError as exc:
            return self.show_refusal(exc)
        return self.show_refusal(None)

    def show_refusal(self, exc: UserError | None) -> bool:
        """Say why the study refused the sections (hide it when stored); False if refused."""
        if exc is None:
            self.error.hide()
            return True
        self.error.setText(str(exc))
        self.error.show()
        return False
