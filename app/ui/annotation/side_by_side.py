"""The side-by-side screen (sxs): one original, its outputs beside each other, one slider each.

Keys as on the slider screen: Tab / Shift+Tab move between the outputs' sliders, digits and
arrows set the focused one, Enter submits the unit once every slider is set, Ctrl+Z undoes
the last unit, S skips the unit, F flags the output in focus, Alt+← / Alt+→ revise earlier
units. What it shares with the annotation screen (the writes, each an op of
`meaningbench.ops`; skip, undo, flag, back and forth; the keys) is `RatingScreen`'s.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.rate import open_side_by_side, submit_unit, undo_unit
from meaningbench.ops.skip import skip_unit
from meaningbench.queries.annotation import ShownItem, ShownUnit
from meaningbench.queries.files import StudyHandle
from meaningbench.queries.rating_cursor import UnitCursor
from meaningbench.runtime import Job
from meaningbench.runtime.changes import StudyChanges, Wrote
from meaningbench.ui.annotation.rating_screen import RatingScreen, Words
from meaningbench.ui.annotation.rows import DimensionRow
from meaningbench.ui.annotation.scales import RatingScale, blend
from meaningbench.ui.annotation.text_panel import TextPanel

K = Qt.Key
HINT_UNSET = "Rate every output: Tab moves between them, digits or arrows set the slider."
HINT_READY = "Press Enter to submit these ratings and go on."
HINT_BLOCKED = "Not submitted: every output needs a rating first."
LETTERS = "ABCDEFGH"


class OutputColumn:
    """One output of the unit with its own slider: a card in the top row of the grid, its
    slider in the row under it. Cards of one row share their height, so texts of different
    lengths leave every slider at the same height."""

    def __init__(self, letter: str, row: DimensionRow) -> None:
        self.panel = TextPanel(f"Output {letter}")
        self.row = row

    def place(self, grid: QGridLayout, at: int) -> None:
        grid.addWidget(self.panel, 0, at)
        grid.addWidget(self.row, 1, at)
        grid.setColumnStretch(at, 1)

    def remove(self, grid: QGridLayout) -> None:
        for widget in (self.panel, self.row):
            grid.removeWidget(widget)
            widget.hide()  # out of the layout, but on screen until it is deleted
            widget.deleteLater()


class SideBySideScreen(RatingScreen[ShownUnit]):
    WORDS = Words(
        skip_refused="Only unrated outputs can be skipped.",
        skipped="Skipped — these outputs come back later.",
        no_earlier="No earlier rated outputs.",
        nothing_after="Nothing after these outputs is rated yet.",
        undone_back="Undone: these outputs are open again.",
        undone_open="Undone: these outputs are open again.",
    )
    queue: UnitCursor
    COUNTED = ("Output", "Outputs")

    def _open(self, study: StudyHandle, annotator_name: str) -> None:
        self.queue = self.runner.run_now(open_side_by_side(study, annotator_name))

    def _build(self) -> None:
        self.setObjectName("sideBySideScreen")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(12)
        header = QHBoxLayout()
        name = html.escape(self.queue.annotator_name, quote=False)
        self.who_label = QLabel(f"Rating as <b>{name}</b> · side by side")
        self.progress_label = QLabel()
        self.progress_label.setObjectName("progressLabel")
        self.saved_label = QLabel()
        self.saved_label.setObjectName("savedStamp")
        header.addWidget(self.who_label)
        header.addSpacing(18)
        header.addWidget(self.progress_label)
        header.addSpacing(12)
        header.addWidget(self.saved_label)
        header.addStretch(1)
        outer.addLayout(header)
        # Under the header, taking most of the height the columns leave: the end screen sits
        # where the texts were, not below the empty columns' stretch.
        self._make_end_screen().hide()
        outer.addWidget(self.end_screen, 3)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()
        outer.addWidget(self.banner)
        self.source = TextPanel("Original")
        outer.addWidget(self.source)
        scale = self.queue.scale
        self.question = QLabel(
            f"<b>{scale.question or scale.name.capitalize()}</b> — each output on its own "
            f"slider: {scale.min_value:g} = {scale.label_low or 'lowest'}, "
            f"{scale.max_value:g} = {scale.label_high or 'highest'}."
        )
        self.question.setWordWrap(True)
        outer.addWidget(self.question)
        self.columns_box = QGridLayout()
        self.columns_box.setHorizontalSpacing(16)
        self.columns_box.setVerticalSpacing(10)
        outer.addLayout(self.columns_box)
        outer.addStretch(1)
        self.columns: list[OutputColumn] = []
        self.hint = QLabel(HINT_UNSET)
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        outer.addWidget(self.hint)
        self._style()

    def _first(self) -> ShownUnit | None:
        return self.queue.next()

    def _style(self) -> None:
        pal = self.palette()
        base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        border = blend(base, text, 0.10)
        self.setStyleSheet(
            f"QFrame#textPanel {{ background: {base.name()}; border: 1px solid "
            f"{border.name()}; border-radius: 12px; }}"
            f"QLabel#caption {{ color: {blend(text, base, 0.5).name()}; }}"
        )

    # -- what is shown -------------------------------------------------------------------

    def current_unit(self) -> ShownUnit | None:
        return self._shown

    def _clear_columns(self) -> None:
        for col in self.columns:
            col.remove(self.columns_box)
        for at in range(self.columns_box.columnCount()):
            self.columns_box.setColumnStretch(at, 0)
        self.columns = []

    def _show(self, unit: ShownUnit | None) -> None:
        self._shown = unit
        self._show_standing(0 if unit is None else len(unit.items))
        self._clear_columns()
        if unit is None:
            self.source.hide()
            self.question.hide()
            self.banner.hide()
            self.end_screen.show()
            self.hint.setText("")
            self._done_shown()
            return
        self._finished_sent = False
        self.end_screen.hide()
        self.source.show()
        self.question.show()
        self.source.set_plain(unit.source)
        hidden = bool(self.queue.settings.hidden_number)
        for letter, item in zip(LETTERS, unit.items, strict=False):
            row = DimensionRow(self.queue.scale, hidden_number=hidden, compact=True)
            col = OutputColumn(letter, row)
            col.panel.set_plain(item.output)
            row.scale.reset(item.values.get(self.queue.scale.name))
            row.scale.valueChanged.connect(self._value_changed)
            col.place(self.columns_box, len(self.columns))
            self.columns.append(col)
        self.banner.setVisible(unit.reviewing)
        self.banner.setText(
            "Revising earlier ratings. Enter saves a change; Alt+→ moves on without one."
        )
        self.columns[0].row.scale.setFocus(Qt.FocusReason.OtherFocusReason)
        self._notice_timer.stop()
        self._refresh_hint()

    def focus_chain(self) -> list[QWidget]:
        return [c.row.scale for c in self.columns]

    def scales(self) -> list[RatingScale]:
        return [c.row.scale for c in self.columns]

    def _refresh_hint(self, *_args: object) -> None:
        if self._notice_timer.isActive() or self._shown is None:
            return
        ready = all(c.row.scale.is_set() for c in self.columns)
        self.hint.setText(HINT_READY if ready else HINT_UNSET)

    # -- actions -------------------------------------------------------------------------

    def submit_current(self) -> bool:
        unit = self._shown
        if unit is None:
            return False
        if not all(c.row.scale.is_set() for c in self.columns):
            self.notice(HINT_BLOCKED)
            return False
        if unit.reviewing and not any(c.row.scale.touched() for c in self.columns):
            self._show(self.queue.following())
            return True
        values = {
            item.item_id: float(c.row.scale.value() or 0.0)
            for item, c in zip(unit.items, self.columns, strict=True)
        }
        starts = {
            item.item_id: c.row.scale.start_value()
            for item, c in zip(unit.items, self.columns, strict=True)
        }
        return self._submit(unit, submit_unit(self.queue, unit, values, starts))

    def _skip_job(self, shown: ShownUnit) -> Job[StudyChanges]:
        return skip_unit(self.queue, shown)

    def _undo_job(self) -> Job[Wrote[ShownUnit | None]]:
        return undo_unit(self.queue)

    def _flag_target(self) -> ShownItem | None:
        """The output whose slider has the keys (the first, when none has)."""
        unit = self._shown
        if unit is None:
            return None
        focused = QApplication.focusWidget()
        at = next((i for i, c in enumerate(self.columns) if c.row.scale is focused), 0)
        return unit.items[at]
