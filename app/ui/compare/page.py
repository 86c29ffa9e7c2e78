"""The comparison view for one source sentence, and the page that hosts it in the window.

Every system's output of the source side by side with its human ratings and every metric's
value (sortable), each output as a word diff against the source; below, for the selected
output, the explanation of any of its scores (as its metric's `explain` hook gives it), and
the source's scenes with a live preview of what they give the output.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries import compare as compare_data
from meaningbench.queries.scenes import preview_details
from meaningbench.queries.word_diff import diff_html, inline_diff
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.compare.columns import ColumnFitter
from meaningbench.ui.compare.explain_view import ExplainView
from meaningbench.ui.compare.html_delegate import HtmlDelegate
from meaningbench.ui.compare.samsa_view import SamsaView
from meaningbench.ui.compare.scene_editor import SceneEditor
from meaningbench.ui.compare.systems_model import (
    HTML_ROLE,
    ITEM_ID_ROLE,
    SystemsModel,
    SystemsProxy,
)
from meaningbench.ui.workers import JobRunner

SOURCE_LABEL_CHARS = 110
TAB_OUTPUT, TAB_EXPLAIN, TAB_SCENES = range(3)


class CompareView(QWidget):
    """One source at a time; `show_source_group` and `show_item` navigate."""

    source_changed = Signal(str)  # source group
    item_selected = Signal(int)

    def __init__(
        self, study: Any = None, parent: QWidget | None = None, *, runner: JobRunner | None = None
    ) -> None:
        super().__init__(parent)
        self.study = study
        self.runner = runner
        self.group: str | None = None
        self.comparison: compare_data.SourceComparison | None = None
        self.dimension = "meaning"
        self._build()
        self.set_study(study)

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        bar = self._build_navigation()
        self.source_text = QLabel()
        self.source_text.setObjectName("compareSource")
        self.source_text.setWordWrap(True)
        self.source_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.source_text.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.source_text.setFont(font)
        self._build_table()
        self._build_details()

        # The details may shrink below their tabs' natural minimum (the scene editor's is
        # about 330 px): on a 640 px screen the table of outputs needs that height more.
        self.tabs.setMinimumHeight(140)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 4)
        self.splitter = split

        self.empty_label = QLabel()
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.source_text)
        layout.addWidget(self.empty_label)
        layout.addWidget(split, 1)

    def _build_navigation(self) -> QHBoxLayout:
        """The bar above: which source, previous and next, which rating dimension."""
        self.source_combo = QComboBox()
        self.source_combo.setEditable(True)
        self.source_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.source_combo.setMinimumContentsLength(24)
        self.source_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        completer = self.source_combo.completer()
        assert completer is not None  # an editable combo box has one
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.source_combo.activated.connect(self._on_source_index)
        self.prev_button = QToolButton()
        self.prev_button.setText("◀")
        self.prev_button.setToolTip("Previous source (Alt+Left)")
        self.prev_button.setShortcut("Alt+Left")
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button = QToolButton()
        self.next_button.setText("▶")
        self.next_button.setToolTip("Next source (Alt+Right)")
        self.next_button.setShortcut("Alt+Right")
        self.next_button.clicked.connect(lambda: self.step(1))
        self.position_label = QLabel()
        self.dimension_combo = QComboBox()
        self.dimension_combo.currentTextChanged.connect(self._on_dimension)

        bar = QHBoxLayout()
        bar.addWidget(QLabel("Source"))
        bar.addWidget(self.source_combo, 1)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.next_button)
        bar.addWidget(self.position_label)
        bar.addSpacing(16)
        bar.addWidget(QLabel("Ratings"))
        bar.addWidget(self.dimension_combo)
        return bar

    def _build_table(self) -> None:
        """Every system's output of the source, a row each, sortable by any column."""
        self.model = SystemsModel(self)
        self.proxy = SystemsProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setObjectName("compareTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setItemDelegateForColumn(1, HtmlDelegate(HTML_ROLE, self.table))
        self.table.horizontalHeader().sectionResized.connect(
            lambda *_: QTimer.singleShot(0, self.table.resizeRowsToContents)
        )
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._on_row())
        self.columns = ColumnFitter(self.table, output_column=1)
        # Rows grow when the columns narrow (the output wraps): the table's share of the
        # height is recomputed after them, once per burst of row changes.
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_table)
        self.table.verticalHeader().sectionResized.connect(lambda *_: self._fit_timer.start())

    def _build_details(self) -> None:
        """The tabs on the selected output: its texts, the explanation of a score, scenes."""
        self.output_view = QTextBrowser()
        self.explain = ExplainView()
        self.scene_editor = SceneEditor(self.study, runner=self.runner)
        self.scene_editor.scenes_saved.connect(lambda _g: self._scenes_saved())
        self.scene_editor.scenes_edited.connect(self._show_scene_preview)
        self.scene_preview = SamsaView()
        scene_split = QSplitter(Qt.Orientation.Horizontal)
        scene_split.addWidget(self.scene_editor)
        scene_split.addWidget(self.scene_preview)
        scene_split.setSizes([560, 520])

        self.tabs = QTabWidget()
        self.tabs.addTab(self.output_view, "Output and references")
        self.tabs.addTab(self.explain, "Explain a score")
        self.tabs.addTab(scene_split, "Scenes")
        self.tabs.currentChanged.connect(lambda *_: self._update_detail())

    # -- study and navigation -----------------------------------------------------------

    def reload_sources(self) -> None:
        """Re-read the list of sources (an import added some), staying on the current one."""
        group, item = self.group, self.current_item_id()
        self.set_study(self.study)
        if group is not None and self.source_index(group) >= 0:
            self.show_source_group(group, item_id=item)

    def set_study(self, study: Any) -> None:
        self.study = study
        self.scene_editor.study = study
        self.group = None
        self.sources: list[compare_data.SourceEntry] = []
        if study is not None:
            overview = compare_data.overview(study)
            self.sources, dims = overview.sources, overview.dimensions
        else:
            dims = []
        self.dimension_combo.blockSignals(True)
        self.dimension_combo.clear()
        self.dimension_combo.addItems(dims)
        if self.dimension in dims:
            self.dimension_combo.setCurrentText(self.dimension)
        elif dims:
            self.dimension = dims[0]
        self.dimension_combo.blockSignals(False)
        self.source_combo.blockSignals(True)
        self.source_combo.clear()
        for entry in self.sources:
            label = entry.source
            if len(label) > SOURCE_LABEL_CHARS:
                label = label[: SOURCE_LABEL_CHARS - 1] + "…"
            self.source_combo.addItem(f"{label}  ({entry.n_items})", entry.source_group)
        self.source_combo.blockSignals(False)
        if self.sources:
            self.show_source_group(self.sources[0].source_group)
        else:
            self._show_empty(
                "Open a study with items to compare systems."
                if study is None
                else "This study has no items yet: import a dataset first."
            )

    def _show_empty(self, message: str) -> None:
        self.model.set_comparison(None)
        self.comparison = None
        self.source_text.clear()
        self.empty_label.setText(message)
        self.empty_label.setVisible(True)
        self.splitter.setVisible(False)
        self.position_label.clear()

    def source_index(self, group: str) -> int:
        return next((k for k, e in enumerate(self.sources) if e.source_group == group), -1)

    def step(self, delta: int) -> None:
        if not self.sources:
            return
        k = self.source_index(self.group) if self.group else -1
        self.show_source_group(self.sources[(k + delta) % len(self.sources)].source_group)

    def _on_source_index(self, index: int) -> None:
        group = self.source_combo.itemData(index)
        if group:
            self.show_source_group(str(group))

    def _on_dimension(self, name: str) -> None:
        if name and name != self.dimension:
            self.dimension = name
            self.refresh()

    def show_source_group(self, source_group: str, *, item_id: int | None = None) -> None:
        """Show every system's output of one source; select `item_id` when given."""
        if self.study is None:
            return
        comparison = compare_data.comparison(self.study, source_group, self.dimension)
        self.group = source_group
        self.comparison = comparison
        if not comparison.rows:
            self._show_empty("No regular items for this source.")
            return
        self.empty_label.setVisible(False)
        self.splitter.setVisible(True)
        self.source_text.setText(comparison.source)
        k = self.source_index(source_group)
        if k >= 0:
            self.source_combo.blockSignals(True)
            self.source_combo.setCurrentIndex(k)
            self.source_combo.blockSignals(False)
            self.position_label.setText(f"{k + 1} of {len(self.sources)}")
        dark = self.palette().base().color().lightness() < 128
        keep = self.current_item_id() if item_id is None else item_id
        self.model.set_comparison(comparison, dark=dark)
        self.columns.fit()
        QTimer.singleShot(0, self.fit_table)
        self.scene_editor.set_source(source_group, comparison.source)
        self.source_changed.emit(source_group)
        self.select_item(keep if keep in {r.item_id for r in comparison.rows} else None)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        # A smaller window must not leave the table a row high: share the height again.
        self._fit_timer.start()

    def fit_table(self) -> None:
        """Give the table the height its rows need (at most 55 %), the details the rest."""
        total = sum(self.splitter.sizes())
        if total <= 0:
            return
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(r) for r in range(self.proxy.rowCount()))
        scrollbar = self.table.horizontalScrollBar()
        extra = scrollbar.sizeHint().height() if scrollbar.isVisible() else 0
        need = rows + self.table.horizontalHeader().height() + 2 * self.table.frameWidth() + extra
        header_h = self.table.horizontalHeader().height()
        three_rows = header_h + sum(
            self.table.rowHeight(r) for r in range(min(3, self.proxy.rowCount()))
        )
        top = max(
            120,
            min(need + 2, max(int(total * 0.55), min(three_rows + extra + 4, int(total * 0.7)))),
        )
        self.splitter.setSizes([top, total - top])

    def show_item(self, item_id: int) -> None:
        """Open the source of an item and select that item's row."""
        if self.study is None:
            return
        group = compare_data.group_of_item(self.study, item_id)
        if group is not None:
            self.show_source_group(group, item_id=item_id)

    def refresh(self) -> None:
        """Re-read the current source (ratings or scores changed)."""
        if self.group is not None:
            self.show_source_group(self.group, item_id=self.current_item_id())

    def select_item(self, item_id: int | None) -> None:
        row = 0
        if item_id is not None:
            for r in range(self.proxy.rowCount()):
                if self.proxy.index(r, 0).data(ITEM_ID_ROLE) == item_id:
                    row = r
                    break
        if self.proxy.rowCount():
            self.table.selectionModel().setCurrentIndex(
                self.proxy.index(row, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
        self._update_detail()

    def current_item_id(self) -> int | None:
        index = self.table.selectionModel().currentIndex()
        return index.data(ITEM_ID_ROLE) if index.isValid() else None

    def current_row(self) -> compare_data.SystemRow | None:
        item_id = self.current_item_id()
        if self.comparison is None or item_id is None:
            return None
        return next((r for r in self.comparison.rows if r.item_id == item_id), None)

    def _on_row(self) -> None:
        row = self.current_row()
        if row is not None:
            self.item_selected.emit(row.item_id)
        self._update_detail()

    # -- the detail tabs ----------------------------------------------------------------

    def _update_detail(self) -> None:
        tab = self.tabs.currentIndex()
        if tab == TAB_OUTPUT:
            self._show_output()
        elif tab == TAB_EXPLAIN:
            self.explain.set_item(self.study, self.current_item_id())
        else:
            self._show_scene_preview()

    def _show_output(self) -> None:
        row = self.current_row()
        if row is None or self.comparison is None:
            self.output_view.clear()
            return
        dark = self.palette().base().color().lightness() < 128
        diff = diff_html(inline_diff(self.comparison.source, row.output), dark=dark)
        refs = "".join(f"<li>{html.escape(r)}</li>" for r in row.references)
        self.output_view.setHtml(
            f"<h3>{html.escape(row.system)}</h3>"
            f'<p style="font-size:large">{html.escape(row.output)}</p>'
            f"<p><b>Against the source</b> (added words highlighted, dropped words struck "
            f'through):</p><p style="font-size:large">{diff}</p>'
            + (f"<p><b>References</b></p><ul>{refs}</ul>" if refs else "")
        )

    def _scenes_saved(self) -> None:
        # Stored scores were computed from the old scenes: their explanations say so now.
        self._show_scene_preview()
        if self.tabs.currentIndex() == TAB_EXPLAIN:
            self._update_detail()

    def _show_scene_preview(self) -> None:
        """What the scenes on screen (saved or not) give the selected output, computed here."""
        row = self.current_row()
        if row is None:
            self.scene_preview.clear("Select an output.")
            return
        specs = [s for s in self.scene_editor.specs() if s.main_relation]
        if not specs:
            self.scene_preview.clear(
                "No scenes for this source yet: draw them on the left, import UCCA XML, or "
                "propose them from a dependency parse."
            )
            return
        state = "unsaved" if self.scene_editor.dirty else "saved"
        self.scene_preview.show_details(
            preview_details(specs, row.output),
            f"Live preview of the {state} scenes (exact and lemma alignment); the Explain tab "
            "shows stored scores.",
        )


class ComparePage(QWidget):
    """The window's Compare page: a CompareView that follows the open study."""

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.view = CompareView(ctx.study, self, runner=ctx.runner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self._stale = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self._refresh_if_visible)
        ctx.study_opened.connect(self.view.set_study)
        ctx.study_closed.connect(lambda: self.view.set_study(None))
        ctx.study_changed.connect(self._on_study_changed)

    def _on_study_changed(self, changes: StudyChanges) -> None:
        if changes.everything or changes.runs or changes.label_sets:
            self.view.reload_sources()  # new items, runs or labels to compare
        elif changes.scores or changes.ratings:
            self._mark_stale()

    def show_source_group(self, source_group: str) -> None:
        self.view.show_source_group(source_group)

    def show_item(self, item_id: int) -> None:
        self.view.show_item(item_id)

    def _mark_stale(self) -> None:
        self._stale = True
        self._timer.start()

    def _refresh_if_visible(self) -> None:
        if self._stale and self.isVisible():
            self._stale = False
            self.view.refresh()

    def page_shown(self) -> None:
        if self._stale:
            self._stale = False
            self.view.refresh()
