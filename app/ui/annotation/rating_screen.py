"""What the two rating screens share: the annotation screen (one item, one scale per
dimension) and the side-by-side screen (a source's outputs, one slider each).

`RatingScreen` holds the rater's cursor over their queue (`queries.rating_cursor`, opened
by an op), the writes (`ScreenWrites`: one answer to a full disk or a read-only study for
every write of both screens), the moves through the queue (skip, undo, back and forth),
the flag dialog, the notices in the hint line and the keys both read. A screen adds how
its queue opens, its layout, what it shows (`_show`), its submission, skip and undo (each
an op on its cursor) and its hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QWidget

from meaningbench.queries.annotation import ShownItem
from meaningbench.queries.files import StudyHandle
from meaningbench.queries.queue_progress import SPENT_TIP, Standing, counter_text
from meaningbench.queries.rating_cursor import RatingCursor
from meaningbench.runtime import Job
from meaningbench.runtime.changes import StudyChanges, Wrote
from meaningbench.ui.annotation import keys
from meaningbench.ui.annotation.end_screen import EndScreen
from meaningbench.ui.annotation.focus import keep_focus_in
from meaningbench.ui.annotation.panels import FlagDialog
from meaningbench.ui.annotation.saving import ScreenWrites
from meaningbench.ui.annotation.scales import RatingScale, held, typed_digit
from meaningbench.ui.workers import JobRunner

K = Qt.Key
NOTICE_MS = 4000


@dataclass(frozen=True)
class Words:
    """What a screen's notices call what it shows ("item", "these outputs")."""

    skip_refused: str
    skipped: str
    no_earlier: str
    nothing_after: str
    undone_back: str  # an undone revision: the earlier rating is back
    undone_open: str  # an undone first rating: open to rate again


class Shown(Protocol):
    """What a rating screen shows: an item or a unit, rated before or not."""

    @property
    def reviewing(self) -> bool: ...


S = TypeVar("S", bound=Shown)


class RatingScreen(QWidget, Generic[S]):
    submitted = Signal(int)
    # An undo changes the study's ratings as much as a submission: views must refresh.
    undone = Signal(int)
    finished = Signal()
    # The end screen's Send back button (a rater kit): the host opens the dialog.
    send_back_requested = Signal()
    WORDS: ClassVar[Words]
    # What the counter calls one entry and several ("Item 3 of 12", "Outputs 4–6 of 12").
    COUNTED: ClassVar[tuple[str, str]] = ("Item", "Items")

    # Made by the screen: its read-only cursor over the rater's queue (`_open`), its hint
    # line, saved stamp, counter and end screen (`_build`).
    queue: RatingCursor[S]
    hint: QLabel
    saved_label: QLabel
    progress_label: QLabel
    end_screen: EndScreen

    def __init__(
        self,
        study: StudyHandle,
        annotator_name: str,
        parent: QWidget | None = None,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        # Ratings are written through the app's runner, which tells every screen.
        self.runner = runner if runner is not None else JobRunner(self)
        self._open(study, annotator_name)
        self.writes = ScreenWrites(self, self.runner, self.notice)
        self._shown: S | None = None
        self._finished_sent = False
        self._flag_dialog: FlagDialog | None = None
        self.saved_count = 0  # submissions on this screen (undos subtract)
        self.last_saved_at: datetime | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(self._refresh_hint)
        self._build()
        self._show(self._first())

    # -- what the screen adds ------------------------------------------------------------

    def _open(self, study: StudyHandle, annotator_name: str) -> None:
        """Open the rater's queue through its op (`self.runner.run_now`): the `queue`."""
        raise NotImplementedError

    def _build(self) -> None:
        """Make the screen's widgets (its `hint` and `saved_label` among them)."""
        raise NotImplementedError

    def _first(self) -> S | None:
        """What the screen shows when it opens."""
        raise NotImplementedError

    def _show(self, shown: S | None) -> None:
        """Show `shown`, or the done page for None."""
        raise NotImplementedError

    def _refresh_hint(self, *_args: object) -> None:
        raise NotImplementedError

    def focus_chain(self) -> list[QWidget]:
        """What takes the keys, in Tab's order."""
        raise NotImplementedError

    def scales(self) -> list[RatingScale]:
        """The scales a digit typed on the screen itself goes to."""
        raise NotImplementedError

    def submit_current(self) -> bool:
        """Enter: store what the scales say (through `_submit`) and go on."""
        raise NotImplementedError

    def _skip_job(self, shown: S) -> Job[StudyChanges]:
        """The op that moves `shown` to the end of the queue."""
        raise NotImplementedError

    def _undo_job(self) -> Job[Wrote[S | None]]:
        """The op that withdraws the latest submission; its value is what is shown again."""
        raise NotImplementedError

    def _flag_target(self) -> ShownItem | None:
        """The item F flags."""
        raise NotImplementedError

    def _flag_saved(self, item_id: int) -> None:
        """After a flag or its removal was stored (the screen shows what it needs to)."""

    # -- what is shown -------------------------------------------------------------------

    def _done_shown(self) -> None:
        """Part of `_show(None)`: tell the host once that everything is rated."""
        if not self._finished_sent:
            self._finished_sent = True
            self.finished.emit()

    def set_send_back(self, folder: Path | None, file_name: str = "") -> None:
        """A rater kit: the end screen offers Send back into `folder` (`file_name`, the
        copy's name); None: the lead's own study, whose end screen says the queue is done."""
        self.end_screen.set_send_back(folder, file_name)

    def _make_end_screen(self) -> EndScreen:
        """Part of `_build`: the end screen, its Send back passed on to the host."""
        self.end_screen = EndScreen()
        self.end_screen.send_back_requested.connect(self.send_back_requested)
        # A long count ("Revising · 10000 of 12500 rated · 3 skipped · 123 h 05 min spent")
        # must not widen the screen past a 1024 px laptop's window: at worst it is cut,
        # and its tooltip says it whole.
        self.progress_label.setMinimumWidth(1)
        return self.end_screen

    def _show_standing(self, on_screen: int) -> Standing:
        """Part of `_show`: the counter in the header, and the end screen's summary when
        nothing is on screen; the standing, for what else the screen shows of it."""
        standing = self.queue.standing(on_screen)
        text = counter_text(standing, *self.COUNTED)
        self.progress_label.setText(text)
        self.progress_label.setToolTip(f"{text}\n\n{SPENT_TIP}")
        if on_screen == 0:
            self.end_screen.show_standing(standing, self.COUNTED[1].lower())
        return standing

    def standing(self) -> Standing:
        """Where the rater stands now (the host's words after the last item)."""
        return self.queue.standing(0)

    def notice(self, text: str) -> None:
        """A short message in the hint line (what just happened, or why nothing did)."""
        self.hint.setText(text)
        self._notice_timer.start(NOTICE_MS)

    def _value_changed(self, *_args: object) -> None:
        # A notice ("Not submitted: …") spoke of the values before this change: the hint
        # says what Enter does now.
        self._notice_timer.stop()
        self._refresh_hint()

    def _stamp(self, what: str) -> None:
        """Proof on screen that a write reached the study file, with the time it did."""
        self.saved_label.setText(f"{what} ✓ {datetime.now():%H:%M:%S}")

    # -- actions -------------------------------------------------------------------------

    def _submit(self, shown: S, job: Job[StudyChanges]) -> bool:
        """Store a submission of what is shown and go on; False when it was not stored
        (the values stay, to submit again once there is room)."""
        if self.writes.save("Rating not saved", job) is None:
            return False
        self.saved_count += 1
        self.last_saved_at = datetime.now()
        self._stamp("Saved")
        for item_id in self.queue.item_ids(shown):
            self.submitted.emit(item_id)
        self._show(self.queue.advance())
        return True

    def undo_last(self) -> None:
        undone = self.writes.save("Undo not saved", self._undo_job())
        if undone is None:
            return
        shown = undone.value
        if shown is None:
            self.notice("Nothing to undo.")
            return
        self.saved_count = max(0, self.saved_count - 1)
        self._stamp("Undo saved")
        for item_id in self.queue.item_ids(shown):
            self.undone.emit(item_id)
        self._show(shown)
        self.notice(self.WORDS.undone_back if shown.reviewing else self.WORDS.undone_open)

    def skip_current(self) -> None:
        shown = self._shown
        if shown is None:
            return
        if shown.reviewing:
            self.notice(self.WORDS.skip_refused)
            return
        if self.writes.save("Skip not saved", self._skip_job(shown)) is None:
            return
        self._show(self.queue.next())
        self.notice(self.WORDS.skipped)

    def go_previous(self) -> None:
        shown = self.queue.previous()
        if shown is None:
            self.notice(self.WORDS.no_earlier)
            return
        self._show(shown)

    def go_following(self) -> None:
        if not self.queue.reviewing:
            self.notice(self.WORDS.nothing_after)
            return
        self._show(self.queue.following())

    def flag_current(self) -> None:
        item = self._flag_target()
        if item is None:
            return
        dialog = FlagDialog(item.comment, item.flagged, self)
        self._flag_dialog = dialog
        dialog.finished.connect(lambda code: self._flag_done(item.item_id, dialog, code))
        dialog.open()

    def _flag_done(self, item_id: int, dialog: FlagDialog, code: int) -> None:
        self._flag_dialog = None
        # Keys go back to the rating window at once, whatever the window manager does.
        self.window().activateWindow()
        job = dialog.write(self.queue, item_id, code)
        dialog.deleteLater()
        if job is not None:
            if self.writes.save("Flag not saved", job) is None:
                return  # the message box has the keys; the flag is as it was
            self._flag_saved(item_id)
            self.notice("Flag removed." if code == FlagDialog.REMOVE else "Flagged.")
        self._focus_scale()

    # -- keys and focus --------------------------------------------------------------------

    def _action_for(self, event: QKeyEvent) -> keys.Action | None:
        """Undo, back and forth, submit (`keys.shared_action`), then the screen's own keys."""
        key, mods = event.key(), event.modifiers()
        handled, action = keys.shared_action(self, key, mods, held(event))
        if handled:
            return action
        return self._own_key(key, mods)

    def _own_key(self, key: int, _mods: Qt.KeyboardModifier) -> keys.Action | None:
        """S skips, F flags."""
        plain: dict[int, keys.Action] = {K.Key_S: self.skip_current, K.Key_F: self.flag_current}
        return plain.get(key)

    def _types_digits(self) -> bool:
        """Whether a digit typed on the screen itself goes to a scale now."""
        return self._shown is not None

    def event(self, event: QEvent) -> bool:
        return keys.claim_keys(event, self._claims) or super().event(event)

    def _claims(self, event: QKeyEvent) -> bool:
        return self._action_for(event) is not None or typed_digit(event) is not None

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if keys.run_key_action(self._action_for(event), event):
            return
        if self._types_digits() and keys.type_into_scales(self.scales(), event):
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        # A host that focuses the screen (page shown, window activated) means "rate now".
        super().focusInEvent(event)
        self._focus_scale()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._focus_scale()  # focus given while hidden does not stick

    def _focus_scale(self) -> None:
        if self._shown is not None:
            keep_focus_in(self.focus_chain())

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: A002, N802 - Qt's names
        """Tab and Shift+Tab cycle through the focus chain (texts take no focus)."""
        chain = self.focus_chain() if self._shown is not None else []
        if not chain:
            return super().focusNextPrevChild(next)
        focused = self.focusWidget()
        at = [i for i, w in enumerate(chain) if w is focused]  # `next` is Qt's argument here
        if not at:
            target = 0 if next else len(chain) - 1
        else:
            target = (at[0] + (1 if next else -1)) % len(chain)
        chain[target].setFocus(
            Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason
        )
        return True
