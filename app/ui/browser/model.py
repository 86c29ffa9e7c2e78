"""The browser's table model: lazy pages over the filtered id list, scores refreshed live.

Rows are fetched a page at a time from the model's own SQLite connection, on the GUI
thread, when the view first asks for them (a page is a primary-key lookup: well under a
millisecond for 256 rows); the id list itself is loaded as a job on a worker thread
whenever the filter changes (see `meaningbench.queries.browser` for why).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from meaningbench.queries.browser import (
    BrowserFilter,
    BrowserReader,
    ItemRow,
    ScoreColumn,
    name_and_options,
)
from meaningbench.queries.raters import MACHINE_MARK, MACHINE_TAG
from meaningbench.runtime import JobContext
from meaningbench.ui.workers import JobHandle, JobRunner

PAGE_SIZE = 256
MAX_PAGES = 48
ITEM_ID_ROLE = Qt.ItemDataRole.UserRole + 1

# An empty output is a system output (the system deleted everything), shown as such.
EMPTY_OUTPUT = "∅ (empty output)"
EMPTY_OUTPUT_TIP = "The system's output is empty: it deleted the whole source."

# Fixed columns: (key, header, sort key)
FIXED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("id", "ID", "id"),
    ("dataset", "Dataset", "dataset"),
    ("system", "System", "system"),
    ("kind", "Kind", "kind"),
    ("source", "Source", "source"),
    ("output", "Output", "output"),
    ("ratings", "Ratings", "ratings"),
    ("mean", "Mean", "mean"),
    ("flag", "⚑", ""),
)
NUMERIC_KEYS = {"id", "ratings", "mean"}
_DISPLAY = Qt.ItemDataRole.DisplayRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
# Per fixed column, then one more entry for every score column (right-aligned numbers).
_ALIGNMENTS: tuple[int | None, ...] = (
    *(
        _RIGHT
        if k in NUMERIC_KEYS
        else (int(Qt.AlignmentFlag.AlignCenter) if k == "flag" else None)
        for k, _h, _s in FIXED_COLUMNS
    ),
    _RIGHT,
)

_Index = QModelIndex | QPersistentModelIndex


@dataclass
class _Page:
    rows: dict[int, ItemRow]
    scores: dict[tuple[int, str, str], float | None] | None = None
    # The fixed columns' display strings, formatted once when the page is fetched.
    texts: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keys = [k for k, _h, _s in FIXED_COLUMNS]
        self.texts = {i: tuple(_display(r, k) for k in keys) for i, r in self.rows.items()}


def _load_ids_job(path: str, f: BrowserFilter, ctx: JobContext) -> array[int]:
    reader = BrowserReader(path)
    try:
        ids = reader.ids(f, cancelled=lambda: ctx.cancelled)
    finally:
        reader.close()
    ctx.check()  # a superseded load's partial list is never shown
    return ids


@dataclass
class _State:
    ids: array[int] = field(default_factory=lambda: array("q"))
    pages: OrderedDict[int, _Page] = field(default_factory=OrderedDict)


class ItemTableModel(QAbstractTableModel):
    loading_changed = Signal(bool)
    loaded = Signal(int)  # number of rows after a filter change
    load_failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path: str | None = None
        self._reader: BrowserReader | None = None
        self._filter = BrowserFilter()
        self._state = _State()
        self._score_columns: list[ScoreColumn] = []
        self._dimension: tuple[int, str] | None = None
        self._generation = 0
        self.loading = False
        self._runner = JobRunner(self, max_threads=1)
        self._load: JobHandle | None = None

    # -- study and filter -------------------------------------------------------------

    def set_study(self, path: Path | None) -> None:
        self.beginResetModel()
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._path = str(path) if path is not None else None
        self._state = _State()
        self._score_columns = []
        self._dimension = None
        if self._path is not None:
            self._reader = BrowserReader(self._path)
            self._dimension = self._reader.primary_dimension()
        self.endResetModel()
        self._generation += 1  # results of a load for the previous study are dropped

    @property
    def filter(self) -> BrowserFilter:
        return self._filter

    @property
    def reader(self) -> BrowserReader | None:
        return self._reader

    def set_filter(self, f: BrowserFilter) -> None:
        """Load the ids passing `f` on a worker thread; the table updates when they arrive."""
        self._filter = f
        self.reload()

    def reload(self) -> None:
        if self._path is None:
            return
        self._generation += 1
        f = self._filter
        if f.sort == "mean" and f.sort_dimension is None and self._dimension is not None:
            f = f.with_(sort_dimension=self._dimension[0])
        self._set_loading(True)
        if self._load is not None:
            self._load.cancel()  # superseded: stop reading ids nobody will show
        generation = self._generation
        self._load = self._runner.start(
            partial(_load_ids_job, self._path, f),
            title="Loading items",
            on_result=lambda ids: self._on_ids_loaded(generation, ids),
            on_failed=lambda failure: self._on_ids_loaded(generation, failure.exception),
            show_errors=False,  # shown in the table as an empty list with the message
        )

    def _on_ids_loaded(self, generation: int, ids: array[int] | BaseException) -> None:
        if generation != self._generation:
            return  # a newer filter superseded this load
        self._set_loading(False)
        if isinstance(ids, BaseException):
            self.load_failed.emit(str(ids))
            ids = array("q")
        self.beginResetModel()
        self._state = _State(ids=ids)
        self.endResetModel()
        self.loaded.emit(len(ids))

    def _set_loading(self, value: bool) -> None:
        if self.loading != value:
            self.loading = value
            self.loading_changed.emit(value)

    # -- score columns ----------------------------------------------------------------

    @property
    def score_columns(self) -> list[ScoreColumn]:
        return list(self._score_columns)

    def set_score_columns(self, columns: list[ScoreColumn]) -> None:
        """Replace the score columns, keeping rows, scroll position and selection."""
        if columns == self._score_columns:
            return
        first = len(FIXED_COLUMNS)
        if self._score_columns:
            self.beginRemoveColumns(QModelIndex(), first, first + len(self._score_columns) - 1)
            self._score_columns = []
            self.endRemoveColumns()
        if columns:
            self.beginInsertColumns(QModelIndex(), first, first + len(columns) - 1)
            self._score_columns = list(columns)
            self.endInsertColumns()
        self._drop_scores()

    def scores_changed(self, item_ids: list[int] | None = None) -> None:
        """New scores landed: forget cached scores of the affected pages and repaint them."""
        if not self._score_columns or not self._state.ids:
            return
        wanted = set(item_ids) if item_ids else None
        touched: list[int] = []
        for number, page in self._state.pages.items():
            if page.scores is None:
                continue
            if wanted is None or not wanted.isdisjoint(page.rows):
                page.scores = None
                touched.append(number)
        first = len(FIXED_COLUMNS)
        last = first + len(self._score_columns) - 1
        for number in touched:
            top = number * PAGE_SIZE
            bottom = min(len(self._state.ids), top + PAGE_SIZE) - 1
            self.dataChanged.emit(self.index(top, first), self.index(bottom, last))

    def ratings_changed(self, item_ids: list[int] | None = None) -> None:
        wanted = set(item_ids) if item_ids else None
        for number in list(self._state.pages):
            page = self._state.pages[number]
            if wanted is None or not wanted.isdisjoint(page.rows):
                del self._state.pages[number]
                top = number * PAGE_SIZE
                bottom = min(len(self._state.ids), top + PAGE_SIZE) - 1
                self.dataChanged.emit(
                    self.index(top, 0), self.index(bottom, len(FIXED_COLUMNS) - 1)
                )

    def _drop_scores(self) -> None:
        for page in self._state.pages.values():
            page.scores = None

    # -- Qt model interface -----------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._state.ids)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(FIXED_COLUMNS) + len(self._score_columns)

    def column_key(self, column: int) -> str:
        if column < len(FIXED_COLUMNS):
            return FIXED_COLUMNS[column][0]
        return "score"

    def column_of(self, key: str) -> int:
        for i, (k, _h, _s) in enumerate(FIXED_COLUMNS):
            if k == key:
                return i
        raise KeyError(key)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section < len(FIXED_COLUMNS):
                key, header, _ = FIXED_COLUMNS[section]
                if key == "mean" and self._dimension is not None:
                    return self._dimension[1].capitalize()
                return header
            # The options on a second line, so that a score column stays as narrow as
            # its numbers need (`bertscore` over `[refs=source]`).
            head, options = name_and_options(
                self._score_columns[section - len(FIXED_COLUMNS)].column
            )
            return f"{head}\n{options}" if options else head
        if role == Qt.ItemDataRole.ToolTipRole:
            if section >= len(FIXED_COLUMNS):
                col = self._score_columns[section - len(FIXED_COLUMNS)]
                return f"{col.column} (config {col.config_hash[:8]}), 0–100"
            key = FIXED_COLUMNS[section][0]
            return {
                "ratings": "Current ratings of this item, all annotators and dimensions; "
                f"{MACHINE_MARK} n: of them, n by machine raters (an LLM judge)",
                "mean": "The item's human score on the primary dimension: people's "
                "ratings only, never a machine rater's",
                "flag": "Flagged by an annotator",
            }.get(key)
        return None

    def item_id(self, row: int) -> int | None:
        ids = self._state.ids
        return int(ids[row]) if 0 <= row < len(ids) else None

    def row_of(self, item_id: int) -> int | None:
        try:
            return self._state.ids.index(item_id)
        except ValueError:
            return None

    def item_row(self, row: int) -> ItemRow | None:
        item_id = self.item_id(row)
        if item_id is None:
            return None
        return self._page(row // PAGE_SIZE).rows.get(item_id)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The view asks for about ten roles per cell on every paint; all but three are
        # answered before any lookup, so a repaint costs little GUI-thread time.
        if role == _DISPLAY:
            return self._display_value(index.row(), index.column())
        if role == _ALIGN:
            return _ALIGNMENTS[min(index.column(), len(_ALIGNMENTS) - 1)]
        if role == Qt.ItemDataRole.ToolTipRole:
            key = self.column_key(index.column())
            if key in ("dataset", "system"):  # narrowed to a few words: whole here
                return self._display_value(index.row(), index.column())
            if key in ("source", "output", "ratings"):
                item = self.item_row(index.row())
                if item is None:
                    return None
                if key == "ratings":
                    return _ratings_tip(item)
                if key == "output" and not item.output:
                    return EMPTY_OUTPUT_TIP
                return getattr(item, key)
            return None
        if role == ITEM_ID_ROLE:
            return self.item_id(index.row())
        return None

    def _display_value(self, row: int, col: int) -> Any:
        ids = self._state.ids
        if not 0 <= row < len(ids):
            return None
        item_id = ids[row]
        page = self._page(row // PAGE_SIZE)
        if col < len(FIXED_COLUMNS):
            texts = page.texts.get(item_id)
            return texts[col] if texts is not None else None
        if page.scores is None:
            page.scores = self._require_reader().scores(list(page.rows))
        sc = self._score_columns[col - len(FIXED_COLUMNS)]
        value = page.scores.get((item_id, sc.metric, sc.config_hash))
        return None if value is None else f"{value:.1f}"

    def _require_reader(self) -> BrowserReader:
        if self._reader is None:
            raise RuntimeError("no study is open")
        return self._reader

    def _page(self, number: int) -> _Page:
        pages = self._state.pages
        page = pages.get(number)
        if page is not None:
            pages.move_to_end(number)
            return page
        start = number * PAGE_SIZE
        ids = self._state.ids[start : start + PAGE_SIZE].tolist()
        dim = self._dimension[0] if self._dimension else None
        page = _Page(rows=self._require_reader().rows(ids, dim))
        pages[number] = page
        while len(pages) > MAX_PAGES:
            pages.popitem(last=False)
        return page

    def cached_pages(self) -> int:
        return len(self._state.pages)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        descending = order == Qt.SortOrder.DescendingOrder
        if column >= len(FIXED_COLUMNS):
            sc = self._score_columns[column - len(FIXED_COLUMNS)]
            f = self._filter.with_(
                sort="score", sort_score=(sc.metric, sc.config_hash), descending=descending
            )
        else:
            key = FIXED_COLUMNS[column][2] or "id"
            f = self._filter.with_(sort=key, sort_score=None, descending=descending)
        if f != self._filter:
            self.set_filter(f)

    def close(self) -> None:
        self._runner.cancel_all()
        self._runner.wait(5000)
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _ratings_tip(item: ItemRow) -> str | None:
    """Who rated: the machine raters' share is said apart, never counted as people's."""
    if not item.n_machine:
        return None
    people = item.n_ratings - item.n_machine
    return (
        f"{people} rating{'' if people == 1 else 's'} by people, {item.n_machine} by "
        f"machine raters ({MACHINE_TAG}: a model's, never part of the human score)"
    )


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _display(item: ItemRow, key: str) -> Any:
    if key == "id":
        return str(item.item_id)
    if key == "dataset":
        return item.dataset
    if key == "system":
        return item.system or ""
    if key == "kind":
        return item.kind
    if key == "source":
        return _one_line(item.source)
    if key == "output":
        return _one_line(item.output) if item.output else EMPTY_OUTPUT
    if key == "ratings":
        if item.n_machine:
            return f"{item.n_ratings - item.n_machine} {MACHINE_MARK} {item.n_machine}"
        return str(item.n_ratings) if item.n_ratings else ""
    if key == "mean":
        return "" if item.mean_rating is None else f"{item.mean_rating:.1f}"
    if key == "flag":
        return "⚑" if item.flagged else ""
    return None
