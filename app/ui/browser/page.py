"""The study browser: filter bar, the lazy item table and the detail pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.browser import (
    AttributeChoice,
    BrowserFilter,
    score_columns,
)
from meaningbench.queries.raters import RATER_CHOICES, MachineRater
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.browser.detail import DetailPane
from meaningbench.ui.browser.model import FIXED_COLUMNS, ItemTableModel
from meaningbench.ui.icons import themed_icon
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.queries.files import StudyHandle
    from meaningbench.ui.context import StudyContext

SEARCH_DELAY_MS = 300
RATER_LABELS = tuple(
    zip(("All raters", "People only", "Machine raters"), RATER_CHOICES, strict=True)
)
SCORE_REFRESH_MS = 400

# Column fitting: padding for cell margins (and the header's sort arrow), the widest a
# fitted column gets (a dataset or system name: narrower, whole in its tooltip), the
# narrowest the source and output columns get, rows sampled. On a 1024-px screen the
# table has about 600 px: names and texts give way so that Ratings and Mean stay in view.
CELL_PAD = 18
HEADER_PAD = 34
MAX_FIT_CHARS = 28
NAME_FIT_CHARS = 12
NAME_KEYS = ("dataset", "system")
WANT_TEXT_CHARS = 22
MIN_TEXT_CHARS = 10
FIT_SAMPLE_ROWS = 60


class BrowserPage(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("browserPage")
        self.context = context
        self.model = ItemTableModel(self)
        self._pending_scores: set[int] = set()
        self._pending_labels: set[str] = set()
        # Run labels whose column the table already has (a batch of one of them only
        # refreshes values; a new label rereads the columns).
        self._labels_seen: set[str] = set()
        self._fit_pending = True  # fit the columns to the first rows of a newly opened study
        self._build()
        context.study_opened.connect(self._on_study_opened)
        context.study_closed.connect(self._on_study_closed)
        context.study_changed.connect(self._on_study_changed)
        if context.study is not None:
            self._on_study_opened(context.study)

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        bar = self._build_filter_bar()
        self._build_table_and_detail()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        self.empty_hint = self._build_empty_hint()
        layout.addWidget(self.empty_hint, 1)
        self._build_connections()

    def _build_empty_hint(self) -> QWidget:
        """What a study without items shows instead of an empty table: how to fill it."""
        hint = QWidget()
        hint.setObjectName("emptyStudyHint")
        text = QLabel(
            "<b>This study has no items yet.</b><br><br>Import a file of original and "
            "simplified sentences (CSV, TSV or JSON Lines; ratings too, if it has "
            "them) to browse, rate and score them."
        )
        text.setObjectName("mutedLabel")
        text.setWordWrap(True)
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.import_button = QPushButton(themed_icon("import"), "Import data…")
        self.import_button.setObjectName("emptyStudyImport")
        self.import_button.setMinimumHeight(34)
        self.import_button.clicked.connect(lambda _c=False: self.context.import_requested.emit())
        box = QVBoxLayout(hint)
        box.addStretch(1)
        box.addWidget(text)
        box.addSpacing(12)
        box.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignCenter)
        box.addStretch(2)
        hint.hide()
        return hint

    def _show_empty_hint(self, empty: bool) -> None:
        self.empty_hint.setVisible(empty)
        self.splitter.setVisible(not empty)

    def _build_filter_bar(self) -> QHBoxLayout:
        self.dataset_combo = QComboBox()
        self.system_combo = QComboBox()
        # Item attributes (categories kept from imported columns); shown when there are any.
        self.attribute_combo = QComboBox()
        self.attribute_combo.setObjectName("browserAttribute")
        self.attribute_combo.setToolTip("Show the items of one category (an item attribute)")
        self.attribute_combo.hide()
        self.rated_combo = QComboBox()
        for label, value in (("Rated or not", "any"), ("Rated", "rated"), ("Unrated", "unrated")):
            self.rated_combo.addItem(label, value)
        # Whose ratings "Rated", "Unrated" and the Ratings sort count; shown when the study
        # has a machine rater (an LLM judge stored as a rater).
        self.raters_combo = QComboBox()
        self.raters_combo.setObjectName("browserRaters")
        for label, value in RATER_LABELS:
            self.raters_combo.addItem(label, value)
        self.raters_combo.hide()
        self.kind_combo = QComboBox()
        for label, value in (
            ("Regular items", "regular"),
            ("Control items", "control"),
            ("All items", "all"),
        ):
            self.kind_combo.addItem(label, value)
        self.flagged_check = QCheckBox("Flagged")
        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("browserSearch")
        self.search_edit.setPlaceholderText("Search source and output…")
        self.search_edit.setClearButtonEnabled(True)
        self.count_label = QLabel()
        self.count_label.setObjectName("countLabel")
        self.search_edit.setMinimumWidth(100)
        # Combos of names as wide as their entries when there is room, narrower when the
        # window is (a long dataset name must not set the window's minimum width, nor
        # squeeze the other filters); the combos of fixed choices always show them whole.
        for combo in self._filter_combos():
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            if combo in (self.dataset_combo, self.system_combo, self.attribute_combo):
                combo.setMinimumWidth(72)
                combo.setMaximumWidth(170)
            else:
                combo.setMinimumWidth(combo.sizeHint().width())

        bar = QHBoxLayout()
        bar.setSpacing(8)
        bar.addWidget(self.dataset_combo)
        bar.addWidget(self.system_combo)
        bar.addWidget(self.attribute_combo)
        bar.addWidget(self.rated_combo)
        bar.addWidget(self.raters_combo)
        bar.addWidget(self.kind_combo)
        bar.addWidget(self.flagged_check)
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(self.count_label)
        return bar

    def _filter_combos(self) -> tuple[QComboBox, ...]:
        return (
            self.dataset_combo,
            self.system_combo,
            self.attribute_combo,
            self.rated_combo,
            self.raters_combo,
            self.kind_combo,
        )

    def _build_table_and_detail(self) -> None:
        self.table = QTableView()
        self.table.setObjectName("itemTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vh = self.table.verticalHeader()
        vh.hide()
        # Fixed row heights: the view never measures a million rows.
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        hh = self.table.horizontalHeader()
        hh.setHighlightSections(False)
        hh.setSectionsMovable(True)
        hh.setStretchLastSection(False)
        hh.setSortIndicatorShown(True)
        hh.setSectionsClickable(True)
        hh.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        hh.sortIndicatorChanged.connect(self._on_sort_changed)
        # Source and output follow the table's width (its viewport's, once laid out).
        self.table.viewport().installEventFilter(self)
        self.detail = DetailPane()
        self.detail.column_name = self._column_name

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("browserSplitter")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([900, 360])
        self.splitter.setChildrenCollapsible(False)

    def _build_connections(self) -> None:
        """The timers that batch searches and score refreshes, and every signal's slot."""
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.apply_filters)
        self._score_timer = QTimer(self)
        self._score_timer.setSingleShot(True)
        self._score_timer.setInterval(SCORE_REFRESH_MS)
        self._score_timer.timeout.connect(self._flush_scores)

        for combo in self._filter_combos():
            combo.currentIndexChanged.connect(self.apply_filters)
        self.flagged_check.toggled.connect(self.apply_filters)
        self.search_edit.textChanged.connect(lambda _t: self._search_timer.start())
        self.search_edit.returnPressed.connect(self.apply_filters)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self._load_error: str | None = None
        self.model.loaded.connect(self._on_loaded)
        self.model.load_failed.connect(self._on_load_failed)
        self.model.loading_changed.connect(self._on_loading)
        self.model.modelReset.connect(lambda: self.detail.show_item(None))
        self.model.columnsInserted.connect(lambda *_: self.fit_columns(scores_only=True))
        self._update_kind_column()

    def fit_columns(self, *, scores_only: bool = False) -> None:
        """Column widths from the header and the first rows; source and output share what
        is left of the table's width (never less than MIN_TEXT_CHARS characters)."""
        fm = self.table.fontMetrics()
        self.table.verticalHeader().setDefaultSectionSize(fm.height() + 10)
        model = self.model
        rows = range(min(model.rowCount(), FIT_SAMPLE_ROWS))
        cap = fm.horizontalAdvance("x") * MAX_FIT_CHARS

        def fit(col: int, floor: int = 0) -> int:
            header = str(model.headerData(col, Qt.Orientation.Horizontal) or "")
            lines = header.splitlines() or [""]
            width = max(floor, max(fm.horizontalAdvance(line) for line in lines) + HEADER_PAD)
            for r in rows:
                text = model.data(model.index(r, col))
                if text:
                    width = max(width, fm.horizontalAdvance(str(text)) + CELL_PAD)
            return min(width, cap)

        number = fm.horizontalAdvance("100.0") + CELL_PAD
        first_score = len(FIXED_COLUMNS)
        for col in range(first_score, model.columnCount()):
            self.table.setColumnWidth(col, fit(col, number))
        if scores_only:
            return
        names = fm.horizontalAdvance("x") * NAME_FIT_CHARS
        for col, (key, _h, _s) in enumerate(FIXED_COLUMNS):
            if key in ("source", "output"):
                continue
            width = fm.horizontalAdvance("⚑") + CELL_PAD if key == "flag" else fit(col)
            self.table.setColumnWidth(col, min(width, names) if key in NAME_KEYS else width)
        self.share_text_width()

    def share_text_width(self) -> None:
        """Source and output share what the other columns leave of the table's width, again
        whenever it changes: with the score columns in view where there is room, else at
        least WANT_TEXT_CHARS characters each, but never so wide that the item's own columns
        (Ratings, Mean, the flag) leave the view, nor under MIN_TEXT_CHARS."""
        model, table = self.model, self.table
        text_cols = [model.column_of("source"), model.column_of("output")]

        def width_of(cols: range) -> int:
            return sum(
                table.columnWidth(c)
                for c in cols
                if c not in text_cols and not table.isColumnHidden(c)
            )

        own = table.viewport().width() - width_of(range(len(FIXED_COLUMNS)))
        with_scores = own - width_of(range(len(FIXED_COLUMNS), model.columnCount()))
        chars = table.fontMetrics().horizontalAdvance("x")
        text_width = max(
            with_scores // 2, min(WANT_TEXT_CHARS * chars, own // 2), MIN_TEXT_CHARS * chars
        )
        for col in text_cols:
            table.setColumnWidth(col, text_width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.share_text_width()
        return super().eventFilter(watched, event)

    def changeEvent(self, event: object) -> None:  # noqa: N802 - Qt override
        if getattr(event, "type", lambda: None)() in (
            QEvent.Type.FontChange,
            QEvent.Type.ApplicationFontChange,
        ):
            self.fit_columns()
        super().changeEvent(event)  # type: ignore[arg-type]

    # -- filters ----------------------------------------------------------------------

    def current_filter(self) -> BrowserFilter:
        dataset = self.dataset_combo.currentData()
        system = self.system_combo.currentData()
        attribute = self.attribute_combo.currentData()
        return self.model.filter.with_(
            dataset=dataset or None,
            system=system or None,
            attribute=tuple(attribute) if attribute else None,
            rated=self.rated_combo.currentData() or "any",
            raters=self.raters_combo.currentData() or "all",
            kinds=self.kind_combo.currentData() or "regular",
            flagged=self.flagged_check.isChecked(),
            search=self.search_edit.text(),
        )

    def apply_filters(self) -> None:
        self._search_timer.stop()
        self._update_kind_column()
        if self.context.study is None:
            return
        self.model.set_filter(self.current_filter())

    def _update_kind_column(self) -> None:
        self.table.setColumnHidden(
            self.model.column_of("kind"), self.kind_combo.currentData() == "regular"
        )

    def _on_sort_changed(self, section: int, order: Qt.SortOrder) -> None:
        if self.model.column_key(section) == "flag":  # not a sort key: put the arrow back
            f = self.model.filter
            hh = self.table.horizontalHeader()
            hh.blockSignals(True)
            hh.setSortIndicator(
                self._sorted_section(f),
                Qt.SortOrder.DescendingOrder if f.descending else Qt.SortOrder.AscendingOrder,
            )
            hh.blockSignals(False)
            return
        self.model.sort(section, order)

    def _sorted_section(self, f: BrowserFilter) -> int:
        if f.sort == "score" and f.sort_score is not None:
            for i, col in enumerate(self.model.score_columns):
                if (col.metric, col.config_hash) == f.sort_score:
                    return len(FIXED_COLUMNS) + i
        for i, (_k, _h, sort_key) in enumerate(FIXED_COLUMNS):
            if sort_key == f.sort:
                return i
        return 0

    def _fill_combo(self, combo: QComboBox, values: list[str], everything: str) -> None:
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(everything, None)
        for v in values:
            combo.addItem(v, v)
        idx = combo.findData(current) if current else 0
        combo.setCurrentIndex(max(0, idx))
        combo.blockSignals(False)

    # -- study events -----------------------------------------------------------------

    def _on_study_opened(self, study: StudyHandle) -> None:
        self._labels_seen = set()
        self._fit_pending = True
        self.model.set_study(study.path)
        self.detail.set_reader(lambda: self.model.reader)
        self._refresh_filter_values()
        self.model.set_score_columns(score_columns(study))
        self.apply_filters()

    def _on_study_closed(self) -> None:
        self._show_empty_hint(False)
        self.detail.set_reader(lambda: None)
        self.model.set_study(None)
        self.count_label.setText("")

    def _refresh_filter_values(self) -> None:
        reader = self.model.reader
        if reader is None:
            return
        datasets, systems = reader.filter_values()
        self._fill_combo(self.dataset_combo, datasets, "All datasets")
        self._fill_combo(self.system_combo, systems, "All systems")
        self.dataset_combo.setToolTip("Show the items of one dataset")
        self.system_combo.setToolTip("Show the outputs of one system")
        self._fill_attribute_combo(reader.attribute_choices())
        self._fill_raters_combo(reader.machine_raters())

    def _fill_raters_combo(self, machines: list[MachineRater]) -> None:
        """Offered when the study has machine raters; their tooltips name judge and model."""
        combo = self.raters_combo
        named = "\n".join(m.tooltip for m in machines)
        combo.setItemData(combo.findData("machine"), named, Qt.ItemDataRole.ToolTipRole)
        combo.setToolTip(
            "Whose ratings count for Rated, Unrated and the Ratings column: everyone's, "
            "people's only, or the machine raters' only. Machine raters:\n" + named
            if machines
            else ""
        )
        if not machines and combo.currentData() != "all":
            combo.setCurrentIndex(0)  # no machine rater left: no hidden filter either
        combo.setVisible(bool(machines))

    def _fill_attribute_combo(self, choices: list[AttributeChoice]) -> None:
        combo = self.attribute_combo
        current = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        combo.addItem("All categories", None)
        for c in choices:
            combo.addItem(f"{c.name}: {c.value} ({c.items:,})", [c.name, c.value])
        idx = combo.findData(current) if current else 0
        combo.setCurrentIndex(max(0, idx))
        combo.blockSignals(False)
        combo.setVisible(bool(choices))

    def reload_all(self) -> None:
        study = self.context.study
        if study is None:
            return
        self._refresh_filter_values()
        self.model.set_score_columns(score_columns(study))
        self.apply_filters()

    def _on_study_changed(self, changes: StudyChanges) -> None:
        """A wholesale change rereads the table; new ratings, scores and flags refresh their
        rows."""
        if changes.everything or changes.settings or changes.label_sets:
            self.reload_all()
            return
        if changes.runs and self.context.study is not None:
            # Runs came or went (a sweep, a training): the score columns follow.
            self.model.set_score_columns(score_columns(self.context.study))
        for label, ids in changes.scores:
            self._on_scores_changed(label, list(ids))
        if changes.ratings:
            self._on_ratings_changed(sorted(changes.ratings))
        if changes.notes:
            self._on_notes_changed(sorted(changes.notes))

    def _on_scores_changed(self, label: str, item_ids: list[int]) -> None:
        self._pending_labels.add(label)
        self._pending_scores.update(item_ids)
        if not self._score_timer.isActive():
            self._score_timer.start()

    def _flush_scores(self) -> None:
        study = self.context.study
        if study is None:
            return
        ids, self._pending_scores = self._pending_scores, set()
        labels, self._pending_labels = self._pending_labels, set()
        if not labels <= self._labels_seen:  # a new run: its column appears
            self._labels_seen |= labels
            self.model.set_score_columns(score_columns(study))
        self.model.scores_changed(list(ids))
        if self.detail.item_id is not None and self.detail.item_id in ids:
            self.detail.refresh()

    def _on_ratings_changed(self, item_ids: list[int]) -> None:
        self.model.ratings_changed(item_ids)
        if self.detail.item_id is not None and (
            not item_ids or self.detail.item_id in set(item_ids)
        ):
            self.detail.refresh()

    def _on_notes_changed(self, item_ids: list[int]) -> None:
        """A flag came or went: under the Flagged filter the rows themselves change (a newly
        flagged item joins them); otherwise the flag column and the detail of those items."""
        if self.flagged_check.isChecked():
            self.model.reload()
        self._on_ratings_changed(item_ids)

    def _on_load_failed(self, message: str) -> None:
        self._load_error = message

    def _on_loaded(self, count: int) -> None:
        error, self._load_error = self._load_error, None
        if error is not None:
            self.count_label.setText(f"Could not read the items: {error}")
            self.count_label.setToolTip(error)
            return
        self.count_label.setToolTip("")
        self.count_label.setText(counted(count, "item"))
        reader = self.model.reader
        self._show_empty_hint(count == 0 and reader is not None and not reader.has_items())
        if self._fit_pending and count:
            self._fit_pending = False
            self.fit_columns()
        if count:
            self.table.selectionModel().setCurrentIndex(
                self.model.index(0, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )

    def _on_loading(self, loading: bool) -> None:
        if loading:
            self.count_label.setText("Loading…")

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.detail.show_item(self.model.item_id(current.row()) if current.isValid() else None)

    def _column_name(self, metric: str, config_hash: str) -> str | None:
        for col in self.model.score_columns:
            if col.metric == metric and col.config_hash == config_hash:
                return col.column
        return None

    def select_item(self, item_id: int) -> bool:
        row = self.model.row_of(item_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(index)
        return True

    # -- window state -----------------------------------------------------------------

    def save_state(self) -> dict[str, object]:
        return {
            "splitter": self.splitter.saveState(),
        }

    def restore_state(self, state: dict[str, object]) -> None:
        splitter = state.get("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)  # type: ignore[arg-type]

    def shutdown(self) -> None:
        self.model.close()
