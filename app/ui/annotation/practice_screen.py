"""The practice block: a new rater scores the practice pairs and sees feedback on each.

Enter submits the score and shows whether it fell in the expected range, with the study
lead's explanation; Enter again goes on. Practice answers are stored apart from ratings,
written as the ratings are (`meaningbench.ops.practice`, through `ScreenWrites`).

Under a pass mark (`meaningbench.annotation.practice`), the end of each attempt says
whether it passed and how many attempts are left; Enter then starts rating, or the next
attempt. A rater out of attempts where the study stops them sees why they cannot start
yet and what to do, and nothing else (`refused`): the rating screen never opens.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from meaningbench.ops.practice import answer_practice, open_practice
from meaningbench.queries.annotation import Feedback, Practice, PracticeStanding, Scale
from meaningbench.queries.files import StudyHandle
from meaningbench.ui.annotation import keys
from meaningbench.ui.annotation.pair_view import PairView
from meaningbench.ui.annotation.rows import DimensionRow
from meaningbench.ui.annotation.saving import ScreenWrites
from meaningbench.ui.annotation.scales import held
from meaningbench.ui.widgets import HeadingLabel
from meaningbench.ui.workers import JobRunner

PRACTICE_SCALE = Scale(
    id=0,
    name="practice",
    scale="continuous",
    min_value=0.0,
    max_value=100.0,
    label_low="no meaning preserved",
    label_high="all meaning preserved",
    question="How much of the original's meaning does the simplified text keep?",
)


REFUSED_TITLE = "You cannot start rating yet"


class PracticeScreen(QWidget):
    done = Signal()
    # Out of attempts where the study stops a rater: the screen says why, and stays.
    refused = Signal()
    # The refusal's Send back (in a rater's kit: the lead sees the attempts once it is back).
    send_back_requested = Signal()

    def __init__(
        self,
        study: StudyHandle,
        annotator_name: str,
        parent: QWidget | None = None,
        *,
        runner: JobRunner | None = None,
        in_kit: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("practiceScreen")
        runner = runner if runner is not None else JobRunner(self)
        self.in_kit = in_kit
        self.queue = runner.run_now(open_practice(study, annotator_name))
        self.writes = ScreenWrites(self, runner, self.notice)
        self.standing: PracticeStanding = self.queue.standing()
        self.items: list[Practice] = self.queue.pending()
        self.total = len(self.items)
        self.feedback: Feedback | None = None
        # The end of an attempt is on screen: Enter goes on to rating or the next attempt.
        self.verdict_shown = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 18, 24, 18)
        self.title = HeadingLabel(REFUSED_TITLE, 1.3)
        self.title.setObjectName("practiceRefusedTitle")
        self.title.hide()
        self.send_back = QPushButton("Send back…")
        self.send_back.setObjectName("practiceSendBack")
        self.send_back.setToolTip("Send your practice answers back to your study lead")
        self.send_back.clicked.connect(self.send_back_requested)
        self.send_back.hide()
        self.banner = QLabel()
        self.banner.setObjectName("practiceBanner")
        self.banner.setWordWrap(True)
        self.pair = PairView()
        self.row = DimensionRow(PRACTICE_SCALE)
        self.result = QLabel()
        self.result.setObjectName("practiceFeedback")
        self.result.setWordWrap(True)
        self.hint = QLabel("Set the slider, then press Enter to see how you did.")
        # Laid out as the rating screen is: the pair in cards, a little above the middle.
        self.pair.style_panels(self.palette())
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        layout.setSpacing(14)
        layout.addStretch(1)
        for w in (self.title, self.banner, self.pair, self.row, self.result, self.hint):
            layout.addWidget(w)
        buttons = QHBoxLayout()
        buttons.addWidget(self.send_back)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addStretch(2)
        if self.standing.stopped:
            self._refuse()
        else:
            self._show()

    @property
    def needed(self) -> bool:
        """Whether the rater must be here before rating: practice to do, or refused."""
        return bool(self.items) or self.standing.stopped

    def _show(self) -> None:
        self.feedback = None
        self.verdict_shown = False
        self.row.setEnabled(True)
        self.result.setText("")
        if not self.items:
            self.done.emit()
            return
        p = self.items[0]
        n = self.total - len(self.items) + 1
        mark = self.standing.mark
        attempt = (
            f" (attempt {self.standing.current()} of {mark.attempts})"
            if mark is not None and self.standing.items
            else ""
        )
        self.banner.setText(
            f"Practice {n} of {self.total}{attempt} — not part of the study. After each, you "
            "see the range a careful rater's score falls in, and why."
        )
        self.pair.set_pair(p.source, p.output)
        self.row.scale.reset(None)
        self.row.scale.setFocus(Qt.FocusReason.OtherFocusReason)

    def submit(self) -> None:
        if self.standing.stopped:
            return  # refused: nothing to submit
        if self.verdict_shown:  # the attempt's end read: rate, or the next attempt
            self.items = self.queue.pending()
            self.total = len(self.items)
            self._show()
            return
        if self.feedback is not None:  # feedback read: go on
            self.items.pop(0)
            if not self.items and self._attempt_ended():
                return
            self._show()
            return
        value = self.row.scale.value()
        if value is None or not self.items:
            self.hint.setText("Set the slider first (a digit or the arrows).")
            return
        answered = self.writes.save(
            "Answer not saved", answer_practice(self.queue, self.items[0], value)
        )
        if answered is None:
            return  # the slider keeps the value: Enter tries again
        self.feedback = answered.value
        mark = "✓" if self.feedback.passed else "✗"
        self.result.setText(f"{mark} {self.feedback.text()}")
        self.hint.setText("Press Enter to go on.")

    def _attempt_ended(self) -> bool:
        """At the end of an attempt under a pass mark, say how it went (True), or refuse;
        False: no pass mark, on to rating."""
        self.standing = self.queue.standing()
        mark = self.standing.mark
        if mark is None or not self.standing.attempts:
            return False
        if self.standing.stopped:
            self._refuse()
            return True
        last = self.standing.attempts[-1]
        self.verdict_shown = True
        self.row.setEnabled(False)
        self.setFocus(Qt.FocusReason.OtherFocusReason)  # Enter reaches the screen
        near = f"within {mark.points:g} points of" if mark.points else "inside"
        said = f"Attempt {last.number}: {last.within} of {self.standing.items} {near} the "
        said += "expected range"
        if self.standing.passed:
            self.result.setText(f"✓ {said}: you passed (the pass mark is {mark.items}).")
            self.hint.setText("Press Enter to start rating.")
        elif self.standing.flagged:
            self.result.setText(
                f"✗ {said}; the pass mark is {mark.items}, and that was your last attempt. "
                "You may rate: your study lead will see that the practice was not passed."
            )
            self.hint.setText("Press Enter to start rating.")
        else:
            left = self.standing.attempts_left
            self.result.setText(
                f"✗ {said}; the pass mark is {mark.items}. {left} "
                f"{'attempt' if left == 1 else 'attempts'} left."
            )
            self.hint.setText("Press Enter to go through the practice again.")
        return True

    def _refuse(self) -> None:
        """Why the rater cannot start yet, and what to do; nothing else on screen."""
        self.items = []
        self.title.show()
        self.pair.hide()
        self.row.hide()
        counts = ", then ".join(
            f"{a.within} of {self.standing.items}" for a in self.standing.attempts
        )
        self.banner.setText(f"Your practice attempts: {counts} close enough to the expected range.")
        self.result.setText(self.standing.refusal() or "")
        self.hint.setText(
            "Use Send back to return this kit with your practice answers, then contact your "
            "study lead."
            if self.in_kit
            else "Contact your study lead: they can give you another attempt."
        )
        self.send_back.setVisible(self.in_kit)
        self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.refused.emit()

    def notice(self, text: str) -> None:
        self.hint.setText(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if not held(event):
                self.submit()
            event.accept()
            return
        # Focus is on the screen itself (the host focused it): type into the slider.
        if self.items and not self.verdict_shown and keys.type_into_scales([self.row.scale], event):
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # light or dark: the cards follow
            self.pair.style_panels(self.palette())

    def focusInEvent(self, event: QFocusEvent) -> None:
        # A host that focuses the screen means "rate now": the slider takes the keys.
        super().focusInEvent(event)
        if self.items and not self.verdict_shown:
            self.row.scale.setFocus(Qt.FocusReason.OtherFocusReason)
