"""The end screen: shown by a rating screen once every entry of the rater's queue is rated.

It says what was done and in how much rating time (`queries.queue_progress`), and what to
do next: in a rater kit, Send back, with the folder the copy goes into; in the lead's own
study, that this queue is done. It takes no key: the rating screen around it keeps the
keys, where a digit sets nothing with no item on screen and Ctrl+Z and Alt+← work as on
any item. Its one button (Send back) takes no focus, so Enter and Space cannot press it.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from meaningbench.queries.queue_progress import SPENT_TIP, Standing, end_summary
from meaningbench.ui.widgets import HeadingLabel

REVISE = "Alt+← goes back through your ratings to revise them; Ctrl+Z undoes the last one."
HAND_OVER = (
    "Then give that file to your study lead: by e-mail, on a USB stick or in a shared folder."
)
COLUMN_WIDTH = 640
LEAD_NEXT = (
    "This annotator's queue is done. Another annotator starts from the Annotate page "
    "(Choose annotator and start); the ratings are in the study already."
)


def breakable_path(folder: Path) -> str:
    """`folder` as rich text that may wrap after each separator."""
    sep = "\\" if "\\" in str(folder) else "/"
    return (sep + "\u200b").join(html.escape(part) for part in str(folder).split(sep))


class EndScreen(QWidget):
    """What a rater sees after their last item; `send_back_requested` asks for Send back."""

    send_back_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("endScreen")
        self.folder: Path | None = None
        self.file_name = ""
        self.heading = HeadingLabel("All done — thank you.", 1.6)
        self.heading.setObjectName("pageHeading")
        self.summary = QLabel()
        self.summary.setObjectName("endSummary")
        self.summary.setToolTip(SPENT_TIP)
        self.next_step = QLabel()
        self.next_step.setObjectName("endNextStep")
        # The folder on a line of its own. A long path breaks after its separators (not
        # selectable: a copy would carry the break marks; Send back's dialog has the folder
        # in a field), and never sets the screen's width: a 1024 px laptop keeps its window.
        self.folder_label = QLabel()
        self.folder_label.setObjectName("endFolder")
        self.folder_label.setMinimumWidth(1)
        self.send_back_button = QPushButton("Send back…")
        self.send_back_button.setObjectName("primaryButton")
        self.send_back_button.setToolTip("Make the copy of this kit to return (File ▸ Send back…)")
        self.send_back_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys stay with the screen
        self.send_back_button.setMinimumHeight(36)
        self.send_back_button.clicked.connect(lambda _c=False: self.send_back_requested.emit())
        self.hand_over = QLabel(HAND_OVER)
        self.hand_over.setObjectName("endHandOver")
        self.revise = QLabel(REVISE)
        self.revise.setObjectName("mutedLabel")
        # A column of reading width in the middle: lines across a wide window are hard to read.
        column = QWidget()
        column.setMaximumWidth(COLUMN_WIDTH)
        inner = QVBoxLayout(column)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.setSpacing(0)
        labels = (
            self.heading, self.summary, self.next_step, self.folder_label, self.hand_over,
            self.revise,
        )  # fmt: skip
        for label in labels:
            label.setWordWrap(True)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        inner.addWidget(self.heading)
        inner.addSpacing(8)
        inner.addWidget(self.summary)
        inner.addSpacing(18)
        inner.addWidget(self.next_step)
        # A kit's part (the folder, Send back, whom to give the file) hides as one, its
        # spacing with it.
        self.kit_part = QWidget()
        kit = QVBoxLayout(self.kit_part)
        kit.setContentsMargins(0, 6, 0, 0)
        kit.setSpacing(0)
        kit.addWidget(self.folder_label)
        kit.addSpacing(12)
        kit.addWidget(self.send_back_button, 0, Qt.AlignmentFlag.AlignCenter)
        kit.addSpacing(12)
        kit.addWidget(self.hand_over)
        inner.addWidget(self.kit_part)
        inner.addSpacing(22)
        inner.addWidget(self.revise)
        # Stretches beside it, not an alignment: aligned, the column would shrink to its
        # labels' narrowest hint and cut their wrapped lines.
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(column, 100)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 0, 24, 0)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        self.set_send_back(None)

    def set_send_back(self, folder: Path | None, file_name: str = "") -> None:
        """A rater kit: offer Send back, saying where the copy (`file_name`) goes; None: the
        lead's own study."""
        self.folder, self.file_name = folder, file_name
        self.kit_part.setVisible(folder is not None)
        if folder is None:
            self.next_step.setText(LEAD_NEXT)
            self.folder_label.setText("")
            return
        self.next_step.setText(
            "Now send your ratings back to your study lead. Send back puts a copy of this "
            f"kit, {file_name}, with every rating in it, into this folder (you can choose "
            "another one there):"
        )
        self.folder_label.setText(f"<b>{breakable_path(folder)}</b>")

    def show_standing(self, standing: Standing, nouns: str = "items") -> None:
        self.summary.setText(end_summary(standing, nouns))
