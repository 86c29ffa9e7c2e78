"""The Annotate page: pick an annotator, then host the rating screens.

The screens it hosts are its neighbours in `meaningbench.ui.annotation`: a new rater's
practice block first, then the annotation screen or the side-by-side one.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.annotation import protocol_of, rater_warnings
from meaningbench.queries.queue_progress import spent_text
from meaningbench.queries.rater_kit import KIT_SUFFIX
from meaningbench.queries.study import study_counts
from meaningbench.ui.annotation.picker import AnnotatorPicker
from meaningbench.ui.annotation.practice_screen import PracticeScreen
from meaningbench.ui.annotation.screen import AnnotationScreen
from meaningbench.ui.annotation.side_by_side import SideBySideScreen
from meaningbench.ui.icons import themed_icon
from meaningbench.ui.widgets import HeadingLabel
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.queries.files import StudyHandle
    from meaningbench.runtime.changes import StudyChanges
    from meaningbench.ui.context import StudyContext


INTRO = (
    "Each annotator has their own queue. Choose who is rating, then use the keyboard: "
    "arrows or digits set the slider, Enter submits, S skips, F flags, Ctrl+Z undoes."
)
KIT_INTRO = (
    "This kit holds your own items. Use the keyboard: arrows or digits set the slider, "
    "Enter submits, S skips, F flags, Ctrl+Z undoes. Each rating is saved when you submit it."
)


def send_back_place(study: StudyHandle, rater: str) -> tuple[Path, str]:
    """Where Send back puts a kit's copy unless the rater chooses another folder, and the
    copy's name (as `ops.kits.send_back_job` names it)."""
    from meaningbench.ops.kits import default_send_back_folder

    name = study.path.name if study.path.suffix == KIT_SUFFIX else f"{rater}{KIT_SUFFIX}"
    return default_send_back_folder(study), name


class AnnotatePage(QWidget):
    # The end screen's Send back (rater mode, `ui.rater_mode`, opens the dialog).
    send_back_requested = Signal()

    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("annotatePage")
        self.context = context
        # Shadows QWidget.screen() (the display), which the page never asks for.
        self.screen: AnnotationScreen | SideBySideScreen | None = None  # type: ignore[assignment]
        self.practice: PracticeScreen | None = None
        self.annotator: str | None = None
        # A rater kit's rater (rater mode): the page rates as them, with no picker.
        self.rater: str | None = None
        # Why nothing can be rated here (a kit where it cannot be written): no Start then.
        self.blocked: str | None = None
        # Ratings saved while the window was open, per study file and rater: the quit summary.
        self.saved: dict[tuple[Path | None, str], int] = {}
        self.last_saved_at: datetime | None = None
        self.summary_dialog: QDialog | None = None

        self.intro = QWidget()
        heading = HeadingLabel("Rate items", 1.6)
        heading.setObjectName("pageHeading")
        self.message = QLabel(INTRO)
        self.message.setObjectName("mutedLabel")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.start_button = QPushButton(themed_icon("annotate"), "Choose annotator and start")
        self.start_button.setObjectName("startAnnotation")
        self.start_button.setMinimumHeight(36)
        # clicked(bool) would pass its `checked` flag as the annotator's name.
        self.start_button.clicked.connect(lambda _checked=False: self.start())
        box = QVBoxLayout(self.intro)
        box.addStretch(1)
        for w in (heading, self.message):
            w.setAlignment(Qt.AlignmentFlag.AlignCenter)
            box.addWidget(w)
        box.addSpacing(12)
        box.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignCenter)
        # A study without items has nothing to rate: the way to fill it instead.
        self.import_button = QPushButton(themed_icon("import"), "Import data…")
        self.import_button.setObjectName("emptyStudyImport")
        self.import_button.setMinimumHeight(36)
        self.import_button.clicked.connect(lambda _c=False: context.import_requested.emit())
        self.import_button.hide()
        box.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignCenter)
        # The coordinator's view of the raters: who crosses the study's thresholds.
        self.rater_checks = QLabel()
        self.rater_checks.setObjectName("raterWarnings")
        self.rater_checks.setWordWrap(True)
        self.rater_checks.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.rater_checks.hide()
        box.addSpacing(18)
        box.addWidget(self.rater_checks)
        box.addStretch(2)

        self.stack = QStackedLayout(self)
        self.stack.addWidget(self.intro)
        context.study_closed.connect(self.stop)
        context.study_changed.connect(self._on_study_changed)
        context.study_opened.connect(lambda _study: self._refresh_intro())

    def start(self, annotator: str | None = None) -> bool:
        """Ask who is rating (unless given) and open their queue."""
        study = self.context.study
        if study is None:
            return False
        if self.blocked is not None:
            self.message.setText(self.blocked)
            return False
        if annotator is not None and not isinstance(annotator, str):
            raise TypeError(f"an annotator is a name, not {annotator!r}")
        if annotator is None and self.rater is not None:
            annotator = self.rater
        if annotator is None:
            picker = AnnotatorPicker(study, self)
            if picker.exec() != QDialog.DialogCode.Accepted:
                return False
            annotator = picker.selected_name()
            if not annotator:
                return False
        self.stop()
        practice = PracticeScreen(
            study, annotator, self, runner=self.context.runner, in_kit=self.rater is not None
        )
        if practice.needed:
            # A new rater practises first; the study's queue opens when the block is done
            # (never, for a rater the pass mark stops: the screen says why).
            self.practice = practice
            practice.done.connect(lambda who=annotator: self._after_practice(who))
            practice.send_back_requested.connect(self.send_back_requested)
            self.stack.addWidget(practice)
            self.stack.setCurrentWidget(practice)
            practice.setFocus()
            return True
        practice.deleteLater()
        return self._open_screen(annotator)

    def _after_practice(self, annotator: str) -> None:
        if self.practice is not None:
            self.stack.removeWidget(self.practice)
            self.practice.deleteLater()
            self.practice = None
        self._open_screen(annotator)

    def _open_screen(self, annotator: str) -> bool:
        study = self.context.study
        if study is None:
            return False
        screen_class = SideBySideScreen if protocol_of(study) == "sxs" else AnnotationScreen
        screen = screen_class(study, annotator, self, runner=self.context.runner)
        where = self.context.path
        screen.submitted.connect(lambda _id, at=(where, annotator): self._count(at, +1))
        screen.undone.connect(lambda _id, at=(where, annotator): self._count(at, -1))
        screen.finished.connect(self._on_finished)
        screen.send_back_requested.connect(self.send_back_requested)
        if self.rater is not None:
            screen.set_send_back(*send_back_place(study, self.rater))
        self.screen, self.annotator = screen, annotator
        self.stack.addWidget(screen)
        self.stack.setCurrentWidget(screen)
        screen.setFocus()
        return True

    def stop(self) -> None:
        if self.practice is not None:
            self.stack.removeWidget(self.practice)
            self.practice.deleteLater()
            self.practice = None
        if self.screen is not None:
            self.stack.removeWidget(self.screen)
            self.screen.deleteLater()
            self.screen = None
        self.stack.setCurrentWidget(self.intro)

    def set_rater(self, rater: str | None) -> None:
        """Rate as a kit's `rater` (rater mode: no picker, no rater checks), or as anyone
        chosen (None)."""
        self.stop()
        self.rater = rater
        self.blocked = None
        self.start_button.setText("Start rating" if rater else "Choose annotator and start")
        self.message.setText(KIT_INTRO if rater else INTRO)
        self.refresh_rater_checks()

    def block(self, why: str) -> None:
        """Say why nothing can be rated in this file, and offer no way to start."""
        self.stop()
        self.blocked = why
        self.message.setText(why)
        self.start_button.hide()

    def notice(self, text: str) -> None:
        """Say `text` where the rater is looking: the rating screen's hint line, the
        practice's, or the page's message."""
        if self.screen is not None:
            self.screen.notice(text)
        elif self.practice is not None:
            self.practice.hint.setText(text)
        else:
            self.message.setText(text)

    def _on_finished(self) -> None:
        if self.rater is not None:
            return  # the screen stays, saying how to send the ratings back
        who = self.annotator or "This annotator"
        spent = spent_text(self.screen.standing().spent) if self.screen is not None else ""
        self.stop()
        self.message.setText(
            f"{who} has rated every item in their queue"
            + (f" ({spent} of rating time)" if spent else "")
            + ". Thank you! Their queue is done: choose another annotator to go on."
        )
        self.refresh_rater_checks()

    def _count(self, at: tuple[Path | None, str], delta: int) -> None:
        self.saved[at] = max(0, self.saved.get(at, 0) + delta)
        if delta > 0:
            self.last_saved_at = datetime.now()

    def quit_summary(self) -> str | None:
        """What was saved while the window was open; None when nobody rated."""
        done = {at: n for at, n in self.saved.items() if n}
        if not done:
            return None
        names = [path.name for path, _who in done if path is not None]

        def study_name(path: Path | None) -> str:
            if path is None:
                return "the study file"
            # Two studies of one name in different folders are told apart by their paths.
            return str(path) if names.count(path.name) > 1 else path.name

        lines = [
            f"{who}: {counted(n, 'rating')} saved to {study_name(path)}"
            for (path, who), n in sorted(done.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
        ]
        studies = {path for path, _who in done}
        where = study_name(next(iter(studies))) if len(studies) == 1 else "its study file"
        when = f" (the last at {self.last_saved_at:%H:%M:%S})" if self.last_saved_at else ""
        return (
            "\n".join(lines)
            + f"\n\nEvery rating was written to {where} when it was submitted{when}; "
            "nothing is waiting to be saved. "
            + (
                "Open the kit again to go on where you stopped, and choose Send back to "
                "return your ratings."
                if self.rater is not None
                else "Start again from the Annotate page to go on where you stopped."
            )
        )

    def shutdown(self) -> None:
        """On quit: say what was saved. The box outlives the window (the application
        quits when it is closed), so it never holds the closing window up."""
        text = self.quit_summary()
        if text is None:
            return
        box = QDialog()
        box.setObjectName("quitSummary")
        box.setWindowTitle("Ratings saved")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        label = QLabel(text)
        label.setObjectName("quitSummaryText")
        label.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(box.accept)
        layout = QVBoxLayout(box)
        layout.addWidget(label)
        layout.addWidget(buttons)
        # As tall as the wrapped text is at the box's width: the box's own size hint wraps
        # it at another width, and the first and last lines (how to send back) were cut.
        width = max(460, box.sizeHint().width())
        tall = layout.totalHeightForWidth(width)
        box.setMinimumSize(width, tall)
        box.resize(width, tall)
        box.show()
        self.summary_dialog = box

    def page_shown(self) -> None:
        if self.screen is not None:
            self.screen.setFocus()
        else:
            self._show_empty_hint()
            self.refresh_rater_checks()

    def _on_study_changed(self, changes: StudyChanges) -> None:
        if changes.everything:  # an import or a merge: the counts on the intro page
            self._refresh_intro()

    def _refresh_intro(self) -> None:
        if self.screen is None and self.practice is None:
            self._show_empty_hint()

    def _show_empty_hint(self) -> None:
        study = self.context.study
        empty = study is not None and study_counts(study).items == 0
        self.start_button.setVisible(not empty and self.blocked is None)
        self.import_button.setVisible(empty)
        if empty:
            self.message.setText(
                "This study has no items to rate yet. Import a file of original and "
                "simplified sentences first."
            )
        elif self.message.text().startswith("This study has no items"):
            self.message.setText(KIT_INTRO if self.rater else INTRO)

    def refresh_rater_checks(self) -> None:
        """Warn about raters below the study's thresholds (shown between rating sessions)."""
        study = self.context.study
        # A kit holds one rater: the checks are the study lead's, on the collected ratings.
        warnings = rater_warnings(study) if study is not None and self.rater is None else {}
        if not warnings:
            self.rater_checks.hide()
            return
        lines = [f"⚠ {who}: {'; '.join(items)}" for who, items in sorted(warnings.items())]
        self.rater_checks.setText(
            "Rater checks (thresholds: meaningbench raters --threshold):\n" + "\n".join(lines)
        )
        self.rater_checks.show()
