"""The side-by-side screen (sxs): one original, its outputs beside each other, one slider each.

Keys as on the slider screen: Tab / Shift+Tab move between the outputs' sliders, digits and
arrows set the focused one, Enter submits the unit once every slider is set, Ctrl+Z undoes
the last unit, S skips the unit, F flags the output in focus, Alt+← / Alt+→ revise earlier
units. Every write is an op of `meaningbench.ops` run through `ScreenWrites`.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.rate import SideBySideSession, rating_session, submit_unit, undo_unit
from meaningbench.ops.skip import skip_unit
from meaningbench.queries.annotation import ShownUnit
from meaningbench.queries.files import StudyHandle
from meaningbench.ui.annotation import keys
from meaningbench.ui.annotation.focus import keep_focus_in
from meaningbench.ui.annotation.panels import FlagDialog
from meaningbench.ui.annotation.rows import DimensionRow
from meaningbench.ui.annotation.saving import ScreenWrites
from meaningbench.ui.annotation.scales import blend
from meaningbench.ui.annotation.text_panel import TextPanel
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobRunner

K = Qt.Key
HINT_UNSET = "Rate every output: Tab moves between them, digits or arrows set the slider."
HINT_READY = "Press Enter to submit these ratings and go on."
HINT_BLOCKED = "Not submitted: every output needs a rating first."
NOTICE_MS = 4000
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


class SideBySideScreen(QWidget):
    submitted = Signal(int)
    undone = Signal(int)
    finished = Signal()
    # Said under "All outputs are rated" (a kit's rater: how to send the ratings back).
    done_note = ""

    def __init__(
        self,
        study: StudyHandle,
        annotator_name: str,
        parent: QWidget | None = None,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("sideBySideScreen")
        self.session = rating_session(study, annotator_name)
        # Ratings are written through the app's runner, which tells every screen.
        self.runner = runner if runner is not None else JobRunner(self)
        self.writes = ScreenWrites(self, self.runner, self.notice)
        self.sxs = SideBySideSession(self.session)
        self._unit: ShownUnit | None = None
        self._finished_sent = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 18, 24, 18)
        outer.setSpacing(12)
        header = QHBoxLayout()
        self.who_label = QLabel(f"Rating as <b>{annotator_name}</b> · side by side")
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
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.hide()
        outer.addWidget(self.banner)
        self.source = TextPanel("Original")
        outer.addWidget(self.source)
        scale = self.sxs.scale
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
        self.done_label = QLabel()
        self.done_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_label.hide()
        outer.addWidget(self.done_label, 1)
        self.hint = QLabel(HINT_UNSET)
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        outer.addWidget(self.hint)
        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(self._refresh_hint)
        self._style()
        self._show(self.sxs.next_unit())

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
        return self._unit

    def _clear_columns(self) -> None:
        for col in self.columns:
            col.remove(self.columns_box)
        for at in range(self.columns_box.columnCount()):
            self.columns_box.setColumnStretch(at, 0)
        self.columns = []

    def _show(self, unit: ShownUnit | None) -> None:
        self._unit = unit
        progress = self.session.progress()
        self.progress_label.setText(
            f"{progress.rated} of {counted(progress.total, 'output')} rated · {progress.left} left"
        )
        self._clear_columns()
        if unit is None:
            self.source.hide()
            self.banner.hide()
            note = f"\n\n{self.done_note}" if self.done_note else ""
            self.done_label.setText(f"All outputs are rated — thank you.{note}")
            self.done_label.show()
            self.hint.setText("")
            if not self._finished_sent:
                self._finished_sent = True
                self.finished.emit()
            return
        self._finished_sent = False
        self.done_label.hide()
        self.source.show()
        self.source.set_plain(unit.source)
        hidden = bool(self.session.settings.hidden_number)
        for letter, item in zip(LETTERS, unit.items, strict=False):
            row = DimensionRow(self.sxs.scale, hidden_number=hidden, compact=True)
            col = OutputColumn(letter, row)
            col.panel.set_plain(item.output)
            row.scale.reset(item.values.get(self.sxs.scale.name))
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

    def _value_changed(self, *_args: object) -> None:
        self._notice_timer.stop()  # a notice spoke of the values before this change
        self._refresh_hint()

    def _refresh_hint(self, *_args: object) -> None:
        if self._notice_timer.isActive() or self._unit is None:
            return
        ready = all(c.row.scale.is_set() for c in self.columns)
        self.hint.setText(HINT_READY if ready else HINT_UNSET)

    def set_done_note(self, note: str) -> None:
        self.done_note = note
        if self._unit is None:  # already done: say it now
            self._show(None)

    def notice(self, text: str) -> None:
        self.hint.setText(text)
        self._notice_timer.start(NOTICE_MS)

    # -- actions -------------------------------------------------------------------------

    def submit_current(self) -> bool:
        unit = self._unit
        if unit is None:
            return False
        if not all(c.row.scale.is_set() for c in self.columns):
            self.notice(HINT_BLOCKED)
            return False
        if unit.reviewing and not any(c.row.scale.touched() for c in self.columns):
            self._show(self.sxs.following())
            return True
        values = {
            item.item_id: float(c.row.scale.value() or 0.0)
            for item, c in zip(unit.items, self.columns, strict=True)
        }
        starts = {
            item.item_id: c.row.scale.start_value()
            for item, c in zip(unit.items, self.columns, strict=True)
        }
        # Not saved: the values stay on the sliders, to submit again once there is room.
        if (
            self.writes.save("Rating not saved", submit_unit(self.sxs, unit, values, starts))
            is None
        ):
            return False
        self.saved_label.setText(f"Saved ✓ {datetime.now():%H:%M:%S}")
        for item_id in unit.item_ids:
            self.submitted.emit(item_id)
        self._show(self.sxs.advance())
        return True

    def undo_last(self) -> None:
        undone = self.writes.save("Undo not saved", undo_unit(self.sxs))
        if undone is None:
            return
        unit = undone.value
        if unit is None:
            self.notice("Nothing to undo.")
            return
        self.saved_label.setText(f"Undo saved ✓ {datetime.now():%H:%M:%S}")
        for item_id in unit.item_ids:
            self.undone.emit(item_id)
        self._show(unit)
        self.notice("Undone: these outputs are open again.")

    def skip_current(self) -> None:
        unit = self._unit
        if unit is None or unit.reviewing:
            self.notice("Only unrated outputs can be skipped.")
            return
        if self.writes.save("Skip not saved", skip_unit(self.sxs, unit)) is None:
            return
        self._show(self.sxs.next_unit())
        self.notice("Skipped — these outputs come back later.")

    def go_previous(self) -> None:
        unit = self.sxs.previous()
        if unit is None:
            self.notice("No earlier rated outputs.")
            return
        self._show(unit)

    def go_following(self) -> None:
        if not self.sxs.reviewing:
            self.notice("Nothing after these outputs is rated yet.")
            return
        self._show(self.sxs.following())

    def flag_current(self) -> None:
        unit = self._unit
        if unit is None:
            return
        focused = QApplication.focusWidget()
        at = next((i for i, c in enumerate(self.columns) if c.row.scale is focused), 0)
        item = unit.items[at]
        dialog = FlagDialog(item.comment, item.flagged, self)
        dialog.finished.connect(lambda code: self._flag_done(item.item_id, dialog, code))
        dialog.open()
        self._flag_dialog = dialog

    def _flag_done(self, item_id: int, dialog: FlagDialog, code: int) -> None:
        self.window().activateWindow()
        job = dialog.write(self.session, item_id, code)
        dialog.deleteLater()
        if job is not None:
            if self.writes.save("Flag not saved", job) is None:
                return  # the message box has the keys; the flag is as it was
            self.notice("Flag removed." if code == FlagDialog.REMOVE else "Flagged.")
        if self.columns:
            self.columns[0].row.scale.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- keys ------------------------------------------------------------------------------

    def _action_for(self, event: QKeyEvent) -> keys.Action | None:
        key, mods = event.key(), event.modifiers()
        handled, action = keys.shared_action(self, key, mods)
        if handled:
            return action
        return {K.Key_S: self.skip_current, K.Key_F: self.flag_current}.get(Qt.Key(key))

    def event(self, event: QEvent) -> bool:
        return keys.claim_keys(event, self._claims) or super().event(event)

    def _claims(self, event: QKeyEvent) -> bool:
        return self._action_for(event) is not None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if keys.run_key_action(self._action_for(event), event):
            return
        if keys.type_into_scales([c.row.scale for c in self.columns], event):
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        # A host that focuses the screen (queue opened or resumed, page shown) means
        # "rate now": the first output's slider takes the keys.
        super().focusInEvent(event)
        keep_focus_in([c.row.scale for c in self.columns])

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        keep_focus_in([c.row.scale for c in self.columns])  # focus given while hidden is lost

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: A002 - Qt's name
        """Tab and Shift+Tab cycle through the outputs' sliders."""
        if not self.columns:
            return super().focusNextPrevChild(next)
        scales = [c.row.scale for c in self.columns]
        focused = self.focusWidget()
        at = [i for i, sc in enumerate(scales) if sc is focused]
        target = (at[0] + (1 if next else -1)) % len(scales) if at else 0
        scales[target].setFocus(Qt.FocusReason.TabFocusReason)
        return True
