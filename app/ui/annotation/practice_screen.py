"""The practice block: a new rater scores the practice pairs and sees feedback on each.

Enter submits the score and shows whether it fell in the expected range, with the study
lead's explanation; Enter again goes on. Practice answers are stored apart from ratings,
written as the ratings are (`meaningbench.ops.practice`, through `ScreenWrites`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from meaningbench.ops.practice import answer_practice, open_practice
from meaningbench.queries.annotation import Feedback, Practice, Scale
from meaningbench.queries.files import StudyHandle
from meaningbench.ui.annotation import keys
from meaningbench.ui.annotation.pair_view import PairView
from meaningbench.ui.annotation.rows import DimensionRow
from meaningbench.ui.annotation.saving import ScreenWrites
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


class PracticeScreen(QWidget):
    done = Signal()

    def __init__(
        self,
        study: StudyHandle,
        annotator_name: str,
        parent: QWidget | None = None,
        *,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("practiceScreen")
        runner = runner if runner is not None else JobRunner(self)
        self.queue = runner.run_now(open_practice(study, annotator_name))
        self.writes = ScreenWrites(self, runner, self.notice)
        self.items: list[Practice] = self.queue.pending()
        self.total = len(self.items)
        self.feedback: Feedback | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 18, 24, 18)
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
        layout.setSpacing(14)
        layout.addStretch(1)
        for w in (self.banner, self.pair, self.row, self.result, self.hint):
            layout.addWidget(w)
        layout.addStretch(2)
        self._show()

    def _show(self) -> None:
        self.feedback = None
        self.result.setText("")
        if not self.items:
            self.done.emit()
            return
        p = self.items[0]
        n = self.total - len(self.items) + 1
        self.banner.setText(
            f"Practice {n} of {self.total} — not part of the study. After each, you see "
            "the range a careful rater's score falls in, and why."
        )
        self.pair.set_pair(p.source, p.output)
        self.row.scale.reset(None)
        self.row.scale.setFocus(Qt.FocusReason.OtherFocusReason)

    def submit(self) -> None:
        if self.feedback is not None:  # feedback read: go on
            self.items.pop(0)
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

    def notice(self, text: str) -> None:
        self.hint.setText(text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.submit()
            event.accept()
            return
        # Focus is on the screen itself (the host focused it): type into the slider.
        if self.items and keys.type_into_scales([self.row.scale], event):
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # light or dark: the cards follow
            self.pair.style_panels(self.palette())

    def focusInEvent(self, event: QFocusEvent) -> None:
        # A host that focuses the screen means "rate now": the slider takes the keys.
        super().focusInEvent(event)
        if self.items:
            self.row.scale.setFocus(Qt.FocusReason.OtherFocusReason)
