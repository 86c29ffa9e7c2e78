"""Study settings: name, guidelines (Markdown with a live preview), rating dimensions, and
the annotation protocol (overlap, QC, seed, annotators) from the annotation screen's widget.

Guidelines and dimensions are stored through `app.annotation.settings`, the same code the
annotation engine reads them with.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.ui.dialogs.errors import show_exception
from app.ui.study_info import NAME_KEY, get_setting, set_setting

if TYPE_CHECKING:
    from app.annotation.settings import AnnotationSettings, DimensionConfig
    from app.ui.context import StudyContext

SCALES = (("continuous", "Continuous 0–100"), ("likert", "Likert 1–5"))
DIM_COLUMNS = ("Active", "Name", "Scale", "Question", "Low end", "High end")
WIDGET_MODULES = ("app.ui.annotation.settings", "app.ui.annotation.settings_widget",
                  "app.ui.annotation.screen", "app.ui.annotation")  # fmt: skip


def annotation_settings_widget_class() -> type | None:
    for name in WIDGET_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        cls = getattr(module, "AnnotationSettingsWidget", None)
        if cls is not None:
            return cls  # type: ignore[no-any-return]
    return None


class DimensionTable(QTableWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(DIM_COLUMNS), parent)
        self.setObjectName("dimensionTable")
        self.setHorizontalHeaderLabels(list(DIM_COLUMNS))
        self.verticalHeader().hide()
        hh = self.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self._positions: list[int] = []

    def set_dimensions(self, dims: list[DimensionConfig]) -> None:
        self.setRowCount(0)
        self._positions = []
        for d in dims:
            self.add_dimension(d.name, d.scale, d.active, d.question, d.label_low, d.label_high)

    def add_dimension(
        self,
        name: str,
        scale: str = "continuous",
        active: bool = True,
        question: str = "",
        low: str = "",
        high: str = "",
        *,
        editable_name: bool = False,
    ) -> int:
        row = self.rowCount()
        self.insertRow(row)
        check = QCheckBox()
        check.setChecked(active)
        holder = QWidget()
        box = QHBoxLayout(holder)
        box.setContentsMargins(8, 0, 8, 0)
        box.addWidget(check, 0, Qt.AlignmentFlag.AlignCenter)
        self.setCellWidget(row, 0, holder)
        name_item = QTableWidgetItem(name)
        if not editable_name:
            name_item.setFlags(name_item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        self.setItem(row, 1, name_item)
        combo = QComboBox()
        for value, label in SCALES:
            combo.addItem(label, value)
        combo.setCurrentIndex(max(0, combo.findData(scale)))
        self.setCellWidget(row, 2, combo)
        for col, text in ((3, question), (4, low), (5, high)):
            self.setItem(row, col, QTableWidgetItem(text))
        return row

    def active_box(self, row: int) -> QCheckBox:
        holder = self.cellWidget(row, 0)
        box = holder.findChild(QCheckBox) if holder is not None else None
        assert box is not None
        return box

    def scale_combo(self, row: int) -> QComboBox:
        combo = self.cellWidget(row, 2)
        assert isinstance(combo, QComboBox)
        return combo

    def dimensions(self) -> list[DimensionConfig]:
        from app.annotation.settings import DimensionConfig

        out = []
        for row in range(self.rowCount()):
            name = (self.item(row, 1).text() if self.item(row, 1) else "").strip().lower()
            if not name:
                continue
            out.append(
                DimensionConfig(
                    name=name,
                    scale=str(self.scale_combo(row).currentData()),
                    active=self.active_box(row).isChecked(),
                    question=self._text(row, 3),
                    label_low=self._text(row, 4),
                    label_high=self._text(row, 5),
                    position=row,
                )
            )
        return out

    def _text(self, row: int, col: int) -> str:
        item = self.item(row, col)
        return item.text().strip() if item is not None else ""


class StudySettingsDialog(QDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("studySettingsDialog")
        self.setWindowTitle("Study settings")
        self.context = context
        self.annotation_widget: QWidget | None = None
        self._build()
        self.load()

    def _build(self) -> None:
        self.tabs = QTabWidget()
        # Study
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("studyName")
        self.path_label = QLabel()
        self.path_label.setObjectName("mutedLabel")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        study_tab = QWidget()
        form = QFormLayout(study_tab)
        form.addRow("Name", self.name_edit)
        form.addRow("File", self.path_label)
        self.tabs.addTab(study_tab, "Study")
        # Guidelines
        self.guidelines_edit = QPlainTextEdit()
        self.guidelines_edit.setObjectName("guidelinesEditor")
        self.guidelines_edit.setPlaceholderText("Guidelines for raters, in Markdown")
        self.preview = QTextBrowser()
        self.preview.setObjectName("guidelinesPreview")
        self.preview.setOpenExternalLinks(True)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.guidelines_edit)
        split.addWidget(self.preview)
        split.setSizes([1, 1])
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(200)
        self._preview_timer.timeout.connect(self.update_preview)
        self.guidelines_edit.textChanged.connect(self._preview_timer.start)
        guide_tab = QWidget()
        guide_box = QVBoxLayout(guide_tab)
        hint = QLabel(
            "Markdown: # headings, **bold**, *italic*, - lists. Raters can open them while rating."
        )
        hint.setObjectName("mutedLabel")
        guide_box.addWidget(hint)
        guide_box.addWidget(split, 1)
        self.tabs.addTab(guide_tab, "Guidelines")
        # Dimensions
        self.dim_table = DimensionTable()
        add = QPushButton("Add dimension")
        add.clicked.connect(
            lambda: self.dim_table.editItem(
                self.dim_table.item(self.dim_table.add_dimension("", editable_name=True), 1)
            )
        )
        dim_tab = QWidget()
        dim_box = QVBoxLayout(dim_tab)
        note = QLabel(
            "Active dimensions get a slider each on the rating screen. A dimension that "
            "already has ratings keeps its scale."
        )
        note.setObjectName("mutedLabel")
        note.setWordWrap(True)
        dim_box.addWidget(note)
        dim_box.addWidget(self.dim_table, 1)
        dim_box.addWidget(add, 0, Qt.AlignmentFlag.AlignLeft)
        self.tabs.addTab(dim_tab, "Dimensions")
        # Annotation protocol, from the annotation screen's package
        cls = annotation_settings_widget_class()
        if cls is not None and self.context.study is not None:
            try:
                self.annotation_widget = cls(self.context.study, self)
            except Exception as exc:  # its failure must not cost the rest of the dialog
                show_exception(self, "Annotation settings", exc)
            else:
                self.tabs.addTab(self.annotation_widget, "Annotation")

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.Apply
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.save)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        self.resize(860, 560)

    def load(self) -> None:
        study = self.context.study
        if study is None:
            return
        from app.annotation.settings import load_settings

        self.name_edit.setText(str(get_setting(study, NAME_KEY, "") or study.path.stem))
        self.path_label.setText(str(study.path))
        with study.session() as s:
            settings = load_settings(s)
        self.guidelines_edit.setPlainText(settings.guidelines)
        self.dim_table.set_dimensions(settings.dimensions)
        self.update_preview()

    def update_preview(self) -> None:
        self.preview.setMarkdown(self.guidelines_edit.toPlainText())

    def save(self) -> bool:
        """Store every tab; a refused change (a scale that has ratings) shows why and stays."""
        study = self.context.study
        if study is None:
            return False
        from app.annotation.settings import load_settings, save_settings

        try:
            self._save_annotation_widget()
            name = self.name_edit.text().strip()
            set_setting(study, NAME_KEY, name or None)
            with study.session() as s:
                settings: AnnotationSettings = load_settings(s)
                settings.guidelines = self.guidelines_edit.toPlainText()
                settings.dimensions = self.dim_table.dimensions()
                save_settings(s, settings)
        except Exception as exc:
            show_exception(self, "Cannot save the settings", exc)
            return False
        self.context.settings_changed.emit()
        return True

    def _save_annotation_widget(self) -> None:
        # The protocol widget saves first: ours reloads afterwards and only sets its fields.
        widget: Any = self.annotation_widget
        if widget is None:
            return
        for name in ("save", "apply"):
            method = getattr(widget, name, None)
            if callable(method):
                method()
                return

    def accept(self) -> None:
        if self.save():
            super().accept()
